/**
 * Every open task (todo or doing) of a user, whole rows, remembered per store and records
 * version. A context rebuild needs all of them: it checks every open title against the query (no
 * task the query names may be left out of its pool) and takes the soonest due, the most recently
 * updated and the most important of them. Read in the rebuild's statements, each of those
 * orderings visited every open task again (an `IN` over two statuses cannot walk an index in
 * order), and their rows were read again with them: most of a rebuild's SQL time with a few
 * hundred open tasks. Open tasks change only with a write of a memory record, which bumps
 * `records_version` in the same transaction; the version is read first, so the rows are at least
 * as new as the version they are kept under, and another process's write bumps it too. The
 * store's own writes of tasks are followed with the rows they wrote (`followTaskWrite`): between
 * them nothing is read again, so the manager's match of a change request against every open task
 * reads none either.
 */
import type { OpenTaskTitle } from '../memory-store.js';
import { isOpenStatus, type TaskStatus } from '../model.js';
import type { RecordsVersions, StoreContext, UserScope, WriteScope } from './context.js';
import { num, optStr, str, type Row } from './rows.js';

/** The columns of a task row, as `taskFromRow` reads them. */
export const TASK_COLUMNS = ['id', 'seq', 'title', 'status', 'priority', 'due_at_ms', 'due_phrase', 'project_id', 'created_at_ms', 'updated_at_ms', 'source_turn_ids', 'confidence'] as const;
/** One of `TASK_COLUMNS`. */
export type TaskColumn = (typeof TASK_COLUMNS)[number];

/** A user's open tasks as of one records version. */
export interface OpenTasks {
  /** Rows of `TASK_COLUMNS`. */
  readonly rows: readonly Row[];
  /** The same, by id. */
  readonly byId: ReadonlyMap<string, Row>;
  /** Id, title, project and status of each, in `listTasks` order. */
  readonly titles: readonly OpenTaskTitle[];
  /**
   * Ids of the `n` first of each of the pool's orderings of open tasks: due soonest (todo, and
   * doing), most recently updated, most recently updated of high or urgent priority. The same
   * sets as the `ORDER BY … LIMIT n` subqueries they replace (ties broken by the unique `seq`).
   */
  firstOfOrderings(n: number): readonly string[];
}

/** Users whose open tasks are remembered per store (all forgotten when full). */
const USERS_PER_STORE = 1000;
/** The open tasks' rows, in SQL (see `isOpenStatus`). */
export const OPEN_SQL = "status IN ('todo', 'doing')";

// Per store context (a transaction's bound context has its own, dropped with it): no user's
// rows are ever shared between two stores.
const remembered = new WeakMap<StoreContext, Map<string, { version: number; tasks: OpenTasksOf }>>();

/** The user's open tasks, read again only when their records version moved (see the module comment). */
export async function openTasks(scope: UserScope): Promise<OpenTasks> {
  const row = await scope.ctx.db.get<Row>('SELECT records_version FROM memory_versions WHERE user_id = ?', [scope.userId]);
  const version = num(row?.records_version);
  let users = remembered.get(scope.ctx);
  if (!users) remembered.set(scope.ctx, (users = new Map()));
  const known = users.get(scope.userId);
  if (known && known.version === version) return known.tasks;
  const rows = await scope.ctx.db.all<Row>(`SELECT ${TASK_COLUMNS.join(', ')} FROM memory_tasks WHERE user_id = ? AND ${OPEN_SQL}`, [scope.userId]);
  const tasks = openTasksOf(rows);
  if (users.size >= USERS_PER_STORE && !users.has(scope.userId)) users.clear();
  users.set(scope.userId, { version, tasks });
  return tasks;
}

function openTasksOf(rows: readonly Row[], inOrder?: readonly Row[]): OpenTasksOf {
  return new OpenTasksOf(rows, inOrder);
}

/**
 * `OpenTasks` over rows, each view worked out when first asked for: a write that follows them
 * (`tasksWritten`) may be followed by another before anyone reads them.
 */
class OpenTasksOf implements OpenTasks {
  private map: ReadonlyMap<string, Row> | undefined;
  private list: readonly OpenTaskTitle[] | undefined;
  private readonly firsts = new Map<number, readonly string[]>();

  constructor(
    readonly rows: readonly Row[],
    /** The rows in `listTasks` order, when known. */
    private ordered?: readonly Row[],
  ) {}

  get byId(): ReadonlyMap<string, Row> {
    return (this.map ??= new Map(this.rows.map((r) => [str(r.id), r])));
  }

  get titles(): readonly OpenTaskTitle[] {
    return (this.list ??= this.inOrder().map((r) => ({ id: str(r.id), title: str(r.title), status: str(r.status) as TaskStatus, projectId: optStr(r.project_id) })));
  }

