/**
 * Tasks of one user, with their lifecycle and history: a create records the whole task under
 * field "*", an update one entry per changed field, a delete the last value under "*".
 */
import { UsageError } from '../../errors.js';
import type { SqlValue } from '../../store/warm/sql.js';
import type { ListTasksOptions, NewTask, OpenTaskTitle, TaskPatch } from '../memory-store.js';
import type { Task, TaskPriority, TaskStatus } from '../model.js';
import { flushTouches } from './access.js';
import { write, type UserScope, type WriteScope } from './context.js';
import { newRecordId } from './ids.js';
import { followTaskWrite, OPEN_SQL, openTasks, TASK_COLUMNS, type TaskColumn } from './open-tasks.js';
import { distinctIds, idList, num, optNum, optStr, placeholders, str, withSource, type Row } from './rows.js';

const STATUSES: readonly TaskStatus[] = ['todo', 'doing', 'done', 'cancelled'];
const PRIORITIES: readonly TaskPriority[] = ['low', 'normal', 'high', 'urgent'];
/** Fields of a task that have history, in the order entries are written. */
const FIELDS = ['title', 'status', 'priority', 'dueAtMs', 'duePhrase', 'projectId'] as const satisfies readonly (keyof TaskPatch)[];
const COLUMN: Record<(typeof FIELDS)[number], string> = {
  title: 'title',
  status: 'status',
  priority: 'priority',
  dueAtMs: 'due_at_ms',
  duePhrase: 'due_phrase',
  projectId: 'project_id',
};

/** A task row as a Task. */
export function taskFromRow(userId: string, r: Row): Task {
  return {
    id: str(r.id),
    userId,
    title: str(r.title),
    status: str(r.status) as TaskStatus,
    priority: str(r.priority) as TaskPriority,
    dueAtMs: optNum(r.due_at_ms),
    duePhrase: optStr(r.due_phrase),
    projectId: optStr(r.project_id),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
    sourceTurnIds: idList(r.source_turn_ids),
    confidence: num(r.confidence),
  };
}

/** `task` as a row of `TASK_COLUMNS` (as `taskFromRow` reads it), with its creation ordinal `seq`. */
function taskRow(task: Task, seq: SqlValue): Record<TaskColumn, SqlValue> {
  return {
    id: task.id,
    seq,
    title: task.title,
    status: task.status,
    priority: task.priority,
    due_at_ms: task.dueAtMs,
    due_phrase: task.duePhrase,
    project_id: task.projectId,
    created_at_ms: task.createdAtMs,
    updated_at_ms: task.updatedAtMs,
    source_turn_ids: JSON.stringify(task.sourceTurnIds),
    confidence: task.confidence,
  };
}

function checkField<K extends (typeof FIELDS)[number]>(field: K, value: unknown): Task[K] {
  const bad = (expected: string) => new UsageError(`task ${field}: expected ${expected}, got ${JSON.stringify(value)}`);
  switch (field) {
    case 'title':
      if (typeof value !== 'string' || value.trim() === '') throw bad('a non-empty string');
      break;
    case 'status':
      if (!STATUSES.includes(value as TaskStatus)) throw bad(STATUSES.join(' | '));
      break;
    case 'priority':
      if (!PRIORITIES.includes(value as TaskPriority)) throw bad(PRIORITIES.join(' | '));
      break;
    case 'dueAtMs':
      if (value !== null && (typeof value !== 'number' || !Number.isFinite(value))) throw bad('Unix ms or null');
      return (value === null ? null : Math.round(value as number)) as Task[K];
    default:
      if (value !== null && typeof value !== 'string') throw bad('a string or null');
  }
  return value as Task[K];
}

function readTaskRow(w: WriteScope | UserScope, id: string): Promise<Row | undefined> {
  const ex = 'tx' in w ? w.tx : w.ctx.db;
  return ex.get<Row>('SELECT * FROM memory_tasks WHERE user_id = ? AND id = ?', [w.userId, id]);
}

async function readTask(w: WriteScope | UserScope, id: string): Promise<Task | undefined> {
  const row = await readTaskRow(w, id);
  return row ? taskFromRow(w.userId, row) : undefined;
}

