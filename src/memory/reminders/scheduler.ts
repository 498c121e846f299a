/**
 * The reminder scheduler. Each tick:
 *
 *   1. scan — open tasks of every user due within `leadMs` from now, and overdue ones up to
 *      `overdueWindowMs` old (`MemoryStore.dueTasks`), are recorded in the ledger as pending
 *      (one row per task and due instant; already-recorded ones are left alone);
 *   2. deliver — each pending row whose next attempt is due is claimed (a lease), its task
 *      re-read (completed, deleted or rescheduled → cancelled), its text built through the
 *      rebuild path (and kept in the ledger), and it is handed to the sink; success marks it delivered, failure
 *      schedules a retry with exponential backoff, until `maxAttempts`.
 *
 * Delivery is at-least-once: a row is marked delivered only after the sink took it, so a crash
 * between the two sends it again (same id — receivers de-duplicate). A delivered row is never
 * sent again. Everything lives in the warm store, so a restarted scheduler carries on.
 */
import { systemClock, type Clock } from '../../core/clock.js';
import { UsageError } from '../../errors.js';
import type { LlmCallback } from '../../llm/llm.js';
import type { MemoryManager } from '../manager.js';
import type { DueTask, MemoryStore } from '../memory-store.js';
import { isOpenStatus } from '../model.js';
import { composeReminderText } from './compose.js';
import type { DeliveryRecord, ReminderLedger } from './ledger.js';
import type { Reminder, ReminderSink } from './reminder.js';
import { checkSchedulerOptions, type ReminderSchedulerOptions, type ReminderSettings } from './scheduler-options.js';

export type { ReminderSchedulerOptions } from './scheduler-options.js';

/** What happened to one reminder in a tick. */
export interface ReminderOutcome {
  /** Delivery key `<taskId>@<dueAtMs>`. */
  id: string;
  userId: string;
  taskId: string;
  title: string | null;
  dueAtMs: number;
  /** delivered; retrying (failed, will be tried again); failed (gave up); cancelled (task closed or moved). */
  status: 'delivered' | 'retrying' | 'failed' | 'cancelled';
  /** Attempts so far, this one included (0 for cancelled before any attempt). */
  attempts: number;
  text: string | null;
  /** Where the text came from. */
  textSource?: 'llm' | 'offline';
  /** Why the LLM was not used, when the text fell back to the offline responder. */
  fallbackReason?: string;
  /** Why delivery failed or the reminder was cancelled. */
  error?: string;
  /** When the next attempt is due, Unix ms (retrying only). */
  nextAttemptAtMs?: number;
}

/** The result of one tick. */
export interface TickReport {
  /** The tick's instant, Unix ms. */
  atMs: number;
  /** Due tasks the scan saw. */
  scanned: number;
  /** Of those, reminders recorded for the first time. */
  recorded: number;
  outcomes: ReminderOutcome[];
  /** Reminders still pending after the tick (retries and ones not yet due for another try). */
  pending: number;
  /** True when `stop()` cut the tick short. */
  stopped: boolean;
}

/** A running (or runnable) scheduler. */
export interface ReminderScheduler {
  /** Runs one scan-and-deliver pass now. Ticks never overlap: a call during a tick waits for it. */
  tick(): Promise<TickReport>;
  /** Starts ticking every `intervalMs` (the first tick at once). */
  start(): void;
  /** Stops after the delivery in progress; resolves when the scheduler is idle. */
  stop(): Promise<void>;
  readonly running: boolean;
}

/** Creates a scheduler over a memory store (with `dueTasks`), its manager, a ledger and a sink. */
export function createReminderScheduler(options: ReminderSchedulerOptions): ReminderScheduler {
  const settings = checkSchedulerOptions(options);
  const { store, manager, ledger, sink } = options;
  const clock: Clock = options.clock ?? systemClock;
  const dueTasks = store.dueTasks?.bind(store);
  if (!dueTasks) throw new UsageError(`reminders: the ${store.driver} memory store cannot list due tasks (no dueTasks)`);
  let stopping = false;
  let running = false;
  let current: Promise<TickReport> | undefined;
  let timer: NodeJS.Timeout | undefined;

  async function runTick(): Promise<TickReport> {
    const atMs = clock.now();
    const { scanned, recorded } = await scan(dueTasks!, ledger, atMs, settings);
    const outcomes: ReminderOutcome[] = [];
    let stopped = false;
    outer: for (;;) {
      const rows = await ledger.duePending(clock.now(), settings.batchSize);
      if (rows.length === 0) break;
      let claimedAny = false;
      for (const row of rows) {
        if (stopping) {
          stopped = true;
          break outer;
        }
        if (!(await ledger.claim(row, clock.now() + settings.leaseMs))) continue;
        claimedAny = true;
        outcomes.push(await deliverOne(row, { manager, ledger, sink, clock, settings, ...(options.llm ? { llm: options.llm } : {}) }));
      }
      if (!claimedAny || rows.length < settings.batchSize) break;
    }
    const pending = (await ledger.counts()).pending;
    return { atMs, scanned, recorded, outcomes, pending, stopped };
  }

  function tick(): Promise<TickReport> {
    const previous = current ?? Promise.resolve(undefined);
    const next = previous.catch(() => undefined).then(runTick);
    current = next;
    void next.finally(() => {
      if (current === next) current = undefined;
    }).catch(() => undefined);
    return next;
  }

  function schedule(delayMs: number): void {
    timer = setTimeout(() => {
      timer = undefined;
      tick()
        .then((report) => options.onTick?.(report))
        .catch((error: unknown) => options.onError?.(error))
        .finally(() => {
          if (running && !stopping) schedule(settings.intervalMs);
        });
    }, delayMs);
  }

  return {
    tick,
    start() {
      if (running) return;
      running = true;
      stopping = false;
      schedule(0);
    },
    async stop() {
      stopping = true;
      running = false;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await current?.catch(() => undefined);
      stopping = false;
    },
    get running() {
      return running;
    },
  };
}

