import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFixedClock, type FixedClock } from '../../core/clock.js';
import type { LlmRequest } from '../../llm/llm.js';
import type { Task } from '../model.js';
import { createCallbackSink, type Reminder } from './reminder.js';
import { createReminderScheduler, type ReminderSchedulerOptions } from './scheduler.js';
import { openReminderTestbed, type ReminderTestbed } from './testing.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 2, 10, 9, 0, 0); // 2026-03-10 09:00 UTC

describe('reminder scheduler (real SQLite file, fixed clock)', () => {
  let dir: string;
  let clock: FixedClock;
  let bed: ReminderTestbed;
  let got: Reminder[];
  const sink = createCallbackSink((r) => void got.push(r));
  const schedulerWith = (extra: Partial<ReminderSchedulerOptions> = {}) =>
    createReminderScheduler({ store: bed.store, manager: bed.manager, ledger: bed.ledger, sink, clock, ...extra });
  const task = (userId: string, title: string, dueAtMs: number | null, extra: Partial<Task> = {}) =>
    bed.store.forUser(userId).createTask({ title, dueAtMs, ...(extra.status ? { status: extra.status } : {}) });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ctxvm-reminders-'));
    clock = createFixedClock(T0);
    bed = await openReminderTestbed(dir, clock);
    got = [];
  });
  afterEach(async () => {
    await bed.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('reminds of tasks due within the lead time and of recent overdue ones, each once', async () => {
    const soon = await task('alice', 'submit the expense report', T0 + 10 * MIN);
    const later = await task('alice', 'call the dentist', T0 + 60 * MIN);
    const overdue = await task('bob', 'renew the domain', T0 - 2 * 60 * MIN);
    await task('bob', 'file old taxes', T0 - 3 * 24 * 60 * MIN); // older than the overdue window
    await task('bob', 'already done', T0 + 5 * MIN, { status: 'done' });
    await task('bob', 'someday', null);
    const scheduler = schedulerWith();

    const first = await scheduler.tick();
    expect(first.scanned).toBe(2);
    expect(first.recorded).toBe(2);
    expect(first.outcomes.map((o) => [o.taskId, o.status, o.attempts])).toEqual([
      [overdue.id, 'delivered', 1],
      [soon.id, 'delivered', 1],
    ]);
    expect(got.map((r) => r.id)).toEqual([`${overdue.id}@${overdue.dueAtMs}`, `${soon.id}@${soon.dueAtMs}`]);
    expect(got[1]).toMatchObject({ userId: 'alice', dueAtMs: T0 + 10 * MIN, overdue: false, attempt: 1, sentAtMs: T0 });
    expect(got[1]!.text).toBe('Reminder: "submit the expense report" is due today 09:10 (in 10 min).');
    expect(got[0]!.text).toBe('Reminder: "renew the domain" was due today 07:00 (overdue by 2 h).');
    expect(first.pending).toBe(0);

    // nothing new: delivered reminders are never sent again
    expect((await scheduler.tick()).outcomes).toEqual([]);

    clock.advance(50 * MIN); // 09:50 — "call the dentist" (10:00) is now within 15 minutes
    const third = await scheduler.tick();
    expect(third.outcomes.map((o) => o.taskId)).toEqual([later.id]);
    expect(got).toHaveLength(3);
  });

  it('builds the text through the rebuild path and the llm callback', async () => {
    await bed.store.forUser('alice').setFact({ kind: 'fact', text: 'the expense report goes to Maria in finance' });
    const t = await task('alice', 'submit the expense report', T0 + 10 * MIN);
    const requests: LlmRequest[] = [];
    const scheduler = schedulerWith({
      llm: async (request) => {
        requests.push(request);
        return '  Heads up: the expense report for Maria is due at 09:10.  ';
      },
    });
    const report = await scheduler.tick();
    expect(report.outcomes[0]).toMatchObject({ status: 'delivered', textSource: 'llm', text: 'Heads up: the expense report for Maria is due at 09:10.' });
    expect(requests).toHaveLength(1);
    const request = requests[0]!;
    expect(request.userId).toBe('alice');
    expect(request.nowMs).toBe(T0);
    expect(request.userMessage.split('\n')[0]).toBe('reminder: submit the expense report');
    expect(request.messages).toEqual([
      { role: 'system', content: request.context.text },
      { role: 'user', content: request.userMessage },
    ]);
    expect(request.context.text).toContain('submit the expense report');
    expect(request.extraction.task).toMatchObject({ title: t.title, due: t.dueAtMs });
    expect(await bed.ledger.get('alice', `${t.id}@${t.dueAtMs}`)).toMatchObject({ status: 'delivered', text: 'Heads up: the expense report for Maria is due at 09:10.' });
  });

  it('falls back to the offline text when the LLM fails, and still delivers on time', async () => {
    await task('alice', '给妈妈打电话', T0 + 15 * MIN);
    const scheduler = schedulerWith({
      llm: async () => {
        throw new Error('anthropic model "m" at https://api.anthropic.com: HTTP 529: overloaded');
      },
    });
    const [outcome] = (await scheduler.tick()).outcomes;
    expect(outcome).toMatchObject({ status: 'delivered', textSource: 'offline', fallbackReason: expect.stringContaining('HTTP 529') });
    expect(got[0]!.text).toBe('提醒：任务「给妈妈打电话」将于今天 09:15 到期（还有 15 分钟）。');
  });

  it('retries a failing sink with exponential backoff, then gives up', async () => {
    const t = await task('alice', 'pay rent', T0 + 5 * MIN);
    let calls = 0;
    const scheduler = schedulerWith({
      sink: createCallbackSink(() => {
        calls++;
        throw new Error('receiver down');
      }),
      maxAttempts: 3,
      retryBaseMs: MIN,
    });
    const key = `${t.id}@${t.dueAtMs}`;
    expect((await scheduler.tick()).outcomes[0]).toMatchObject({ status: 'retrying', attempts: 1, error: 'receiver down', nextAttemptAtMs: T0 + MIN });
    expect((await scheduler.tick()).outcomes).toEqual([]); // not due again yet
    clock.advance(MIN);
    expect((await scheduler.tick()).outcomes[0]).toMatchObject({ status: 'retrying', attempts: 2, nextAttemptAtMs: T0 + MIN + 2 * MIN });
    clock.advance(2 * MIN);
    const last = await scheduler.tick();
    expect(last.outcomes[0]).toMatchObject({ status: 'failed', attempts: 3 });
    expect(last.pending).toBe(0);
    clock.advance(60 * MIN);
    expect((await scheduler.tick()).outcomes).toEqual([]);
    expect(calls).toBe(3);
    expect(await bed.ledger.get('alice', key)).toMatchObject({ status: 'failed', attempts: 3, lastError: 'receiver down' });
  });

  it('cancels a reminder whose task was completed before delivery, and reminds again after a reschedule', async () => {
    const t = await task('alice', 'water the plants', T0 + 5 * MIN);
    let fail = true;
    const scheduler = schedulerWith({
      sink: createCallbackSink((r) => {
        if (fail) throw new Error('down');
        got.push(r);
      }),
      retryBaseMs: MIN,
    });
    expect((await scheduler.tick()).outcomes[0]!.status).toBe('retrying');
    // rescheduled to 09:12: the old reminder is cancelled, a new one (new key) is delivered
    await bed.store.forUser('alice').updateTask(t.id, { dueAtMs: T0 + 12 * MIN });
    fail = false;
    clock.advance(MIN);
    const report = await scheduler.tick();
    expect(report.outcomes.map((o) => [o.id, o.status])).toEqual([
      [`${t.id}@${T0 + 5 * MIN}`, 'cancelled'],
      [`${t.id}@${T0 + 12 * MIN}`, 'delivered'],
    ]);
    expect(report.outcomes[0]!.error).toBe('task rescheduled');
    // completed: a pending reminder is dropped
    const u = await task('alice', 'buy milk', T0 + 20 * MIN);
    fail = true;
    clock.advance(10 * MIN);
    expect((await scheduler.tick()).outcomes.map((o) => o.status)).toEqual(['retrying']);
    await bed.store.forUser('alice').updateTask(u.id, { status: 'done' });
    clock.advance(MIN);
    expect((await scheduler.tick()).outcomes).toEqual([expect.objectContaining({ taskId: u.id, status: 'cancelled', error: 'task is done' })]);
    // reopened: the same reminder comes back to life
    await bed.store.forUser('alice').updateTask(u.id, { status: 'todo' });
    fail = false;
    const revived = await scheduler.tick();
    expect(revived.recorded).toBe(1);
    expect(revived.outcomes).toEqual([expect.objectContaining({ id: `${u.id}@${T0 + 20 * MIN}`, status: 'delivered', attempts: 2 })]);
  });

  it('pages through many due tasks across users', async () => {
    for (let i = 0; i < 7; i++) await task(`user${i % 3}`, `task ${i}`, T0 + i * MIN);
    const report = await schedulerWith({ batchSize: 2 }).tick();
    expect(report.scanned).toBe(7);
    expect(report.outcomes.filter((o) => o.status === 'delivered')).toHaveLength(7);
    expect(new Set(got.map((r) => r.id)).size).toBe(7);
  });

  it('runs on a timer until stopped, reporting each tick', async () => {
    await task('alice', 'stand-up', T0 + MIN);
    const ticks: number[] = [];
    const errors: unknown[] = [];
    const scheduler = schedulerWith({ intervalMs: 10, onTick: (r) => ticks.push(r.outcomes.length), onError: (e) => errors.push(e) });
    scheduler.start();
    expect(scheduler.running).toBe(true);
    for (let i = 0; i < 200 && ticks.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    await scheduler.stop();
    expect(scheduler.running).toBe(false);
    expect(ticks[0]).toBe(1);
    expect(ticks.slice(1).every((n) => n === 0)).toBe(true);
    expect(errors).toEqual([]);
    expect(got).toHaveLength(1);
  });

  it('checks its options', () => {
    expect(() => schedulerWith({ leadMs: -1 })).toThrow(/leadMs/);
    expect(() => schedulerWith({ batchSize: 1.5 })).toThrow(/batchSize/);
    expect(() => createReminderScheduler({ ...({} as ReminderSchedulerOptions) })).toThrow(/required/);
    const { dueTasks: _omit, ...noDue } = bed.store;
    expect(() => schedulerWith({ store: { ...noDue, driver: 'custom' } })).toThrow(/cannot list due tasks/);
  });
});
