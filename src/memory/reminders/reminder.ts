/**
 * A reminder as it is delivered, and the one interface every delivery target implements.
 * Targets: a webhook (webhook-sink.ts), a callback (`createCallbackSink`), and the in-process
 * hub an HTTP server streams as server-sent events (hub.ts).
 */
import type { Task } from '../model.js';

/** One reminder for one task coming due. */
export interface Reminder {
  /**
   * Delivery key `<taskId>@<dueAtMs>`: the same on every retry of this reminder and different
   * after the task is rescheduled. Delivery is at-least-once, so receivers de-duplicate on it.
   */
  id: string;
  userId: string;
  /** The task as it is now (still open, still due at `dueAtMs`). */
  task: Pick<Task, 'id' | 'title' | 'status' | 'priority' | 'dueAtMs' | 'duePhrase' | 'projectId'>;
  /** When the task is due, Unix ms. */
  dueAtMs: number;
  /** The reminder text, built from the rebuilt context (offline responder or the user's LLM). */
  text: string;
  /** Whether the due time had passed when this attempt was made. */
  overdue: boolean;
  /** Delivery attempt, 1-based. */
  attempt: number;
  /** When this attempt was made, Unix ms. */
  sentAtMs: number;
}

/** The JSON a webhook receives and an SSE `data:` line carries. */
export interface ReminderJson {
  type: 'reminder';
  id: string;
  userId: string;
  text: string;
  /** Due instant, ISO-8601 UTC. */
  due: string;
  dueAtMs: number;
  overdue: boolean;
  attempt: number;
  /** ISO-8601 UTC. */
  sentAt: string;
  task: Reminder['task'];
}

/** The wire form of a reminder. */
export function reminderJson(reminder: Reminder): ReminderJson {
  return {
    type: 'reminder',
    id: reminder.id,
    userId: reminder.userId,
    text: reminder.text,
    due: new Date(reminder.dueAtMs).toISOString(),
    dueAtMs: reminder.dueAtMs,
    overdue: reminder.overdue,
    attempt: reminder.attempt,
    sentAt: new Date(reminder.sentAtMs).toISOString(),
    task: reminder.task,
  };
}

/** Where reminders go. `deliver` resolves once the target has taken the reminder, throws if not. */
export interface ReminderSink {
  /** Short description for reports ("webhook https://example.com", "callback", "sse hub"). */
  readonly name: string;
  deliver(reminder: Reminder): Promise<void>;
}

/** A sink that hands each reminder to `fn` (delivered when `fn` resolves). */
export function createCallbackSink(fn: (reminder: Reminder) => void | Promise<void>, name = 'callback'): ReminderSink {
  return { name, deliver: async (reminder) => void (await fn(reminder)) };
}
