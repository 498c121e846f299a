/**
 * Reminders over server-sent events, through a real loopback socket and a real SQLite store: the
 * server's scheduler (fixed clock) finds a task coming due, builds the reminder and delivers it to
 * the hub; a client streaming `/v1/users/{user}/reminders/stream` receives it once, with the
 * delivery key as the event id; other users' keys are refused; a reminder with nobody listening
 * stays pending and arrives when a client connects; a closed stream unsubscribes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFixedClock } from '../../src/core/clock.js';
import { startServerReminders, type ServerReminders } from '../../src/server/server-reminders.js';
import { createServerEnv, startApi, type RunningApi, type ServerEnv } from '../support/server-env.js';

const NOW = Date.parse('2026-03-10T09:00:00Z');
const clock = createFixedClock(NOW);
let env: ServerEnv;
let api: RunningApi;
let reminders: ServerReminders;
let keys: { admin: string; alice: string; bob: string };

/** Reads SSE frames from a streaming response until `want` events arrived (or the timeout). */
async function readEvents(res: Response, want: number, timeoutMs = 10_000): Promise<{ id: string; event: string; data: any }[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: { id: string; event: string; data: any }[] = [];
  let buffer = '';
  const deadline = Date.now() + timeoutMs;
  try {
    while (events.length < want && Date.now() < deadline) {
      const chunk = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), Math.max(1, deadline - Date.now())))]);
      if (chunk === null || chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields = Object.fromEntries(frame.split('\n').filter((l) => !l.startsWith(':')).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trimStart()]));
        if (fields.event) events.push({ id: fields.id ?? '', event: fields.event, data: JSON.parse(fields.data ?? 'null') });
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return events;
}

const stream = (user: string | null, key: string) =>
  fetch(`${api.server.url}${user === null ? '/v1/reminders/stream' : `/v1/users/${user}/reminders/stream`}`, { headers: { authorization: `Bearer ${key}` } });

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  env = await createServerEnv();
  const k = env.services.keys;
  keys = { admin: (await k.create({ admin: true })).key, alice: (await k.create({ userId: 'alice' })).key, bob: (await k.create({ userId: 'bob' })).key };
  // a long interval: the test drives ticks itself
  reminders = startServerReminders({ store: env.services.store, manager: env.services.manager, db: env.services.db, clock, intervalMs: 3_600_000, leadMs: 15 * 60_000 });
  await reminders.scheduler.tick();
  api = await startApi({ ...env.services, reminders: reminders.hub });
});
afterAll(async () => {
  await reminders?.stop();
  await api?.close();
  await env?.close();
});

describe('reminder streams', () => {
  it("streams a user's reminder of a task coming due, with the delivery key as the event id", async () => {
    const manager = env.services.manager;
    await manager.processMessage({ userId: 'alice', text: 'Remind me to call the dentist at 9:10am', now: NOW });
    const [task] = await manager.user('alice').listTasks({ status: ['todo'] });
    expect(task?.dueAtMs).toBe(Date.parse('2026-03-10T09:10:00Z'));

    const res = await stream('alice', keys.alice);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await until(() => reminders.hub.listenerCount('alice') === 1, 'the subscription');
    const report = await reminders.scheduler.tick();
    expect(report.outcomes.map((o) => o.status)).toEqual(['delivered']);
    const events = await readEvents(res, 1);
    expect(events).toHaveLength(1);
    expect(events[0]!.event).toBe('reminder');
    expect(events[0]!.id).toBe(`${task!.id}@${task!.dueAtMs}`);
    expect(events[0]!.data).toMatchObject({ type: 'reminder', userId: 'alice', dueAtMs: task!.dueAtMs, task: { id: task!.id } });
    expect(events[0]!.data.text).toMatch(/dentist/i);
    // the reader was cancelled: the hub forgets the stream
    await until(() => reminders.hub.listenerCount('alice') === 0, 'the unsubscription');
    // delivered once: the next tick sends nothing
    expect((await reminders.scheduler.tick()).outcomes).toEqual([]);
  });

  it('keeps a reminder pending while nobody listens and delivers it when a client connects', async () => {
    const manager = env.services.manager;
    await manager.processMessage({ userId: 'bob', text: 'Remind me to submit the report at 9:05am', now: NOW });
    const first = await reminders.scheduler.tick();
    expect(first.outcomes.map((o) => [o.userId, o.status])).toEqual([['bob', 'retrying']]);
    const admin = await stream(null, keys.admin);
    expect(admin.status).toBe(200);
    await until(() => reminders.hub.listenerCount('bob') === 1, 'the admin subscription');
    clock.advance(10 * 60_000); // past the retry back-off
    const second = await reminders.scheduler.tick();
    expect(second.outcomes.map((o) => [o.userId, o.status])).toEqual([['bob', 'delivered']]);
    const events = await readEvents(admin, 1);
    expect(events.map((e) => e.data.userId)).toEqual(['bob']);
    expect(events[0]!.data.text).toMatch(/report/i);
  });

  it("refuses another user's key and a user key on the all-users stream", async () => {
    const other = await stream('alice', keys.bob);
    expect(other.status).toBe(403);
    expect(((await other.json()) as { error: { code: string } }).error.code).toBe('E_FORBIDDEN');
    expect((await stream(null, keys.alice)).status).toBe(403);
    expect((await fetch(`${api.server.url}/v1/users/alice/reminders/stream`)).status).toBe(401);
  });

  it('lists the streams in the OpenAPI document', async () => {
    const doc = (await api.call('GET', '/openapi.json')).json();
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/users/{user}/reminders/stream', '/v1/reminders/stream']));
  });
});
