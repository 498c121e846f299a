/** `ctxvm serve`: the HTTP API and the web console (/console/) on loopback by default, until SIGINT or SIGTERM. */
import { existsSync } from 'node:fs';
import { waitForStopSignal } from '../stop-signal.js';
import type { Command } from 'commander';
import { UsageError } from '../../errors.js';
import type { CommandContext } from '../io.js';
import { withJson } from '../command-kit.js';
import { defaultZoneOption, positiveInt } from '../memory-options.js';
import { PACKAGE_VERSION } from '../version.js';
import { reminderSettings } from '../serve-reminders.js';
import { servePrimary, WORKER_ENV, WORKER_NO_ENV, waitForWorkerStop } from './serve-cluster.js';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Parses `--port`: 0..65535 (0: any free port). */
export function portOption(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`--port must be 0..65535, got ${JSON.stringify(value)}`);
  return n;
}

/** Options of `ctxvm serve` as commander parses them. */
export interface ServeOptions {
  port?: number;
  host: string;
  logContent?: boolean;
  logLevel: string;
  maxBody?: number;
  publicMetrics?: boolean;
  budget?: number;
  tz?: string;
  json?: boolean;
  reminders?: boolean;
  reminderWebhook?: string;
  reminderLead?: number;
  reminderInterval?: number;
  workers?: number;
  cacheReads?: boolean;
  refreshAhead: boolean;
}


export function registerServe(program: Command, ctx: CommandContext): void {
  withJson(program.command('serve'))
    .description('serve the HTTP API (memory per user with API keys, sessions for admin keys, /metrics, /openapi.json) and the web console at /console/ until interrupted')
    .option('--port <port>', 'TCP port, 0 for any free one (default 8787)', portOption)
    .option('--host <host>', 'interface to bind (0.0.0.0 only behind a TLS proxy)', '127.0.0.1')
    .option('--log-content', 'put message text, queries and replies in the request log (off by default)')
    .option('--log-level <level>', `request log level: ${LEVELS.join(', ')}`, 'info')
    .option('--max-body <bytes>', 'largest request body, bytes (default 1048576)', positiveInt('--max-body'))
    .option('--public-metrics', 'serve /metrics without a key (default: admin keys only)')
    .option('--budget <tokens>', 'default context budget (default 2000)', positiveInt('--budget'))
    .option('--tz <zone>', "time zone of users who have not stated one (default: this machine's)")
    .option('--no-reminders', 'do not run the reminder scheduler (default: reminders of tasks coming due stream at /v1/users/{user}/reminders/stream)')
    .option('--reminder-webhook <url>', 'deliver reminders to this webhook instead of the SSE streams (signed when CTXVM_WEBHOOK_SECRET is set)')
    .option('--reminder-lead <minutes>', 'remind this many minutes before the due time (default 15)', positiveInt('--reminder-lead'))
    .option('--reminder-interval <seconds>', 'seconds between reminder scans (default 30)', positiveInt('--reminder-interval'))
    .option('--cache-reads', "cache each user's per-turn memory reads in the hot tier, with SQLite and the in-process hot tier too (default: only with Redis or PostgreSQL, where a cached read saves a round trip; a SQLite read costs less than the cache)")
    .option('--no-refresh-ahead', 'do not rebuild the questions a user asks most in the background after their memory changes (default: on wherever reads are cached, so those requests are served from the hot tier)')
    .option('--workers <n>', 'processes serving the port (node:cluster, default 1); each opens its own database connection, the reminder scheduler runs once, in the primary', positiveInt('--workers'))
    .action(async (opts: ServeOptions) => {
      if (!(LEVELS as readonly string[]).includes(opts.logLevel)) throw new UsageError(`--log-level must be one of ${LEVELS.join(', ')}`);
      const { default: cluster } = await import('node:cluster');
      const worker = cluster.isWorker && ctx.io.env[WORKER_ENV] === '1';
      if (!worker && (opts.workers ?? 1) > 1) return servePrimary(opts, ctx, opts.workers!);
      return serveProcess(opts, ctx, worker);
    });
}

