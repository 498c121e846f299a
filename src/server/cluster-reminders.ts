/**
 * Reminders across the processes of `ctxvm serve --workers N` (node:cluster). The scheduler runs
 * in the primary only, so a reminder is scanned and ledgered once; the SSE streams live in the
 * workers, wherever a browser's connection landed. The primary's sink asks every worker to hand
 * the reminder to its local hub and counts it delivered when at least one worker's hub had a
 * listener (the same rule as the in-process hub, so a reminder nobody is listening to stays
 * pending and is retried).
 */
import { randomBytes } from 'node:crypto';
import { CtxvmError } from '../errors.js';
import type { ReminderHub } from '../memory/reminders/hub.js';
import type { Reminder, ReminderSink } from '../memory/reminders/reminder.js';

/** A message on the cluster's IPC channel about reminders. */
type ReminderMessage =
  | { type: 'ctxvm:reminder'; id: string; reminder: Reminder }
  | { type: 'ctxvm:reminder-ack'; id: string; delivered: boolean; error?: string };

/** The parts of a cluster worker (as the primary sees it) this module uses. */
export interface ReminderPeer {
  send(message: unknown): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
  isConnected(): boolean;
}

/** Options of `createClusterReminderSink`. */
export interface ClusterReminderSinkOptions {
  /** The workers alive now. */
  peers(): readonly ReminderPeer[];
  /** How long to wait for a worker's answer, ms (default 5 000); no answer counts as not delivered. */
  timeoutMs?: number;
}

const isMessage = (m: unknown): m is ReminderMessage => typeof m === 'object' && m !== null && typeof (m as { type?: unknown }).type === 'string' && (m as { type: string }).type.startsWith('ctxvm:reminder');

/** The primary's sink: fans each reminder out to the workers' hubs. */
export function createClusterReminderSink(options: ClusterReminderSinkOptions): ReminderSink {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const ask = (peer: ReminderPeer, reminder: Reminder): Promise<{ delivered: boolean; error?: string }> =>
    new Promise((resolve) => {
      const id = randomBytes(8).toString('hex');
      const done = (answer: { delivered: boolean; error?: string }) => {
        clearTimeout(timer);
        peer.off('message', onMessage);
        resolve(answer);
      };
      const onMessage = (m: unknown) => {
        if (isMessage(m) && m.type === 'ctxvm:reminder-ack' && m.id === id) done({ delivered: m.delivered, ...(m.error ? { error: m.error } : {}) });
      };
      const timer = setTimeout(() => done({ delivered: false, error: 'no answer from the worker' }), timeoutMs);
      peer.on('message', onMessage);
      try {
        if (!peer.isConnected() || !peer.send({ type: 'ctxvm:reminder', id, reminder } satisfies ReminderMessage)) done({ delivered: false, error: 'worker not connected' });
      } catch (error) {
        done({ delivered: false, error: (error as Error)?.message ?? String(error) });
      }
    });

  return {
    name: 'sse hub (all workers)',
    async deliver(reminder) {
      const answers = await Promise.all(options.peers().map((p) => ask(p, reminder)));
      if (answers.some((a) => a.delivered)) return;
      throw new CtxvmError('E_UNAVAILABLE', `sse hub: nobody is listening to reminders of user ${JSON.stringify(reminder.userId)} in any worker`, {
        hint: 'the reminder stays pending and is sent when a client subscribes',
      });
    },
  };
}

/** In a worker: hands reminders from the primary to the local hub and answers; returns the function that stops. */
export function bridgeWorkerReminders(hub: ReminderHub, channel: Pick<NodeJS.Process, 'on' | 'off' | 'send'> = process): () => void {
  const onMessage = (m: unknown) => {
    if (!isMessage(m) || m.type !== 'ctxvm:reminder') return;
    const answer = (delivered: boolean, error?: string) => {
      try {
        channel.send?.({ type: 'ctxvm:reminder-ack', id: m.id, delivered, ...(error ? { error } : {}) } satisfies ReminderMessage);
      } catch {
        // the primary is gone: it counts the missing answer as not delivered
      }
    };
    hub.deliver(m.reminder).then(
      () => answer(true),
      (error: unknown) => answer(false, (error as Error)?.message ?? String(error)),
    );
  };
  channel.on('message', onMessage);
  return () => void channel.off('message', onMessage);
}
