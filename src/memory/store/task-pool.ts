/**
 * The task part of `UserMemoryStore.recordPool` (record-pool.ts): the open tasks the query is
 * about, the full-text hits, and of each ordering — due soonest, most recently updated, high or
 * urgent priority, most recently used — `perOrder`; with `closed`, also the most recently
 * updated closed tasks and the closed hits. The orderings do not depend on the clock, so the
 * pool is the same at every `now` for one memory version.
 *
 * Open tasks come whole from `openTasks` (remembered per records version, see open-tasks.ts), so
 * only what changes between two rebuilds of one version is read: the most recently used ids, the
 * access statistics, and the closed tasks when they are wanted.
 */
import type { TaskPoolOptions } from '../memory-store.js';
import { isOpenStatus } from '../model.js';
import { NO_TOUCHES, pendingTouches, writtenAccess, type PendingTouch } from './access.js';
import type { UserScope } from './context.js';
import { listOrder, openTasks, TASK_COLUMNS } from './open-tasks.js';
import { mostRecent, perOrderOf, select, statement } from './pool-parts.js';
import { distinctIds, ID_BATCH, placeholders, str, type Row } from './rows.js';

// The most recently used tasks (open or closed: closed ones are dropped unless wanted), and with
// `closed` the most recently updated closed ones. (An index on `memory_access.last_ms` would be
// rewritten by every rebuild's touches: the few access rows of a user's tasks are sorted.)
const usedOrClosedIds = (n: number, closed: boolean) => `
  SELECT id FROM (SELECT record_id AS id FROM memory_access WHERE user_id = ? AND kind = 'task' ORDER BY last_ms DESC, record_id LIMIT ${n}) AS used${
    closed ? `\n  UNION SELECT id FROM (SELECT id FROM memory_tasks WHERE user_id = ? AND status IN ('done', 'cancelled') ORDER BY updated_at_ms DESC, seq DESC LIMIT ${n}) AS recent_closed` : ''
  }`;

/** What `taskPool` returns. */
export interface TaskPoolRows {
  /** In `listTasks` order. */
  rows: Row[];
  /**
   * With `withAccess`: the written statistics of each row by id, a row with `access_count` and
   * `last_ms` (the row itself when it was read with them; none for a task never used).
   */
  stats: ReadonlyMap<string, Row>;
  /** The buffered touches the statistics do not hold yet (see pool-parts.ts). */
  pending: ReadonlyMap<string, PendingTouch>;
}

/** The task rows of the pool (see the module comment). */
export async function taskPool(scope: UserScope, options: TaskPoolOptions, withAccess: boolean, overlay: boolean): Promise<TaskPoolRows> {
  const { db } = scope.ctx;
  const { userId } = scope;
  const n = perOrderOf(options.perOrder);
  const closed = options.closed === true;
  const kind = withAccess ? 'task' : undefined;
  const open = await openTasks(scope);
  const ids = new Set(distinctIds(options.ids));
  const about = options.about;
  // Every open task's title, so that no task the query names is left out of the pool.
  if (about) for (const t of open.titles) if (!ids.has(t.id) && about(t)) ids.add(t.id);
  // Taken here, after the awaits above, with no await before the reads are issued (see pool-parts.ts).
  const pending = overlay ? pendingTouches(scope) : NO_TOUCHES;
  for (const id of mostRecent(pending, ['task'], n)) ids.add(id);
  for (const id of open.firstOfOrderings(n)) ids.add(id);
  // Open tasks are known whole; any other id is a closed task (or one deleted since), read only
  // when closed tasks are wanted.
  const known: Row[] = [];
  const others: string[] = [];
  for (const id of ids) {
    const row = open.byId.get(id);
    if (row) known.push(row);
    else if (closed) others.push(id);
  }
  const params = Array.from({ length: closed ? 2 : 1 }, () => userId);
  const reads = [db.all<Row>(statement(`tasks-used|${n}|${closed}|${withAccess}`, () => select('memory_tasks', TASK_COLUMNS, kind, `r.user_id = ? AND r.id IN (${usedOrClosedIds(n, closed)})`)), [userId, ...params])];
  for (let i = 0; i < others.length; i += ID_BATCH) {
    const batch = others.slice(i, i + ID_BATCH);
    reads.push(db.all<Row>(statement(`tasks-in|${batch.length}|${withAccess}`, () => select('memory_tasks', TASK_COLUMNS, kind, `r.user_id = ? AND r.id IN (${placeholders(batch.length)})`)), [userId, ...batch]));
  }
  const knownStats = withAccess && known.length > 0 ? writtenAccess(scope, 'task', known.map((r) => str(r.id))) : undefined;
  const [read, stats = new Map<string, Row>()] = await Promise.all([Promise.all(reads), knownStats]);
  const byId = new Map<string, Row>();
  for (const r of known) byId.set(str(r.id), r);
  for (const rows of read) {
    for (const r of rows) {
      // (Recently used tasks may be closed.)
      if (!isOpenStatus(r.status) && !closed) continue;
      byId.set(str(r.id), r);
      if (withAccess) stats.set(str(r.id), r);
    }
  }
  return { rows: [...byId.values()].sort(listOrder), stats, pending };
}
