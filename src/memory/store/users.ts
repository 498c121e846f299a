/**
 * `MemoryStore.listUsers`: the users that have memory, for the admin listing of the HTTP API
 * (`GET /v1/users`). A cross-user read like `dueTasks`, reached from the store root and never
 * through `forUser`; it returns counts and times only, no memory content.
 */
import { UsageError } from '../../errors.js';
import type { SqlExecutor } from '../../store/warm/sql.js';
import type { ListUsersOptions, UserSummary } from '../memory-store.js';
import { num, optNum, str, type Row } from './rows.js';

/** Users with memory (a `memory_versions` row), most recently active first, ties by user id. */
export async function listUsers(db: SqlExecutor, options: ListUsersOptions = {}): Promise<UserSummary[]> {
  const limit = options.limit ?? 1000;
  if (!Number.isInteger(limit) || limit <= 0) throw new UsageError('listUsers: limit must be a positive integer');
  // Correlated subqueries use the (user_id, …) indexes of each table; the sort happens on the
  // aggregates, so it stays in SQL where both dialects agree on NULL ordering via COALESCE.
  const rows = await db.all<Row>(
    `SELECT user_id, turns, tasks, last_turn_ms, last_change_ms FROM (
       SELECT v.user_id AS user_id,
         (SELECT COUNT(*) FROM memory_turns t WHERE t.user_id = v.user_id) AS turns,
         (SELECT COUNT(*) FROM memory_tasks k WHERE k.user_id = v.user_id) AS tasks,
         (SELECT MAX(t.at_ms) FROM memory_turns t WHERE t.user_id = v.user_id) AS last_turn_ms,
         (SELECT MAX(h.at_ms) FROM memory_history h WHERE h.user_id = v.user_id) AS last_change_ms
       FROM memory_versions v
     ) u
     ORDER BY COALESCE(CASE WHEN COALESCE(last_turn_ms, 0) > COALESCE(last_change_ms, 0) THEN last_turn_ms ELSE last_change_ms END, -1) DESC, user_id
     LIMIT ?`,
    [limit],
  );
  return rows.map((r) => {
    const turn = optNum(r.last_turn_ms);
    const change = optNum(r.last_change_ms);
    const last = turn === null ? change : change === null ? turn : Math.max(turn, change);
    return { userId: str(r.user_id), turns: num(r.turns), tasks: num(r.tasks), lastActiveAtMs: last };
  });
}