/** `UserMemoryStore.createTask`. */
export async function createTask(scope: UserScope, input: NewTask, turnId?: string | null): Promise<Task> {
  if (typeof input !== 'object' || input === null) throw new UsageError('createTask: expected a task object');
  const title = checkField('title', input.title);
  const status = checkField('status', input.status ?? 'todo');
  const priority = checkField('priority', input.priority ?? 'normal');
  const dueAtMs = checkField('dueAtMs', input.dueAtMs ?? null);
  const duePhrase = checkField('duePhrase', input.duePhrase ?? null);
  const projectId = checkField('projectId', input.projectId ?? null);
  const confidence = input.confidence ?? 1;
  if (typeof confidence !== 'number' || !(confidence >= 0 && confidence <= 1)) throw new UsageError(`task confidence: expected 0..1, got ${JSON.stringify(input.confidence)}`);
  return write(scope, async (w) => {
    const seq = w.nextSeq();
    const task: Task = {
      id: newRecordId('task', w.atMs),
      userId: w.userId,
      title,
      status,
      priority,
      dueAtMs,
      duePhrase,
      projectId,
      createdAtMs: w.atMs,
      updatedAtMs: w.atMs,
      sourceTurnIds: withSource(distinctIds(input.sourceTurnIds), turnId),
      confidence,
    };
    const values: SqlValue[] = [
      w.userId, task.id, seq, title, status, priority, dueAtMs, duePhrase, projectId, w.atMs, w.atMs, JSON.stringify(task.sourceTurnIds), confidence,
    ];
    await w.tx.run(
      `INSERT INTO memory_tasks (user_id, id, seq, title, status, priority, due_at_ms, due_phrase, project_id, created_at_ms, updated_at_ms, source_turn_ids, confidence)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      values,
    );
    await w.history('task', task.id, '*', undefined, task, turnId);
    await w.index('task', task.id, title);
    followTaskWrite(w, scope, task.id, taskRow(task, seq));
    return task;
  });
}

/** `UserMemoryStore.updateTask`. */
export async function updateTask(scope: UserScope, id: string, patch: TaskPatch, turnId?: string | null): Promise<Task | undefined> {
  if (typeof patch !== 'object' || patch === null) throw new UsageError('updateTask: expected a patch object');
  const next: Partial<Record<(typeof FIELDS)[number], unknown>> = {};
  for (const field of FIELDS) if (patch[field] !== undefined) next[field] = checkField(field, patch[field]);
  return write(scope, async (w) => {
    const row = await readTaskRow(w, id);
    if (!row) return undefined;
    const task = taskFromRow(w.userId, row);
    const changed = FIELDS.filter((f) => f in next && next[f] !== task[f]);
    if (changed.length === 0) return task;
    const updated: Task = { ...task, ...(next as TaskPatch), updatedAtMs: w.atMs, sourceTurnIds: withSource(task.sourceTurnIds, turnId) };
    for (const f of changed) await w.history('task', id, f, task[f], updated[f], turnId);
    await w.tx.run(
      `UPDATE memory_tasks SET ${changed.map((f) => `${COLUMN[f]} = ?`).join(', ')}, updated_at_ms = ?, source_turn_ids = ? WHERE user_id = ? AND id = ?`,
      [...changed.map((f) => updated[f] as SqlValue), w.atMs, JSON.stringify(updated.sourceTurnIds), w.userId, id],
    );
    if (changed.includes('title')) await w.index('task', id, updated.title);
    followTaskWrite(w, scope, id, taskRow(updated, row.seq!));
    return updated;
  });
}

/** `UserMemoryStore.deleteTask`. */
export async function deleteTask(scope: UserScope, id: string, turnId?: string | null): Promise<boolean> {
  // Buffered touches of the task are written first, so none lands after its statistics go.
  await flushTouches(scope.ctx, scope.userId);
  return write(scope, async (w) => {
    const task = await readTask(w, id);
    if (!task) return false;
    await w.tx.run('DELETE FROM memory_tasks WHERE user_id = ? AND id = ?', [w.userId, id]);
    await w.tx.run("DELETE FROM memory_access WHERE user_id = ? AND kind = 'task' AND record_id = ?", [w.userId, id]);
    await w.unindex('task', id);
    await w.history('task', id, '*', task, undefined, turnId);
    followTaskWrite(w, scope, id, undefined);
    return true;
  });
}

/** `UserMemoryStore.getTask`. */
export const getTask = (scope: UserScope, id: string): Promise<Task | undefined> => readTask(scope, id);

// The columns `taskFromRow` reads (not `seq`, which orders the open tasks kept in memory): a
// rebuild lists every open task, so each column costs.
const LIST_COLUMNS = TASK_COLUMNS.filter((c) => c !== 'seq').join(', ');

/** `UserMemoryStore.listTasks`: open tasks first by due time (undated last), then the rest by update time, newest first. */
export async function listTasks(scope: UserScope, options: ListTasksOptions = {}): Promise<Task[]> {
  const where = ['user_id = ?'];
  const params: SqlValue[] = [scope.userId];
  if (options.status) {
    const statuses = options.status.filter((s) => STATUSES.includes(s));
    if (statuses.length === 0) return [];
    where.push(`status IN (${placeholders(statuses.length)})`);
    params.push(...statuses);
  }
  if (options.dueBeforeMs !== undefined) {
    where.push('due_at_ms IS NOT NULL AND due_at_ms < ?');
    params.push(options.dueBeforeMs);
  }
  let limitClause = '';
  if (options.limit !== undefined) {
    const limit = Math.max(0, Math.floor(options.limit));
    if (!(limit > 0)) return [];
    limitClause = ' LIMIT ?';
    params.push(limit);
  }
  // NULLs sort differently in SQLite and PostgreSQL, so null-ness is its own sort key.
  const rows = await scope.ctx.db.all<Row>(
    `SELECT ${LIST_COLUMNS} FROM memory_tasks WHERE ${where.join(' AND ')}
      ORDER BY CASE WHEN ${OPEN_SQL} THEN 0 ELSE 1 END,
               CASE WHEN ${OPEN_SQL} AND due_at_ms IS NOT NULL THEN 0 ELSE 1 END,
               CASE WHEN ${OPEN_SQL} THEN COALESCE(due_at_ms, 0) ELSE 0 END,
               updated_at_ms DESC, seq DESC${limitClause}`,
    params,
  );
  return rows.map((r) => taskFromRow(scope.userId, r));
}

/**
 * `UserMemoryStore.openTaskTitles`: the open tasks in `listTasks` order, four columns each. The
 * manager reads these on every message that completes or changes a task it does not know yet:
 * they come from the open tasks the store remembers per records version and carries over its own
 * writes (open-tasks.ts), so such a message reads no task at all.
 */
export async function openTaskTitles(scope: UserScope, limit: number): Promise<OpenTaskTitle[]> {
  const n = Math.max(0, Math.floor(limit));
  if (!(n > 0)) return [];
  // Copies: the remembered titles are shared by every reader of this version.
  return (await openTasks(scope)).titles.slice(0, n).map((t) => ({ ...t }));
}
