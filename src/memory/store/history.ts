/** The change history of one user's memory, newest first (entries are written by `context.write`). */
import type { SqlValue } from '../../store/warm/sql.js';
import type { HistoryOptions } from '../memory-store.js';
import type { HistoryEntry, MemoryKind } from '../model.js';
import type { UserScope } from './context.js';
import { num, optStr, str, type Row } from './rows.js';

/** Default number of entries `history` returns. */
export const DEFAULT_HISTORY_LIMIT = 100;

/** `UserMemoryStore.history`. */
export async function listHistory(scope: UserScope, options: HistoryOptions = {}): Promise<HistoryEntry[]> {
  const params: SqlValue[] = [scope.userId];
  let sql = 'SELECT * FROM memory_history WHERE user_id = ?';
  if (options.kind !== undefined) {
    sql += ' AND kind = ?';
    params.push(options.kind);
  }
  if (options.recordId !== undefined) {
    sql += ' AND record_id = ?';
    params.push(options.recordId);
  }
  const limit = Math.floor(options.limit ?? DEFAULT_HISTORY_LIMIT);
  if (!(limit > 0)) return [];
  params.push(limit);
  const rows = await scope.ctx.db.all<Row>(`${sql} ORDER BY seq DESC LIMIT ?`, params);
  return rows.map((r) => historyFromRow(scope.userId, r));
}

/** A history row as a HistoryEntry. */
export function historyFromRow(userId: string, r: Row): HistoryEntry {
  return {
    seq: num(r.seq),
    userId,
    kind: str(r.kind) as MemoryKind,
    recordId: str(r.record_id),
    field: str(r.field),
    oldValue: optStr(r.old_value),
    newValue: optStr(r.new_value),
    turnId: optStr(r.turn_id),
    atMs: num(r.at_ms),
  };
}