  firstOfOrderings(n: number): readonly string[] {
    let ids = this.firsts.get(n);
    if (!ids) this.firsts.set(n, (ids = orderingsOf(this.rows, n)));
    return ids;
  }

  inOrder(): readonly Row[] {
    return (this.ordered ??= [...this.rows].sort(listOrder));
  }

  /** The rows in `listTasks` order if they were put in it already. */
  inOrderIfKnown(): readonly Row[] | undefined {
    return this.ordered;
  }
}

/**
 * Lets the open tasks remembered for `scope`'s user follow a write of this store to the task
 * `id`, which leaves it as `row` (its `TASK_COLUMNS`; undefined when deleted): once the write has
 * committed, what was remembered for the version before it becomes what is remembered for the
 * version after it. Anything else (a write of another store or process, one that did not say
 * which task it changed) moves the version on without this, and the tasks are read again.
 */
export function followTaskWrite(w: WriteScope, scope: UserScope, id: string, row: Row | undefined): void {
  // A unit's writes are remembered by the store's own context, once the unit has committed.
  const ctx = scope.ctx.outer ?? scope.ctx;
  w.afterCommit((records) => tasksWritten(ctx, scope.userId, records, { id, row }));
}

/** `followTaskWrite` for a write of other records (facts, decisions, projects): the open tasks stay as they are. */
export function followRecordWrite(w: WriteScope, scope: UserScope): void {
  const ctx = scope.ctx.outer ?? scope.ctx;
  w.afterCommit((records) => tasksWritten(ctx, scope.userId, records, undefined));
}

function tasksWritten(ctx: StoreContext, userId: string, records: RecordsVersions, written: { id: string; row: Row | undefined } | undefined): void {
  const users = remembered.get(ctx);
  const known = users?.get(userId);
  if (!users || !known || records.after === records.before) return;
  if (known.version !== records.before) {
    users.delete(userId); // something else wrote in between
    return;
  }
  if (!written) return void users.set(userId, { version: records.after, tasks: known.tasks });
  const kept = (r: Row) => str(r.id) !== written.id;
  const added = written.row && isOpenStatus(written.row.status) ? [written.row] : [];
  // The rows left keep their order: the written one goes in where it belongs, no sort of them all.
  const ordered = known.tasks.inOrderIfKnown()?.filter(kept);
  if (ordered) for (const row of added) ordered.splice(firstAfter(ordered, row), 0, row);
  users.set(userId, { version: records.after, tasks: openTasksOf([...known.tasks.rows.filter(kept), ...added], ordered) });
}

/** Where `row` goes in `ordered` (in `listOrder`): after every row that comes before it. */
function firstAfter(ordered: readonly Row[], row: Row): number {
  let lo = 0;
  let hi = ordered.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (listOrder(ordered[mid]!, row) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function orderingsOf(rows: readonly Row[], n: number): string[] {
  const dueFirst = (a: Row, b: Row) => num(a.due_at_ms) - num(b.due_at_ms) || num(a.seq) - num(b.seq);
  const newestFirst = (a: Row, b: Row) => num(b.updated_at_ms) - num(a.updated_at_ms) || num(b.seq) - num(a.seq);
  const dated = rows.filter((r) => r.due_at_ms !== null && r.due_at_ms !== undefined);
  const first = (list: Row[], order: (a: Row, b: Row) => number) => list.sort(order).slice(0, n);
  const chosen = [
    ...first(dated.filter((r) => r.status === 'todo'), dueFirst),
    ...first(dated.filter((r) => r.status === 'doing'), dueFirst),
    ...first([...rows], newestFirst),
    ...first(rows.filter((r) => r.priority === 'high' || r.priority === 'urgent'), newestFirst),
  ];
  return [...new Set(chosen.map((r) => str(r.id)))];
}

/** `listTasks`' order: open tasks first by due time (undated last), then the rest by update time, newest first. */
export function listOrder(a: Row, b: Row): number {
  const openA = isOpenStatus(a.status);
  const openB = isOpenStatus(b.status);
  if (openA !== openB) return openA ? -1 : 1;
  if (openA) {
    const undatedA = a.due_at_ms === null || a.due_at_ms === undefined;
    const undatedB = b.due_at_ms === null || b.due_at_ms === undefined;
    if (undatedA !== undatedB) return undatedA ? 1 : -1;
    const due = undatedA ? 0 : num(a.due_at_ms) - num(b.due_at_ms);
    if (due !== 0) return due;
  }
  return num(b.updated_at_ms) - num(a.updated_at_ms) || num(b.seq) - num(a.seq);
}
