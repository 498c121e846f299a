/**
 * The reminder scheduler of `ctxvm serve`: scans for tasks coming due and delivers each reminder
 * to a webhook when one is configured, else to the in-process hub the SSE routes stream from
 * (routes-reminders.ts). The ledger lives in the server's warm database, so a restarted server
 * resumes what was pending and never sends a delivered reminder twice.
 */
import type { Clock } from '../core/clock.js';
import type { LlmCallback } from '../llm/llm.js';
import type { MemoryManager } from '../memory/manager.js';
import type { MemoryStore } from '../memory/memory-store.js';
import { createReminderHub, type ReminderHub } from '../memory/reminders/hub.js';
import { createReminderLedger } from '../memory/reminders/ledger.js';
import type { ReminderSink } from '../memory/reminders/reminder.js';
import { createReminderScheduler, type ReminderScheduler, type TickReport } from '../memory/reminders/scheduler.js';
import { createWebhookSink } from '../memory/reminders/webhook-sink.js';
import type { SqlDatabase } from '../store/warm/sql.js';

/** Options of `startServerReminders`. */
export interface ServerRemindersOptions {
  store: MemoryStore;
  manager: MemoryManager;
  db: SqlDatabase;
  /** Writes the reminder text (default: the offline reminder text). */
  llm?: LlmCallback;
  /** Deliver to this webhook instead of the SSE hub. */
  webhook?: { url: string; secret?: string };
  /** Deliver here instead of the in-process hub when no webhook is set (`serve --workers`: the workers' hubs). */
  sink?: ReminderSink;
  leadMs?: number;
  intervalMs?: number;
  overdueWindowMs?: number;
  clock?: Clock;
  onTick?: (report: TickReport) => void;
  onError?: (error: unknown) => void;
}

/** A running reminder service. */
export interface ServerReminders {
  /** The hub SSE clients subscribe to (receives nothing when a webhook is configured). */
  hub: ReminderHub;
  scheduler: ReminderScheduler;
  /** Where reminders go, e.g. "sse hub" or "webhook https://…". */
  target: string;
  stop(): Promise<void>;
}

/** Creates the hub and the scheduler and starts ticking. */
export function startServerReminders(options: ServerRemindersOptions): ServerReminders {
  const hub = createReminderHub();
  const sink = options.webhook ? createWebhookSink({ url: options.webhook.url, ...(options.webhook.secret ? { secret: options.webhook.secret } : {}) }) : (options.sink ?? hub);
  const scheduler = createReminderScheduler({
    store: options.store,
    manager: options.manager,
    ledger: createReminderLedger(options.db),
    sink,
    ...(options.llm ? { llm: options.llm } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.leadMs !== undefined ? { leadMs: options.leadMs } : {}),
    ...(options.intervalMs !== undefined ? { intervalMs: options.intervalMs } : {}),
    ...(options.overdueWindowMs !== undefined ? { overdueWindowMs: options.overdueWindowMs } : {}),
    ...(options.onTick ? { onTick: options.onTick } : {}),
    ...(options.onError ? { onError: options.onError } : {}),
  });
  scheduler.start();
  return { hub, scheduler, target: sink.name, stop: () => scheduler.stop() };
}
