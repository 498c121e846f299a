import { describe, expect, it } from 'vitest';
import { MAX_PENDING_TOUCHES } from './access.js';
import { useTempMemoryStore } from './store-test-kit.js';

const temp = useTempMemoryStore('ctxvm-access-');

const T0 = Date.UTC(2025, 0, 1);
/** What the table holds, written touches only. */
const written = async (userId = 'alice') =>
  Object.fromEntries((await temp.db.all<{ record_id: string; access_count: number; last_ms: number }>('SELECT record_id, access_count, last_ms FROM memory_access WHERE user_id = ? ORDER BY record_id', [userId])).map((r) => [r.record_id, { count: Number(r.access_count), lastMs: Number(r.last_ms) }]));

describe('write-behind access statistics', () => {
  it('buffers touches and writes them, added up, before accessStats reads', async () => {
    const u = temp.store.forUser('alice');
    await u.touch('task', ['a', 'b', 'a'], T0 + 10);
    await u.touchMany!([{ kind: 'task', ids: ['a'] }], T0 + 5);
    expect(await written()).toEqual({}); // not yet written
    expect(Object.fromEntries(await u.accessStats('task', ['a', 'b']))).toEqual({ a: { count: 2, lastMs: T0 + 10 }, b: { count: 1, lastMs: T0 + 10 } });
    expect(await written()).toEqual({ a: { count: 2, lastMs: T0 + 10 }, b: { count: 1, lastMs: T0 + 10 } });
    await u.touch('task', ['a'], T0 + 20);
    expect(Object.fromEntries(await u.accessStats('task', ['a']))).toEqual({ a: { count: 3, lastMs: T0 + 20 } });
  });

  it('counts pending touches in the record pool as if written, and includes the records', async () => {
    const u = temp.store.forUser('alice');
    const facts = [];
    for (let i = 0; i < 5; i++) facts.push(await u.setFact({ kind: 'fact', text: `fact ${i}` }));
    const task = await u.createTask({ title: 'write the report' });
    await u.touch('fact', [facts[0]!.id], T0);
    await u.accessStats('fact', []); // written
    await u.touchMany!([{ kind: 'fact', ids: [facts[1]!.id] }, { kind: 'task', ids: [task.id] }], T0 + 100);
    // perOrder 1: the newest fact (4), the most recently used one (1, pending), and the most
    // recently used written one (0): while touches are pending the pool may hold a few more.
    const pool = await u.recordPool!({ perOrder: 1, tasks: { perOrder: 1 }, withAccess: true });
    expect(pool.facts.map((f) => f.id).sort()).toEqual([facts[0]!.id, facts[1]!.id, facts[4]!.id].sort());
    expect(Object.fromEntries(pool.access!)).toEqual({
      [`fact:${facts[0]!.id}`]: { count: 1, lastMs: T0 },
      [`fact:${facts[1]!.id}`]: { count: 1, lastMs: T0 + 100 },
      [`task:${task.id}`]: { count: 1, lastMs: T0 + 100 },
    });
    await u.touch('fact', [facts[0]!.id], T0 + 200);
    const all = await u.recordPool!({ perOrder: 10, withAccess: true });
    expect(all.access!.get(`fact:${facts[0]!.id}`)).toEqual({ count: 2, lastMs: T0 + 200 });
    expect(Object.keys(await written())).toEqual([facts[0]!.id]); // the pool wrote nothing
    expect(await written()).toEqual({ [facts[0]!.id]: { count: 1, lastMs: T0 } });
    expect(Object.fromEntries(await u.accessStats('fact', [facts[0]!.id]))).toEqual({ [facts[0]!.id]: { count: 2, lastMs: T0 + 200 } });
  });

  it('counts each touch once in a pool whose reads a touch and a flush overtake', async () => {
    const u = temp.store.forUser('alice');
    const fact = await u.setFact({ kind: 'fact', text: 'the fact' });
    await u.touch('fact', [fact.id], T0);
    // The pool takes the buffer and issues its reads; a touch and a write of the buffer (before
    // accessStats reads) follow before those reads run. Neither touch is in the rows read, and
    // the buffer the pool holds keeps both (the write took it out of the store whole).
    const pooling = u.recordPool!({ perOrder: 5, withAccess: true });
    const touching = u.touch('fact', [fact.id], T0 + 1);
    const flushing = u.accessStats('fact', [fact.id]);
    expect((await pooling).access!.get(`fact:${fact.id}`)).toEqual({ count: 2, lastMs: T0 + 1 });
    await touching;
    expect(Object.fromEntries(await flushing)).toEqual({ [fact.id]: { count: 2, lastMs: T0 + 1 } });
    expect((await u.recordPool!({ perOrder: 5, withAccess: true })).access!.get(`fact:${fact.id}`)).toEqual({ count: 2, lastMs: T0 + 1 });
  });

  it('writes a deleted task’s pending touches before its statistics go, leaving none behind', async () => {
    const u = temp.store.forUser('alice');
    const task = await u.createTask({ title: 'x' });
    await u.touch('task', [task.id], T0);
    await u.deleteTask(task.id);
    await u.accessStats('task', []);
    expect(await written()).toEqual({});
  });

  it('writes the buffer when it is full, and on close', async () => {
    const u = temp.store.forUser('alice');
    const ids = Array.from({ length: MAX_PENDING_TOUCHES }, (_, i) => `r${i}`);
    await u.touch('fact', ids, T0);
    expect(Object.keys(await written()).length).toBe(MAX_PENDING_TOUCHES);
    await temp.store.forUser('bob').touch('decision', ['d'], T0 + 1);
    expect(await written('bob')).toEqual({});
    await temp.store.close();
    expect(await written('bob')).toEqual({ d: { count: 1, lastMs: T0 + 1 } });
  });

  it('keeps users apart', async () => {
    await temp.store.forUser('alice').touch('task', ['a'], T0);
    await temp.store.forUser('bob').touch('task', ['a'], T0 + 1);
    await temp.store.forUser('bob').touch('task', ['a'], T0 + 2);
    expect(Object.fromEntries(await temp.store.forUser('alice').accessStats('task', ['a']))).toEqual({ a: { count: 1, lastMs: T0 } });
    expect(Object.fromEntries(await temp.store.forUser('bob').accessStats('task', ['a']))).toEqual({ a: { count: 2, lastMs: T0 + 2 } });
  });
});
