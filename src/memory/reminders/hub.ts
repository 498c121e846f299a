/**
 * The in-process reminder hub: a pub/sub the HTTP server subscribes to and streams to browsers
 * as server-sent events (`GET /reminders/stream?user=…` → `formatSseEvent` per reminder). As a
 * sink it counts a reminder delivered only when at least one listener of that user (or of all
 * users) took it; with nobody listening it throws, so the ledger keeps the reminder pending and
 * sends it when someone connects. The SSE event id is the delivery key, so a client that
 * reconnects can ignore a reminder it already showed.
 */
import { CtxvmError } from '../../errors.js';
import { reminderJson, type Reminder, type ReminderJson, type ReminderSink } from './reminder.js';

/** Receives reminders; a listener that throws did not take the reminder. */
export type ReminderListener = (reminder: ReminderJson) => void;

/** The pub/sub the HTTP server streams from; also a sink the scheduler delivers to. */
export interface ReminderHub extends ReminderSink {
  /**
   * Listens to the reminders of `userId`, or of every user when `userId` is null; returns the
   * function that stops listening (safe to call twice).
   */
  subscribe(userId: string | null, listener: ReminderListener): () => void;
  /** Listeners of `userId` plus those of every user; all listeners when `userId` is omitted. */
  listenerCount(userId?: string): number;
}

/** Creates an empty hub. */
export function createReminderHub(): ReminderHub {
  const byUser = new Map<string | null, Set<ReminderListener>>();
  const listenersFor = (userId: string) => [...(byUser.get(userId) ?? []), ...(byUser.get(null) ?? [])];
  return {
    name: 'sse hub',
    subscribe(userId, listener) {
      let set = byUser.get(userId);
      if (!set) byUser.set(userId, (set = new Set()));
      // wrap so the same function can subscribe twice and unsubscribe each independently
      const entry: ReminderListener = (r) => listener(r);
      set.add(entry);
      return () => {
        set.delete(entry);
        if (set.size === 0 && byUser.get(userId) === set) byUser.delete(userId);
      };
    },
    listenerCount(userId) {
      if (userId !== undefined) return listenersFor(userId).length;
      let n = 0;
      for (const set of byUser.values()) n += set.size;
      return n;
    },
    async deliver(reminder: Reminder) {
      const listeners = listenersFor(reminder.userId);
      if (listeners.length === 0) {
        throw new CtxvmError('E_UNAVAILABLE', `sse hub: nobody is listening to reminders of user ${JSON.stringify(reminder.userId)}`, {
          hint: 'the reminder stays pending and is sent when a client subscribes',
        });
      }
      const json = reminderJson(reminder);
      let taken = 0;
      for (const listener of listeners) {
        try {
          listener(json);
          taken++;
        } catch {
          // one broken stream must not keep the reminder from the others
        }
      }
      if (taken === 0) throw new CtxvmError('E_UNAVAILABLE', `sse hub: every listener of user ${JSON.stringify(reminder.userId)} failed`);
    },
  };
}

/** One reminder as a server-sent event (`id`, `event: reminder`, one `data:` line, blank line). */
export function formatSseEvent(reminder: ReminderJson): string {
  // JSON.stringify never emits a raw newline, so one data line is enough
  return `id: ${reminder.id}\nevent: reminder\ndata: ${JSON.stringify(reminder)}\n\n`;
}
