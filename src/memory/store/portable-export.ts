/**
 * Reads one user's whole memory as portable records (../portable/format.ts), straight from the
 * warm tables so ids, times and history survive exactly: every kind in creation order (`seq`),
 * history oldest first. One transaction, so the export is a consistent snapshot even while the
 * user keeps writing.
 */
import type { SqlDatabase, SqlExecutor } from '../../store/warm/sql.js';
import type { PortableRecord } from '../portable/format.js';
import { assertUserId } from './context.js';
import { idList, num, optNum, optStr, str, type Row } from './rows.js';

const all = (tx: SqlExecutor, table: string, userId: string) => tx.all<Row>(`SELECT * FROM ${table} WHERE user_id = ? ORDER BY seq`, [userId]);

/** Every record of `userId` in export order (turns, projects, tasks, decisions, facts, history). */
export async function readPortableMemory(db: SqlDatabase, userId: string): Promise<PortableRecord[]> {
  assertUserId(userId);
  return db.transaction(async (tx) => {
    const out: PortableRecord[] = [];
    for (const r of await all(tx, 'memory_turns', userId)) {
      out.push({ type: 'turn', id: str(r.id), role: str(r.role) as 'user', speaker: optStr(r.speaker), text: str(r.text), atMs: num(r.at_ms), sessionId: optStr(r.session_id) });
    }
    for (const r of await all(tx, 'memory_projects', userId)) {
      out.push({ type: 'project', id: str(r.id), name: str(r.name), createdAtMs: num(r.created_at_ms), updatedAtMs: num(r.updated_at_ms), sourceTurnIds: idList(r.source_turn_ids) });
    }
    for (const r of await all(tx, 'memory_tasks', userId)) {
      out.push({
        type: 'task',
        id: str(r.id),
        title: str(r.title),
        status: str(r.status) as 'todo',
        priority: str(r.priority) as 'normal',
        dueAtMs: optNum(r.due_at_ms),
        duePhrase: optStr(r.due_phrase),
        projectId: optStr(r.project_id),
        createdAtMs: num(r.created_at_ms),
        updatedAtMs: num(r.updated_at_ms),
        sourceTurnIds: idList(r.source_turn_ids),
        confidence: num(r.confidence),
      });
    }
    for (const r of await all(tx, 'memory_decisions', userId)) {
      out.push({
        type: 'decision',
        id: str(r.id),
        text: str(r.text),
        rationale: optStr(r.rationale),
        taskId: optStr(r.task_id),
        projectId: optStr(r.project_id),
        createdAtMs: num(r.created_at_ms),
        sourceTurnIds: idList(r.source_turn_ids),
      });
    }
    for (const r of await all(tx, 'memory_facts', userId)) {
      out.push({
        type: 'fact',
        id: str(r.id),
        kind: str(r.kind) === 'preference' ? 'preference' : 'fact',
        key: optStr(r.fact_key),
        text: str(r.text),
        createdAtMs: num(r.created_at_ms),
        updatedAtMs: num(r.updated_at_ms),
        sourceTurnIds: idList(r.source_turn_ids),
        importance: num(r.importance),
      });
    }
    for (const r of await all(tx, 'memory_history', userId)) {
      out.push({
        type: 'history',
        kind: str(r.kind) as 'task',
        recordId: str(r.record_id),
        field: str(r.field),
        oldValue: optStr(r.old_value),
        newValue: optStr(r.new_value),
        turnId: optStr(r.turn_id),
        atMs: num(r.at_ms),
      });
    }
    return out;
  });
}
