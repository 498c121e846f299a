import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TaskPriority, TaskStatus } from '../model.js';
import { createSqlMemoryStore } from './sql-memory-store.js';
import { useTempMemoryStore } from './store-test-kit.js';

const temp = useTempMemoryStore('ctxvm-pool-');

describe('the task pool’s open tasks, remembered per records version', () => {
  it('sees every change to the open tasks, of this store or another over the same database', async () => {
    const u = temp.store.forUser('alice');
    const about = (t: { title: string }) => t.title.includes('report');
    const pooled = async (s = u) => ((await s.recordPool!({ perOrder: 1, tasks: { perOrder: 1, about } })).tasks ?? []).map((t) => t.title).sort();
    for (let i = 0; i < 3; i++) await u.createTask({ title: `chore ${i}` });
    await u.createTask({ title: 'old report' });
    expect(await pooled()).toContain('old report');
    const added = await u.createTask({ title: 'new report' });
    expect(await pooled()).toEqual(expect.arrayContaining(['old report', 'new report']));
    await u.updateTask(added.id, { title: 'new summary' });
    expect(await pooled()).not.toContain('new report');
    // A second store over the same database (another process, say) writes: the version tells.
    const other = createSqlMemoryStore(temp.db).forUser('alice');
    await other.createTask({ title: 'third report' });
    expect(await pooled()).toContain('third report');
    expect((await u.openTaskTitles!(10)).map((t) => t.title)).toContain('third report');
    await other.updateTask(added.id, { status: 'done' });
    expect((await u.openTaskTitles!(10)).map((t) => t.id)).not.toContain(added.id);
  });
});

// The statement the task pool ran before its open tasks were remembered: the reference.
const OPEN = "status IN ('todo', 'doing')";
const referenceIds = (n: number, closed: boolean) => `
  SELECT id FROM (SELECT id FROM memory_tasks WHERE user_id = ? AND status = 'todo' AND due_at_ms IS NOT NULL ORDER BY due_at_ms, seq LIMIT ${n}) AS due_todo
  UNION SELECT id FROM (SELECT id FROM memory_tasks WHERE user_id = ? AND status = 'doing' AND due_at_ms IS NOT NULL ORDER BY due_at_ms, seq LIMIT ${n}) AS due_doing
  UNION SELECT id FROM (SELECT id FROM memory_tasks WHERE user_id = ? AND ${OPEN} ORDER BY updated_at_ms DESC, seq DESC LIMIT ${n}) AS touched
  UNION SELECT id FROM (SELECT id FROM memory_tasks WHERE user_id = ? AND ${OPEN} AND priority IN ('high', 'urgent') ORDER BY updated_at_ms DESC, seq DESC LIMIT ${n}) AS important
  UNION SELECT id FROM (SELECT record_id AS id FROM memory_access WHERE user_id = ? AND kind = 'task' ORDER BY last_ms DESC, record_id LIMIT ${n}) AS used${
    closed ? `\n  UNION SELECT id FROM (SELECT id FROM memory_tasks WHERE user_id = ? AND status IN ('done', 'cancelled') ORDER BY updated_at_ms DESC, seq DESC LIMIT ${n}) AS recent_closed` : ''
  }`;

const taskArb = fc.record({
  status: fc.constantFrom<TaskStatus>('todo', 'doing', 'done', 'cancelled'),
  priority: fc.constantFrom<TaskPriority>('low', 'normal', 'high', 'urgent'),
  due: fc.option(fc.integer({ min: 0, max: 5 }), { nil: null }),
  report: fc.boolean(),
  step: fc.integer({ min: 0, max: 2 }),
});

describe('the task pool', () => {
  it('holds the tasks the statement over every task held, with the same statistics (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(taskArb, { maxLength: 14 }),
        fc.integer({ min: 1, max: 4 }),
        fc.boolean(),
        fc.array(fc.nat(20), { maxLength: 4 }),
        fc.array(fc.nat(20), { maxLength: 6 }),
        fc.array(fc.nat(20), { maxLength: 6 }),
        async (specs, perOrder, closed, hitAt, writtenAt, pendingAt) => {
          let clock = 1_000;
          const s = createSqlMemoryStore(temp.db, { now: () => clock });
          const userId = `u${Math.random().toString(36).slice(2)}`;
          const u = s.forUser(userId);
          const ids: string[] = [];
          for (const [i, t] of specs.entries()) {
            clock += t.step; // ties of update time are broken by seq, as in the statement
            const task = await u.createTask({ title: t.report ? `report ${i}` : `chore ${i}`, priority: t.priority, dueAtMs: t.due === null ? null : 5_000 + t.due * 60_000 });
            if (t.status !== 'todo') await u.updateTask(task.id, { status: t.status });
            ids.push(task.id);
          }
          const pick = (at: number[]) => at.filter((i) => i < ids.length).map((i) => ids[i]!);
          await u.touch('task', pick(writtenAt), 2_000);
          await u.accessStats('task', []); // written
          await u.touch('task', pick(pendingAt), 3_000);
          const about = (t: { title: string }) => t.title.startsWith('report');
          const hits = pick(hitAt);
          const pool = await u.recordPool!({ perOrder: 1, tasks: { perOrder, ids: hits, closed, about }, withAccess: true });

          // The reference: the statement, then the hits, the open tasks about the query and the
          // most recently touched pending ones, read whole; closed ones only when asked.
          const params = Array.from({ length: closed ? 7 : 6 }, () => userId);
          const chosen = new Set((await temp.db.all<{ id: string }>(`SELECT id FROM memory_tasks WHERE user_id = ? AND id IN (${referenceIds(perOrder, closed)})`, params)).map((r) => r.id));
          const all = await u.listTasks();
          for (const id of hits) chosen.add(id);
          for (const t of all) if ((t.status === 'todo' || t.status === 'doing') && about(t)) chosen.add(t.id);
          const pending = [...new Set(pick(pendingAt))].sort().slice(0, perOrder); // one instant: ties by id
          for (const id of pending) chosen.add(id);
          const expected = all.filter((t) => chosen.has(t.id) && (closed || t.status === 'todo' || t.status === 'doing'));
          expect(pool.tasks!.map((t) => t.id)).toEqual(expected.map((t) => t.id)); // listTasks order
          const stats = await u.accessStats('task', expected.map((t) => t.id));
          const taskAccess = [...pool.access!].filter(([key]) => key.startsWith('task:'));
          expect(Object.fromEntries(taskAccess)).toEqual(Object.fromEntries([...stats].map(([id, v]) => [`task:${id}`, v])));
        },
      ),
      { numRuns: 60 },
    );
  });
});