/** Pages through the due tasks and records reminders for them. */
async function scan(dueTasks: NonNullable<MemoryStore['dueTasks']>, ledger: ReminderLedger, atMs: number, s: ReminderSettings): Promise<{ scanned: number; recorded: number }> {
  let scanned = 0;
  let recorded = 0;
  let after: DueTask | undefined;
  while (scanned < s.maxScan) {
    const page = await dueTasks(atMs + s.leadMs, s.batchSize, {
      ...(Number.isFinite(s.overdueWindowMs) ? { sinceMs: atMs - s.overdueWindowMs } : {}),
      ...(after ? { after: { dueAtMs: after.task.dueAtMs!, userId: after.userId, taskId: after.task.id } } : {}),
    });
    scanned += page.length;
    recorded += await ledger.record(
      page.map((d) => ({ userId: d.userId, taskId: d.task.id, dueAtMs: d.task.dueAtMs! })),
      atMs,
    );
    if (page.length < s.batchSize) break;
    after = page[page.length - 1];
  }
  return { scanned, recorded };
}

interface DeliverContext {
  manager: MemoryManager;
  ledger: ReminderLedger;
  sink: ReminderSink;
  clock: Clock;
  settings: ReminderSettings;
  llm?: LlmCallback;
}

/** One claimed row: check the task, fix the text, hand it to the sink, record the result. */
async function deliverOne(row: DeliveryRecord, c: DeliverContext): Promise<ReminderOutcome> {
  const base = { id: row.key, userId: row.userId, taskId: row.taskId, dueAtMs: row.dueAtMs };
  const task = await c.manager.user(row.userId).getTask(row.taskId);
  if (!task || !isOpenStatus(task.status) || task.dueAtMs !== row.dueAtMs) {
    const reason = !task ? 'task deleted' : !isOpenStatus(task.status) ? `task is ${task.status}` : 'task rescheduled';
    await c.ledger.cancel(row, reason);
    return { ...base, title: task?.title ?? null, status: 'cancelled', attempts: row.attempts, text: row.text, error: reason };
  }
  const nowMs = c.clock.now();
  let text = row.text;
  let textSource: ReminderOutcome['textSource'];
  let fallbackReason: string | undefined;
  const attempts = row.attempts + 1;
  try {
    // Composed on every attempt, so a reminder that arrives late says so ("overdue by 2 h")
    // instead of repeating the "in 5 min" of its first try; the id stays the same.
    const composed = await composeReminderText({ manager: c.manager, task, nowMs, ...(c.llm ? { llm: c.llm } : {}), ...(c.settings.budgetTokens ? { budgetTokens: c.settings.budgetTokens } : {}) });
    text = composed.text;
    textSource = composed.source;
    fallbackReason = composed.fallbackReason;
    await c.ledger.setText(row, text);
    const reminder: Reminder = {
      id: row.key,
      userId: row.userId,
      task: { id: task.id, title: task.title, status: task.status, priority: task.priority, dueAtMs: task.dueAtMs, duePhrase: task.duePhrase, projectId: task.projectId },
      dueAtMs: row.dueAtMs,
      text,
      overdue: row.dueAtMs <= nowMs,
      attempt: attempts,
      sentAtMs: nowMs,
    };
    await c.sink.deliver(reminder);
  } catch (error) {
    const message = (error as Error)?.message ?? String(error);
    const extra = { ...(textSource ? { textSource } : {}), ...(fallbackReason ? { fallbackReason } : {}) };
    if (attempts >= c.settings.maxAttempts) {
      await c.ledger.failed(row, attempts, message);
      return { ...base, title: task.title, status: 'failed', attempts, text, error: message, ...extra };
    }
    const nextAttemptAtMs = c.clock.now() + Math.min(c.settings.retryMaxMs, c.settings.retryBaseMs * 2 ** (attempts - 1));
    await c.ledger.retryLater(row, attempts, nextAttemptAtMs, message);
    return { ...base, title: task.title, status: 'retrying', attempts, text, error: message, nextAttemptAtMs, ...extra };
  }
  await c.ledger.delivered(row, attempts, c.clock.now());
  return { ...base, title: task.title, status: 'delivered', attempts, text, textSource, ...(fallbackReason ? { fallbackReason } : {}) };
}
