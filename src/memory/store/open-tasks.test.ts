import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { UserMemoryStore } from '../memory-store.js';
import type { TaskStatus } from '../model.js';
import { createSqlMemoryStore } from './sql-memory-store.js';
import { useTempMemoryStore } from './store-test-kit.js';

const temp = useTempMemoryStore('ctxvm-open-tasks-');

const status = fc.constantFrom<TaskStatus>('todo', 'doing', 'done', 'cancelled');
const op = fc.oneof(
  fc.record({ op: fc.constant('create' as const), title: fc.constantFrom('report', 'chore', 'call'), status, due: fc.option(fc.nat(5), { nil: null }) }),
  fc.record({ op: fc.constant('update' as const), at: fc.nat(20), status, due: fc.option(fc.nat(5), { nil: null }) }),
  fc.record({ op: fc.constant('delete' as const), at: fc.nat(20) }),
  fc.record({ op: fc.constant('unit' as const), at: fc.nat(20), status, fails: fc.boolean() }),
  fc.record({ op: fc.constant('other store' as const), at: fc.nat(20), status }),
  fc.record({ op: fc.constant('fact' as const) }),
  fc.record({ op: fc.constant('read' as const) }),
);

describe('the open tasks a store remembers', () => {
  it('follow its own writes, committed or rolled back, and anyone else’s (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30 }), async (ops) => {
        const userId = `u${Math.random().toString(36).slice(2)}`;
        const u = temp.store.forUser(userId);
        const other = createSqlMemoryStore(temp.db).forUser(userId);
        const ids: string[] = [];
        const idAt = (i: number) => ids[i % Math.max(1, ids.length)];
        const expected = async (s: UserMemoryStore) => (await s.listTasks({ status: ['todo', 'doing'] })).map((t) => ({ id: t.id, title: t.title, status: t.status, projectId: t.projectId }));
        for (const o of ops) {
          if (o.op === 'create') ids.push((await u.createTask({ title: o.title, status: o.status, dueAtMs: o.due === null ? null : 1_000 + o.due })).id);
          else if (o.op === 'update' && idAt(o.at)) await u.updateTask(idAt(o.at)!, { status: o.status, dueAtMs: o.due === null ? null : 2_000 + o.due });
          else if (o.op === 'delete' && idAt(o.at)) await u.deleteTask(idAt(o.at)!);
          else if (o.op === 'unit') {
            const unit = u.atomically!(async (s) => {
              const created = await s.createTask({ title: 'in a unit' });
              if (idAt(o.at)) await s.updateTask(idAt(o.at)!, { status: o.status });
              if (o.fails) throw new Error('rolled back');
              return created.id;
            });
            if (o.fails) await expect(unit).rejects.toThrow('rolled back');
            else ids.push(await unit);
          } else if (o.op === 'other store' && idAt(o.at)) await other.updateTask(idAt(o.at)!, { status: o.status, title: 'renamed elsewhere' });
          else if (o.op === 'fact') await u.setFact({ kind: 'fact', text: 'a fact' });
          // (read only now and then: writes that follow each other unread must be followed too)
          else if (o.op === 'read') expect(await u.openTaskTitles!(1000)).toEqual(await expected(u));
        }
        expect(await u.openTaskTitles!(1000)).toEqual(await expected(u));
      }),
      { numRuns: 80 },
    );
  });
});
