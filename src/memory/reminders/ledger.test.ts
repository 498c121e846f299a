import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFixedClock } from '../../core/clock.js';
import { deliveryKey } from './ledger.js';
import { openReminderTestbed, type ReminderTestbed } from './testing.js';

const T0 = Date.UTC(2026, 2, 10, 9, 0, 0);

describe('reminder ledger and MemoryStore.dueTasks (real SQLite file)', () => {
  let dir: string;
  let bed: ReminderTestbed;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ctxvm-ledger-'));
    bed = await openReminderTestbed(dir, createFixedClock(T0));
  });
  afterEach(async () => {
    await bed.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records each (user, task, due) once and lets exactly one claimant have it', async () => {
    const c = { userId: 'u', taskId: 'task1', dueAtMs: T0 };
    expect(await bed.ledger.record([c, { ...c, userId: 'v' }], T0)).toBe(2);
    expect(await bed.ledger.record([c], T0 + 1)).toBe(0);
    const [row] = await bed.ledger.duePending(T0, 10);
    expect(row).toMatchObject({ userId: 'u', key: deliveryKey('task1', T0), status: 'pending', attempts: 0, text: null, nextAttemptAtMs: T0 });
    expect(await bed.ledger.claim(row!, T0 + 1000)).toBe(true);
    expect(await bed.ledger.claim(row!, T0 + 1000)).toBe(false); // the value it read changed
    expect(await bed.ledger.duePending(T0, 10)).toHaveLength(1); // only v's row is free
    await bed.ledger.delivered(row!, 1, T0 + 5);
    await bed.ledger.retryLater(row!, 9, T0, 'late write is ignored');
    expect(await bed.ledger.get('u', row!.key)).toMatchObject({ status: 'delivered', attempts: 1, deliveredAtMs: T0 + 5, lastError: null });
    expect(await bed.ledger.counts()).toEqual({ pending: 1, delivered: 1, failed: 0, cancelled: 0 });
    expect((await bed.ledger.list({ status: 'pending' })).map((r) => r.userId)).toEqual(['v']);
  });

  it('dueTasks lists open tasks of every user due by a time, earliest first, with keyset paging', async () => {
    const mk = (user: string, title: string, dueAtMs: number | null, status?: 'done') => bed.store.forUser(user).createTask({ title, dueAtMs, ...(status ? { status } : {}) });
    const a = await mk('b-user', 'a', T0 + 1);
    const b = await mk('a-user', 'b', T0 + 1);
    const c = await mk('a-user', 'c', T0 - 100);
    await mk('a-user', 'closed', T0, 'done');
    await mk('a-user', 'no due', null);
    await mk('c-user', 'later', T0 + 10_000);
    const all = await bed.store.dueTasks!(T0 + 1, 10);
    expect(all.map((d) => [d.userId, d.task.title])).toEqual([
      ['a-user', 'c'],
      ['a-user', 'b'],
      ['b-user', 'a'],
    ]);
    expect(all[2]!.task).toEqual(a);
    const page1 = await bed.store.dueTasks!(T0 + 1, 2);
    const last = page1.at(-1)!;
    const page2 = await bed.store.dueTasks!(T0 + 1, 2, { after: { dueAtMs: last.task.dueAtMs!, userId: last.userId, taskId: last.task.id } });
    expect([...page1, ...page2].map((d) => d.task.id)).toEqual([c.id, b.id, a.id]);
    expect((await bed.store.dueTasks!(T0 + 1, 10, { sinceMs: T0 })).map((d) => d.task.id)).toEqual([b.id, a.id]);
    await expect(bed.store.dueTasks!(T0, 0)).rejects.toThrow(/limit/);
  });
});
