/**
 * Reminder routes: server-sent events from the reminder hub the server's scheduler delivers to.
 * `GET /v1/users/{user}/reminders/stream` streams one user's reminders (a key of that user, or
 * admin); `GET /v1/reminders/stream` streams every user's (admin). Each event's id is the
 * delivery key, so a client that reconnects can skip a reminder it has already shown (delivery
 * is at-least-once). A comment line every `heartbeatMs` keeps proxies from closing idle streams.
 */
import type { ReminderHub } from '../memory/reminders/hub.js';
import { formatSseEvent } from '../memory/reminders/hub.js';
import { defineRoute, type RouteDef } from './route.js';
import { UserParams } from './schemas.js';

/** What the reminder routes need. */
export interface ReminderRouteDeps {
  hub: ReminderHub;
  /** Interval of keep-alive comments, ms (default 15 000). */
  heartbeatMs?: number;
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  // nginx and friends buffer responses unless told otherwise
  'x-accel-buffering': 'no',
};

/** A streaming response that forwards the hub's reminders for `userId` (null: every user). */
export function reminderStream(hub: ReminderHub, userId: string | null, heartbeatMs = 15_000): Response {
  const encoder = new TextEncoder();
  let stop = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      // the first bytes go out at once, so the client knows it is subscribed
      controller.enqueue(encoder.encode(`: subscribed to ${userId === null ? 'every user' : 'one user'}\nretry: 5000\n\n`));
      const unsubscribe = hub.subscribe(userId, (reminder) => {
        // throws once the stream is closed: the hub then counts this listener as not taking it
        controller.enqueue(encoder.encode(formatSseEvent(reminder)));
      });
      const timer = setInterval(() => {
        try {
          controller.enqueue(encoder.encode(': keep-alive\n\n'));
        } catch {
          stop();
        }
      }, heartbeatMs);
      timer.unref();
      stop = () => {
        clearInterval(timer);
        unsubscribe();
      };
    },
    cancel() {
      stop();
    },
  });
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}

/** The reminder routes. */
export function reminderRoutes({ hub, heartbeatMs }: ReminderRouteDeps): RouteDef[] {
  const response = { description: 'server-sent events: `event: reminder`, `id: <delivery key>`, one JSON `data:` line each', contentType: 'text/event-stream' };
  return [
    defineRoute({
      method: 'get',
      path: '/v1/users/{user}/reminders/stream',
      operationId: 'streamUserReminders',
      summary: "Stream the user's reminders of tasks coming due as server-sent events (at-least-once; de-duplicate on the event id).",
      tag: 'memory',
      access: 'user',
      params: UserParams,
      response,
      async handler({ params }) {
        return { response: reminderStream(hub, params.user, heartbeatMs) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/reminders/stream',
      operationId: 'streamAllReminders',
      summary: "Stream every user's reminders as server-sent events (admin).",
      tag: 'memory',
      access: 'admin',
      response,
      async handler() {
        return { response: reminderStream(hub, null, heartbeatMs) };
      },
    }),
  ];
}
