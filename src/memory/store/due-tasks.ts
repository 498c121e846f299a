/**
 * `MemoryStore.dueTasks`: open tasks of every user coming due, for the reminder scheduler
 * (src/memory/reminders). The one cross-user read of the store; it returns each task with its
 * owner and is never used to build a prompt. Keyset-paged on (due_at_ms, user_id, id), served by
 * the `memory_tasks_due` index (warm migration 3).
 */
import { UsageError } from '../../errors.js';
import type { SqlExecutor, SqlValue } from '../../store/warm/sql.js';
import type { DueTask, DueTasksOptions } from '../memory-store.js';
import { OPEN_SQL } from './open-tasks.js';
import { str, type Row } from './rows.js';
import { taskFromRow } from './tasks.js';

/** Open tasks due at or before `untilMs` (Unix ms), earliest first, at most `limit`. */
export async function listDueTasks(db: SqlExecutor, untilMs: number, limit: number, options: DueTasksOptions = {}): Promise<DueTask[]> {
  if (!Number.isFinite(untilMs)) throw new UsageError('dueTasks: untilMs must be Unix ms');
  if (!Number.isInteger(limit) || limit <= 0) throw new UsageError('dueTasks: limit must be a positive integer');
  const where = [OPEN_SQL, 'due_at_ms IS NOT NULL', 'due_at_ms <= ?'];
  const params: SqlValue[] = [Math.floor(untilMs)];
  if (options.sinceMs !== undefined) {
    where.push('due_at_ms >= ?');
    params.push(Math.ceil(options.sinceMs));
  }
  if (options.after) {
    const { dueAtMs, userId, taskId } = options.after;
    where.push('(due_at_ms > ? OR (due_at_ms = ? AND (user_id > ? OR (user_id = ? AND id > ?))))');
    params.push(dueAtMs, dueAtMs, userId, userId, taskId);
  }
  params.push(limit);
  const rows = await db.all<Row>(`SELECT * FROM memory_tasks WHERE ${where.join(' AND ')} ORDER BY due_at_ms, user_id, id LIMIT ?`, params);
  return rows.map((r) => {
    const userId = str(r.user_id);
    return { userId, task: taskFromRow(userId, r) };
  });
}
