import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFixedClock, type FixedClock } from '../../core/clock.js';
import { createCallbackSink, type ReminderSink } from './reminder.js';
import { createReminderScheduler, type ReminderScheduler } from './scheduler.js';
import { openReminderTestbed, startWebhookReceiver, type ReminderTestbed, type WebhookReceiver } from './testing.js';
import { createWebhookSink } from './webhook-sink.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 2, 10, 9, 0, 0);
const noSleep = async () => {};

describe('webhook delivery and restarts (real SQLite file, real local webhook)', () => {
  let dir: string;
  let clock: FixedClock;
  let bed: ReminderTestbed;
  let hook: WebhookReceiver;
  const open: ReminderTestbed[] = [];
  const scheduler = (b: ReminderTestbed, sink: ReminderSink, extra: { leaseMs?: number } = {}): ReminderScheduler =>
    createReminderScheduler({ store: b.store, manager: b.manager, ledger: b.ledger, sink, clock, retryBaseMs: MIN, ...extra });
  const seed = async (n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await bed.store.forUser(`u${i % 2}`).createTask({ title: `task number ${i}`, dueAtMs: T0 + (i + 1) * MIN })).id);
    return ids;
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ctxvm-reminders-'));
    clock = createFixedClock(T0);
    bed = await openReminderTestbed(dir, clock);
    open.push(bed);
    hook = await startWebhookReceiver();
  });
  afterEach(async () => {
    await hook.close();
    for (const b of open.splice(0)) await b.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('POSTs the reminder as JSON with an idempotency key and an HMAC signature', async () => {
    const [id] = await seed(1);
    const sink = createWebhookSink({ url: hook.url, secret: 'whsec-test', headers: { authorization: 'Bearer receiver-token' }, sleep: noSleep });
    const report = await scheduler(bed, sink).tick();
    expect(report.outcomes[0]).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(hook.received).toHaveLength(1);
    const { headers, raw, body } = hook.received[0]!;
    expect(headers['content-type']).toBe('application/json');
    expect(headers['idempotency-key']).toBe(`${id}@${T0 + MIN}`);
    expect(headers.authorization).toBe('Bearer receiver-token');
    expect(headers['x-ctxvm-signature']).toBe(`sha256=${createHmac('sha256', 'whsec-test').update(raw).digest('hex')}`);
    expect(body).toEqual({
      type: 'reminder',
      id: `${id}@${T0 + MIN}`,
      userId: 'u0',
      text: 'Reminder: "task number 0" is due today 09:01 (in 1 min).',
      due: '2026-03-10T09:01:00.000Z',
      dueAtMs: T0 + MIN,
      overdue: false,
      attempt: 1,
      sentAt: '2026-03-10T09:00:00.000Z',
      task: { id, title: 'task number 0', status: 'todo', priority: 'normal', dueAtMs: T0 + MIN, duePhrase: null, projectId: null },
    });
  });

  it('retries a 503 and a 429 within one delivery, but not a 400', async () => {
    await seed(1);
    const waits: number[] = [];
    const sink = createWebhookSink({ url: hook.url, attempts: 3, retryBaseMs: 100, sleep: async (ms) => void waits.push(ms) });
    hook.enqueue(503, 429);
    expect((await scheduler(bed, sink).tick()).outcomes[0]).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(hook.received).toHaveLength(3);
    expect(waits).toEqual([100, 200]);

    await bed.store.forUser('u9').createTask({ title: 'another', dueAtMs: T0 + 2 * MIN });
    hook.enqueue(400);
    const report = await scheduler(bed, sink).tick();
    expect(report.outcomes[0]).toMatchObject({ status: 'retrying', attempts: 1, error: `webhook ${new URL(hook.url).origin}: HTTP 400` });
    expect(hook.received).toHaveLength(4);
    // the ledger tries again later, and then it goes through
    clock.advance(MIN);
    expect((await scheduler(bed, sink).tick()).outcomes[0]).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(hook.received.at(-1)!.body.attempt).toBe(2);
  });

  it('keeps reminders pending while the receiver is unreachable, naming only its origin', async () => {
    await seed(1);
    const url = `${hook.url}/secret-token-in-path?token=abc`;
    await hook.close();
    const sink = createWebhookSink({ url, attempts: 2, sleep: noSleep });
    const [outcome] = (await scheduler(bed, sink).tick()).outcomes;
    expect(outcome).toMatchObject({ status: 'retrying', attempts: 1 });
    expect(outcome!.error).toMatch(/^webhook http:\/\/127\.0\.0\.1:\d+: request failed/);
    expect(outcome!.error).not.toContain('secret-token');
    hook = await startWebhookReceiver(); // for afterEach
  });

  it('survives a restart: a stopped scheduler leaves the rest to a new one, with no duplicates', async () => {
    const ids = await seed(5);
    const sinkA = createWebhookSink({ url: hook.url, sleep: noSleep });
    const a = scheduler(bed, sinkA);
    // stop A while it is delivering the second reminder
    hook.onRequest = () => {
      if (hook.received.length === 2) void a.stop();
    };
    const first = await a.tick();
    expect(first.stopped).toBe(true);
    expect(first.outcomes.map((o) => o.status)).toEqual(['delivered', 'delivered']);
    expect(first.pending).toBe(3);
    await bed.close(); // the process exits
    hook.onRequest = undefined;

    const restarted = await openReminderTestbed(dir, clock);
    open.push(restarted);
    const b = scheduler(restarted, createWebhookSink({ url: hook.url, sleep: noSleep }));
    const second = await b.tick();
    expect(second.recorded).toBe(0); // all five were recorded by A
    expect(second.outcomes.map((o) => o.status)).toEqual(['delivered', 'delivered', 'delivered']);
    expect((await b.tick()).outcomes).toEqual([]);
    const keys = hook.received.map((r) => r.body.id);
    expect(keys).toHaveLength(5);
    expect(new Set(keys)).toEqual(new Set(ids.map((id, i) => `${id}@${T0 + (i + 1) * MIN}`)));
    expect(await restarted.ledger.counts()).toEqual({ pending: 0, delivered: 5, failed: 0, cancelled: 0 });
  });

  it('is at-least-once across a crash: the reminder in flight is sent again with the same id, the delivered ones never', async () => {
    await seed(4);
    const webhook = createWebhookSink({ url: hook.url, sleep: noSleep });
    let sent = 0;
    // A "crashes" right after the receiver took its third reminder, before recording it
    const crashing = createCallbackSink(async (r) => {
      await webhook.deliver(r);
      if (++sent === 3) await bed.close();
    });
    await expect(scheduler(bed, crashing, { leaseMs: 5 * MIN }).tick()).rejects.toThrow();
    expect(hook.received).toHaveLength(3);

    const restarted = await openReminderTestbed(dir, clock);
    open.push(restarted);
    const b = scheduler(restarted, webhook, { leaseMs: 5 * MIN });
    // the crashed one is still leased to A: B sends only the fourth now
    expect((await b.tick()).outcomes).toHaveLength(1);
    clock.advance(5 * MIN); // the lease runs out
    const late = await b.tick();
    expect(late.outcomes).toEqual([expect.objectContaining({ status: 'delivered', attempts: 1 })]);
    const keys = hook.received.map((r) => r.body.id);
    expect(keys).toHaveLength(5);
    expect(new Set(keys).size).toBe(4); // one duplicate, with the same id: receivers de-duplicate on it
    expect(keys[4]).toBe(keys[2]);
    expect((await b.tick()).outcomes).toEqual([]);
  });

  it('lets only one of two schedulers on one database send a reminder', async () => {
    await seed(3);
    const other = await openReminderTestbed(dir, clock);
    open.push(other);
    const sink = createWebhookSink({ url: hook.url, sleep: noSleep });
    const [r1, r2] = await Promise.all([scheduler(bed, sink).tick(), scheduler(other, sink).tick()]);
    expect(r1.outcomes.length + r2.outcomes.length).toBe(3);
    expect(new Set(hook.received.map((r) => r.body.id)).size).toBe(3);
    expect(hook.received).toHaveLength(3);
  });
});