/** One serving process: the whole server (default), or a worker of `--workers N`. */
async function serveProcess(opts: ServeOptions, ctx: CommandContext, worker: boolean): Promise<void> {
  const [{ openServerServices }, { createHttpApp }, { listen }, { createServerLogger }, { defaultConsoleDir }, { createLlmFromEnv }, { startServerReminders }] = await Promise.all([
    import('../../server/open-services.js'),
    import('../../server/http.js'),
    import('../../server/serve.js'),
    import('../../server/logger.js'),
    import('../../server/console-static.js'),
    import('../../llm/from-env.js'),
    import('../../server/server-reminders.js'),
  ]);
  const { createReminderHub } = await import('../../memory/reminders/hub.js');
  const { bridgeWorkerReminders } = await import('../../server/cluster-reminders.js');
  // replies (and reminder texts) from the LLM the environment configures, else offline
  const configured = createLlmFromEnv(ctx.io.env);
  const logger = createServerLogger({ level: opts.logLevel as (typeof LEVELS)[number] });
  const services = await openServerServices({
    config: ctx.config(),
    env: ctx.io.env,
    timeZone: defaultZoneOption(opts.tz),
    ...(opts.budget !== undefined ? { budgetTokens: opts.budget } : {}),
    ...(configured.name !== 'offline' ? { llm: configured.llm } : {}),
    hotLogger: { error: (m, d) => logger.error(d ?? {}, m), warn: (m, d) => logger.warn(d ?? {}, m), info: (m, d) => logger.info(d ?? {}, m) },
    onArchiveError: (error) => logger.warn({ err: (error as Error)?.message ?? String(error) }, 'cold archive flush failed; the turns stay queued and are retried'),
    ...(worker ? { multiProcess: true } : {}),
    ...(opts.cacheReads ? { cacheReads: true } : {}),
    ...(opts.refreshAhead === false ? { refreshAhead: false } : {}),
  });
  // A worker streams reminders the primary's scheduler sends it; it schedules nothing itself.
  const workerHub = worker && opts.reminders !== false && !opts.reminderWebhook ? createReminderHub() : undefined;
  const unbridge = workerHub ? bridgeWorkerReminders(workerHub) : undefined;
  const reminders =
    opts.reminders === false || worker
      ? undefined
      : startServerReminders({ store: services.store, manager: services.manager, db: services.db, ...reminderSettings(opts, ctx.io.env, configured, logger) });
  try {
    const hub = workerHub ?? (reminders && !opts.reminderWebhook ? reminders.hub : undefined);
    const { app } = createHttpApp(hub ? { ...services, reminders: hub } : services, {
      logger,
      version: PACKAGE_VERSION,
      logContent: opts.logContent === true,
      publicMetrics: opts.publicMetrics === true,
      ...(opts.maxBody !== undefined ? { maxBodyBytes: opts.maxBody } : {}),
      ...(worker ? { worker: Number(ctx.io.env[WORKER_NO_ENV]) } : {}),
    });
    const server = await listen(app, { host: opts.host, ...(opts.port !== undefined ? { port: opts.port } : {}) });
    if (worker) {
      process.send?.({ type: 'ctxvm:listening', url: server.url, port: server.port, host: server.host });
      await waitForWorkerStop();
      await server.close();
      return;
    }
    const consoleUrl = `${server.url}/console/`;
    if (opts.json) ctx.printJson({ url: server.url, port: server.port, host: server.host, console: consoleUrl });
    ctx.note(`ctxvm: listening on ${server.url} (Ctrl-C stops)`);
    if (configured.name !== 'offline') ctx.note(`ctxvm: replies from ${configured.name} (${configured.model})`);
    if (reminders) ctx.note(`ctxvm: reminders: ${reminders.target === 'sse hub' ? `${server.url}/v1/users/{user}/reminders/stream (server-sent events)` : reminders.target}`);
    ctx.note(`ctxvm: console: ${consoleUrl}${existsSync(defaultConsoleDir()) ? '' : ' (not built: run `npm run build`)'}`);
    const signal = await waitForStopSignal();
    ctx.note(`ctxvm: ${signal}: finishing in-flight requests`);
    await reminders?.stop();
    await server.close();
  } finally {
    unbridge?.();
    await reminders?.stop();
    await services.close();
    // the IPC channel would keep a finished worker alive
    if (worker && process.connected) process.disconnect();
  }
}
