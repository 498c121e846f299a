/** Decisions of one user: append-only, with why, linked to a task or project when known. */
import { UsageError } from '../../errors.js';
import type { SqlValue } from '../../store/warm/sql.js';
import type { NewDecision } from '../memory-store.js';
import type { Decision } from '../model.js';
import { write, type UserScope } from './context.js';
import { followRecordWrite } from './open-tasks.js';
import { newRecordId } from './ids.js';
import { distinctIds, idList, num, optStr, str, withSource, type Row } from './rows.js';

/** A `memory_decisions` row as a Decision. */
export function decisionFromRow(userId: string, r: Row): Decision {
  return {
    id: str(r.id),
    userId,
    text: str(r.text),
    rationale: optStr(r.rationale),
    taskId: optStr(r.task_id),
    projectId: optStr(r.project_id),
    createdAtMs: num(r.created_at_ms),
    sourceTurnIds: idList(r.source_turn_ids),
  };
}

const optText = (what: string, v: unknown): string | null => {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new UsageError(`decision ${what}: expected a string or null, got ${JSON.stringify(v)}`);
  return v;
};

/** `UserMemoryStore.addDecision`. */
export async function addDecision(scope: UserScope, input: NewDecision, turnId?: string | null): Promise<Decision> {
  if (typeof input !== 'object' || input === null || typeof input.text !== 'string' || input.text.trim() === '') {
    throw new UsageError(`addDecision: text must be a non-empty string, got ${JSON.stringify(input?.text)}`);
  }
  const rationale = optText('rationale', input.rationale);
  const taskId = optText('taskId', input.taskId);
  const projectId = optText('projectId', input.projectId);
  return write(scope, async (w) => {
    followRecordWrite(w, scope); // (no task changes: the open tasks the store remembers stay current)
    const decision: Decision = {
      id: newRecordId('decision', w.atMs),
      userId: w.userId,
      text: input.text,
      rationale,
      taskId,
      projectId,
      createdAtMs: w.atMs,
      sourceTurnIds: withSource(distinctIds(input.sourceTurnIds), turnId),
    };
    await w.tx.run(
      `INSERT INTO memory_decisions (user_id, id, seq, text, rationale, task_id, project_id, created_at_ms, source_turn_ids) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [w.userId, decision.id, w.nextSeq(), decision.text, rationale, taskId, projectId, w.atMs, JSON.stringify(decision.sourceTurnIds)],
    );
    await w.history('decision', decision.id, '*', undefined, decision, turnId);
    await w.index('decision', decision.id, rationale ? `${decision.text}\n${rationale}` : decision.text);
    return decision;
  });
}

/** `UserMemoryStore.listDecisions`: newest first. */
export async function listDecisions(scope: UserScope, options: { projectId?: string; limit?: number } = {}): Promise<Decision[]> {
  const params: SqlValue[] = [scope.userId];
  let sql = 'SELECT * FROM memory_decisions WHERE user_id = ?';
  if (options.projectId !== undefined) {
    sql += ' AND project_id = ?';
    params.push(options.projectId);
  }
  sql += ' ORDER BY created_at_ms DESC, seq DESC';
  if (options.limit !== undefined) {
    const limit = Math.floor(options.limit);
    if (!(limit > 0)) return [];
    sql += ' LIMIT ?';
    params.push(limit);
  }
  return (await scope.ctx.db.all<Row>(sql, params)).map((r) => decisionFromRow(scope.userId, r));
}
