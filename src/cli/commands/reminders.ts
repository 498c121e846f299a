/**
 * `ctxvm reminders run [--once] [--webhook URL] [--json]`: remind users of tasks coming due.
 * `ctxvm reminders list [--status S] [--user U] [--json]`: the delivery ledger.
 *
 * Without `--webhook`, reminders are printed. The text comes from the LLM the environment
 * configures (CTXVM_LLM, ANTHROPIC_API_KEY, OPENAI_API_KEY/OPENAI_BASE_URL), else the offline
 * reminder responder. A webhook is signed when CTXVM_WEBHOOK_SECRET is set (kept out of argv,
 * where other users of the machine could read it).
 */
import { waitForStopSignal } from '../stop-signal.js';
import type { Command } from 'commander';
import { createFixedClock, systemClock } from '../../core/clock.js';
import { UsageError } from '../../errors.js';
import type { TimeZone } from '../../core/time-zone.js';
import { formatZonedTime } from '../../memory/format-time.js';
import type { MemoryManager } from '../../memory/manager.js';
import type { MemoryStore } from '../../memory/memory-store.js';
import type { ReminderOutcome, TickReport } from '../../memory/reminders/scheduler.js';
import type { SqlDatabase } from '../../store/warm/sql.js';
import type { CommandContext } from '../io.js';
import { openMemoryServices } from '../memory-services.js';
import { parseInstant, parseTimeZoneOption, positiveInt, requireUser } from '../memory-options.js';
import { ExitCode, EXIT_FAILED, withJson } from '../command-kit.js';

const STATUSES = ['pending', 'delivered', 'failed', 'cancelled'] as const;

interface RunOptions {
  once?: boolean;
  webhook?: string;
  json?: boolean;
  lead: number;
  interval: number;
  overdueWindow: number;
  now?: string;
  tz?: string;
}

/** Each user's zone, read once per user (or `fixed` for everyone, from `--tz`). */
function zoneLookup(manager: MemoryManager, fixed: TimeZone | undefined): (userId: string) => Promise<TimeZone> {
  const zones = new Map<string, Promise<TimeZone>>();
  return (userId) => {
    if (fixed !== undefined) return Promise.resolve(fixed);
    let zone = zones.get(userId);
    if (!zone) zones.set(userId, (zone = manager.timeZoneOf(userId)));
    return zone;
  };
}

export function registerReminders(program: Command, ctx: CommandContext): void {
  const reminders = program.command('reminders').description('remind users of tasks coming due (webhook, or printed), at least once and without duplicates');

  withJson(reminders.command('run'))
    .description('scan for tasks coming due and deliver reminders; runs until interrupted unless --once')
    .option('--once', 'one scan-and-deliver pass, then exit (1 when a delivery failed)')
    .option('--webhook <url>', 'POST each reminder as JSON here (default: print it)')
    .option('--lead <minutes>', 'remind this many minutes before the due time', positiveInt('--lead'), 15)
    .option('--interval <seconds>', 'seconds between scans when running', positiveInt('--interval'), 30)
    .option('--overdue-window <hours>', 'also remind of tasks overdue by at most this many hours', positiveInt('--overdue-window'), 24)
    .option('--now <iso>', 'pretend it is this time (with --once, for scripted runs)')
    .option('--tz <zone>', "zone of users who have not stated one, for the reminder text and the times printed (default: this machine's)")
    .action(async (opts: RunOptions) => runReminders(ctx, opts));

  withJson(reminders.command('list'))
    .description('the reminder delivery ledger, newest due first')
    .option('--status <status>', `only ${STATUSES.join(', ')}`)
    .option('--user <id>', 'only this user')
    .option('--limit <n>', 'at most this many', positiveInt('--limit'), 50)
    .option('--tz <zone>', "print due times in this zone (default: each user's stored zone, else this machine's)")
    .action(async (opts: { status?: string; user?: string; limit: number; json?: boolean; tz?: string }) => {
      if (opts.status !== undefined && !(STATUSES as readonly string[]).includes(opts.status)) {
        throw new UsageError(`--status: unknown status ${JSON.stringify(opts.status)}`, { hint: `use one of ${STATUSES.join(', ')}` });
      }
      const userId = opts.user !== undefined ? requireUser(opts.user) : undefined;
      const viewZone = opts.tz !== undefined ? parseTimeZoneOption(opts.tz) : undefined;
      const services = await openMemoryServices(ctx);
      try {
        const { createReminderLedger } = await import('../../memory/reminders/ledger.js');
        const rows = await createReminderLedger(warmDatabaseOf(services.store)).list({
          ...(opts.status ? { status: opts.status as (typeof STATUSES)[number] } : {}),
          ...(userId !== undefined ? { userId } : {}),
          limit: opts.limit,
        });
        if (opts.json) return ctx.printJson(rows);
        if (!rows.length) return ctx.print('no reminders');
        const zoneOf = zoneLookup(services.manager, viewZone);
        for (const r of rows) ctx.print(`${r.status.padEnd(9)} ${formatZonedTime(r.dueAtMs, await zoneOf(r.userId))}  ${r.userId}  ${r.taskId}  attempts ${r.attempts}${r.lastError ? `  (${r.lastError})` : ''}`);
      } finally {
        await services.close();
      }
    });
}

