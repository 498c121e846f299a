/** Options of the reminder scheduler, their defaults (declared as data) and their checks. */
import type { Clock } from '../../core/clock.js';
import { UsageError } from '../../errors.js';
import type { LlmCallback } from '../../llm/llm.js';
import type { MemoryManager } from '../manager.js';
import type { MemoryStore } from '../memory-store.js';
import type { ReminderLedger } from './ledger.js';
import type { ReminderSink } from './reminder.js';
import type { TickReport } from './scheduler.js';

/** Options of `createReminderScheduler`. */
export interface ReminderSchedulerOptions {
  /** The warm memory store; must implement `dueTasks` (the SQL store does). */
  store: MemoryStore;
  /** The memory manager over the same store (rebuilds the context of each reminder). */
  manager: MemoryManager;
  /** The delivery ledger over the same warm database (`createReminderLedger`). */
  ledger: ReminderLedger;
  /** Where reminders go: a webhook, a callback, the SSE hub. */
  sink: ReminderSink;
  /** The user's LLM for the reminder text (default: the offline reminder responder). */
  llm?: LlmCallback;
  clock?: Clock;
  /** Remind this long before the due time, ms (default 15 minutes). */
  leadMs?: number;
  /** Also remind of tasks overdue by at most this much that got no reminder yet, ms (default 24 h; Infinity = any age). */
  overdueWindowMs?: number;
  /** Time between ticks once started, ms (default 30 s). */
  intervalMs?: number;
  /** Rows read per query, and due tasks per scan page (default 100). */
  batchSize?: number;
  /** Due tasks looked at per tick at most (default 10 000). */
  maxScan?: number;
  /** Attempts per reminder before it is marked failed (default 8). */
  maxAttempts?: number;
  /** Wait before the second attempt, ms; doubles per attempt (default 60 s). */
  retryBaseMs?: number;
  /** Longest wait between attempts, ms (default 1 h). */
  retryMaxMs?: number;
  /** How long a claimed reminder is reserved for its sender, ms (default 5 min); must outlast one delivery. */
  leaseMs?: number;
  /** Context budget of a reminder, tokens (default: the manager's). */
  budgetTokens?: number;
  /** Called with each report when running on the timer (`start`). */
  onTick?: (report: TickReport) => void;
  /** Called with errors of timer-driven ticks (a tick that failed as a whole, e.g. the database). */
  onError?: (error: unknown) => void;
}

/** The scheduler's limits with defaults applied. */
export interface ReminderSettings {
  leadMs: number;
  overdueWindowMs: number;
  intervalMs: number;
  batchSize: number;
  maxScan: number;
  maxAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
  leaseMs: number;
  budgetTokens: number | undefined;
}

/** Defaults, declared as data. */
export const REMINDER_DEFAULTS: Readonly<Omit<ReminderSettings, 'budgetTokens'>> = Object.freeze({
  leadMs: 15 * 60_000,
  overdueWindowMs: 24 * 3_600_000,
  intervalMs: 30_000,
  batchSize: 100,
  maxScan: 10_000,
  maxAttempts: 8,
  retryBaseMs: 60_000,
  retryMaxMs: 3_600_000,
  leaseMs: 5 * 60_000,
});

/** Applies defaults and checks every limit; throws a UsageError naming the bad option. */
export function checkSchedulerOptions(options: ReminderSchedulerOptions): ReminderSettings {
  if (!options || !options.store || !options.manager || !options.ledger || !options.sink) {
    throw new UsageError('createReminderScheduler: store, manager, ledger and sink are required');
  }
  const pick = (name: keyof typeof REMINDER_DEFAULTS, min: number, allowInfinity = false): number => {
    const value = options[name] ?? REMINDER_DEFAULTS[name];
    const ok = typeof value === 'number' && value >= min && (Number.isFinite(value) || (allowInfinity && value === Infinity));
    if (!ok) throw new UsageError(`reminders: ${name} must be a number >= ${min}${allowInfinity ? ' (or Infinity)' : ''}, got ${String(value)}`);
    return value;
  };
  const integer = (name: 'batchSize' | 'maxScan' | 'maxAttempts'): number => {
    const value = pick(name, 1);
    if (!Number.isInteger(value)) throw new UsageError(`reminders: ${name} must be an integer`);
    return value;
  };
  return {
    leadMs: pick('leadMs', 0),
    overdueWindowMs: pick('overdueWindowMs', 0, true),
    intervalMs: pick('intervalMs', 1),
    batchSize: integer('batchSize'),
    maxScan: integer('maxScan'),
    maxAttempts: integer('maxAttempts'),
    retryBaseMs: pick('retryBaseMs', 0),
    retryMaxMs: pick('retryMaxMs', 0),
    leaseMs: pick('leaseMs', 1),
    budgetTokens: options.budgetTokens,
  };
}