async function runReminders(ctx: CommandContext, opts: RunOptions): Promise<void> {
  if (opts.now !== undefined && !opts.once) throw new UsageError('--now needs --once', { hint: 'a running scheduler follows the real clock' });
  const clock = opts.now !== undefined ? createFixedClock(parseInstant(opts.now, '--now')) : systemClock;
  const [{ createReminderScheduler }, { createReminderLedger }, { createWebhookSink }, { createCallbackSink }, { createLlmFromEnv }] = await Promise.all([
    import('../../memory/reminders/scheduler.js'),
    import('../../memory/reminders/ledger.js'),
    import('../../memory/reminders/webhook-sink.js'),
    import('../../memory/reminders/reminder.js'),
    import('../../llm/from-env.js'),
  ]);
  const configured = createLlmFromEnv(ctx.io.env);
  const secret = ctx.io.env.CTXVM_WEBHOOK_SECRET || undefined;
  const sink = opts.webhook
    ? createWebhookSink({ url: opts.webhook, ...(secret ? { secret } : {}) })
    : createCallbackSink((r) => {
        if (!opts.json) ctx.print(`[${r.userId}] ${r.text}`);
      }, 'stdout');
  const services = await openMemoryServices(ctx, opts.tz !== undefined ? { timeZone: parseTimeZoneOption(opts.tz) } : {});
  const zoneOf = zoneLookup(services.manager, undefined);
  // Notes of one scan are written in order, each time in its user's zone.
  let noting: Promise<void> = Promise.resolve();
  const noteOutcomes = (report: TickReport) =>
    (noting = noting.then(async () => {
      for (const o of report.outcomes) if (o.status !== 'delivered' || opts.webhook) ctx.note(describe(o, await zoneOf(o.userId)));
    }));
  try {
    if (configured.name !== 'offline') ctx.note(`reminders: writing the text with ${configured.name} ${configured.model} (offline text if it fails)`);
    const scheduler = createReminderScheduler({
      store: services.store,
      manager: services.manager,
      ledger: createReminderLedger(warmDatabaseOf(services.store)),
      sink,
      clock,
      // the offline chat responder answers chat turns; reminders have their own offline text
      ...(configured.name !== 'offline' ? { llm: configured.llm } : {}),
      leadMs: opts.lead * 60_000,
      intervalMs: opts.interval * 1000,
      overdueWindowMs: opts.overdueWindow * 3_600_000,
      onTick: (report) => {
        if (report.outcomes.length === 0) return;
        if (opts.json) ctx.io.stdout.write(JSON.stringify(reportJson(report)) + '\n');
        else void noteOutcomes(report).catch(() => undefined);
      },
      onError: (error) => ctx.note(`reminders: scan failed: ${(error as Error)?.message ?? String(error)} (retrying at the next interval)`),
    });
    if (opts.once) {
      const report = await scheduler.tick();
      if (opts.json) ctx.printJson(reportJson(report));
      else {
        await noteOutcomes(report);
        ctx.note(`reminders: ${report.outcomes.filter((o) => o.status === 'delivered').length} delivered, ${report.pending} pending (${report.scanned} due tasks scanned)`);
      }
      if (report.outcomes.some((o) => o.status === 'retrying' || o.status === 'failed')) throw new ExitCode(EXIT_FAILED);
      return;
    }
    ctx.note(`reminders: scanning every ${opts.interval} s, ${opts.lead} min ahead, delivering to ${sink.name} (Ctrl-C stops)`);
    scheduler.start();
    const signal = await waitForStopSignal();
    ctx.note(`reminders: ${signal}: finishing the delivery in progress`);
    await scheduler.stop();
    await noting.catch(() => undefined);
  } finally {
    await services.close();
  }
}

/** The warm database under the memory store (the SQL store exposes it). */
function warmDatabaseOf(store: MemoryStore): SqlDatabase {
  const db = (store as MemoryStore & { db?: SqlDatabase }).db;
  if (!db) throw new UsageError(`reminders need the SQL memory store (this one is ${store.driver})`);
  return db;
}

function reportJson(report: TickReport) {
  return {
    at: new Date(report.atMs).toISOString(),
    scanned: report.scanned,
    recorded: report.recorded,
    delivered: report.outcomes.filter((o) => o.status === 'delivered').length,
    pending: report.pending,
    outcomes: report.outcomes.map((o) => ({ ...o, due: new Date(o.dueAtMs).toISOString() })),
  };
}

function describe(o: ReminderOutcome, zone: TimeZone): string {
  const what = `${o.userId} "${o.title ?? o.taskId}" (due ${formatZonedTime(o.dueAtMs, zone)})`;
  if (o.status === 'delivered') return `delivered ${what}`;
  if (o.status === 'retrying') return `not delivered ${what}: ${o.error}; attempt ${o.attempts}, next try ${formatZonedTime(o.nextAttemptAtMs!, zone)}`;
  if (o.status === 'failed') return `gave up on ${what} after ${o.attempts} attempts: ${o.error}`;
  return `cancelled ${what}: ${o.error}`;
}
