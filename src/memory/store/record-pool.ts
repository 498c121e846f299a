/**
 * `UserMemoryStore.recordPool`: the facts and decisions a context rebuild ranks, bounded so the
 * rebuild's cost does not grow with everything the user ever said. A rebuild scores every record
 * it reads and can place only a few dozen; reading (and scoring, and token-counting) 1,000 facts
 * to show 25 was most of its time at 100k memories.
 *
 * Which records: every preference and keyed fact (the profile layer shows them all); of the
 * free-form facts and the decisions, the union of the newest, the most important (facts) and the
 * most recently used, `perOrder` of each — the static signals of the rebuilder's score (recency,
 * importance, access) — plus those created in the query's date spans and those the full-text
 * search hit (its remaining signals). Portable SQL: each ordering is a subquery with its own
 * ORDER BY and a literal LIMIT (SQLite plans a known LIMIT better, and there are few values).
 *
 * Tasks likewise (when asked): the open tasks the query is about (decided by the caller from the
 * title and project of every open task, the only read that grows with the open tasks, two
 * narrow columns), the full-text hits, and of each ordering — due soonest, most recently
 * updated, high or urgent priority, most recently used — `perOrder`. The orderings do not depend
 * on the clock, so the pool is the same at every `now` for one memory version.
 *
 * Access statistics come with the rows (a LEFT JOIN on `memory_access`'s primary key) instead of
 * a lookup per record afterwards: one read per record instead of two, and no `IN` lists.
 */
import { remembered } from '../../core/remembered.js';
import type { RecordPool, RecordPoolOptions, TaskPoolOptions } from '../memory-store.js';
import { flushTouches, pendingTouches, type PendingTouch } from './access.js';
import type { MemoryKind, Task } from '../model.js';
import type { StoreContext, UserScope } from './context.js';
import { decisionFromRow } from './decisions.js';
import { factFromRow } from './facts.js';
import { num, placeholders, str, type Row } from './rows.js';
import { taskFromRow } from './tasks.js';

/** Ids per `IN (…)` list. */
const ID_BATCH = 500;
/** Largest `perOrder` honoured (each distinct value is one more prepared statement). */
export const MAX_POOL_PER_ORDER = 100_000;

// `fact_key || ''` rather than `fact_key`: with the bare column, SQLite (without statistics) reads
// `fact_key IS NULL` as a lookup in the unique index on (user_id, fact_key), expects one row, and
// sorts every fact of the user; the expression leaves it the (user_id, kind, …) indexes of
// schema step 5, which walk in the order asked for and stop at the LIMIT. Same meaning on both
// backends (NULL || '' is NULL).
const FREE_FACT = "kind = 'fact' AND (fact_key || '') IS NULL";

// Every branch reads ids through an index (preferences and keyed facts by theirs, the orderings
// by step 5's), and only the rows chosen are read whole.
const factIds = (n: number) => `
  SELECT id FROM memory_facts WHERE user_id = ? AND kind = 'preference'
  UNION SELECT id FROM memory_facts WHERE user_id = ? AND fact_key IS NOT NULL
  UNION SELECT id FROM (SELECT id FROM memory_facts WHERE user_id = ? AND ${FREE_FACT} ORDER BY created_at_ms DESC, seq DESC LIMIT ${n}) AS newest
  UNION SELECT id FROM (SELECT id FROM memory_facts WHERE user_id = ? AND ${FREE_FACT} ORDER BY importance DESC, created_at_ms DESC, seq DESC LIMIT ${n}) AS important
  UNION SELECT id FROM (SELECT record_id AS id FROM memory_access WHERE user_id = ? AND kind = 'fact' ORDER BY last_ms DESC, record_id LIMIT ${n}) AS used`;

const decisionIds = (n: number) => `
  SELECT id FROM (SELECT id FROM memory_decisions WHERE user_id = ? ORDER BY created_at_ms DESC, seq DESC LIMIT ${n}) AS newest
  UNION SELECT id FROM (SELECT record_id AS id FROM memory_access WHERE user_id = ? AND kind = 'decision' ORDER BY last_ms DESC, record_id LIMIT ${n}) AS used`;

const OPEN = "status IN ('todo', 'doing')";
// Due soonest per open status: each walks the (user_id, status, due_at_ms) index and stops at
// the LIMIT (an IN over both statuses would sort them all).
const taskIds = (n: number, closed: boolean) => `
  SELECT id FROM (SELECT id FROM memory_tasks WHERE user_id = ? AND status = 'todo' AND due_at_ms IS NOT NULL ORDER BY due_at_ms, seq LIMIT ${n}) AS due_todo
  UNION SELECT id FROM (SELECT id FROM memory_tasks WHERE user_id = ? AND status = 'doing' AND due_at_ms IS NOT NULL ORDER BY due_at_ms, seq LIMIT ${n}) AS due_doing
  UNION SELECT id FROM (SELECT id FROM memory_tasks WHERE user_id = ? AND ${OPEN} ORDER BY updated_at_ms DESC, seq DESC LIMIT ${n}) AS touched
  UNION SELECT id FROM (SELECT id FROM memory_tasks WHERE user_id = ? AND ${OPEN} AND priority IN ('high', 'urgent') ORDER BY updated_at_ms DESC, seq DESC LIMIT ${n}) AS important
  UNION SELECT id FROM (SELECT record_id AS id FROM memory_access WHERE user_id = ? AND kind = 'task' ORDER BY last_ms DESC, record_id LIMIT ${n}) AS used${
    closed ? `\n  UNION SELECT id FROM (SELECT id FROM memory_tasks WHERE user_id = ? AND status IN ('done', 'cancelled') ORDER BY updated_at_ms DESC, seq DESC LIMIT ${n}) AS recent_closed` : ''
  }`;

const FACT_COLUMNS = ['id', 'seq', 'kind', 'fact_key', 'text', 'importance', 'created_at_ms', 'updated_at_ms', 'source_turn_ids'];
const DECISION_COLUMNS = ['id', 'seq', 'text', 'rationale', 'task_id', 'project_id', 'created_at_ms', 'source_turn_ids'];
const TASK_COLUMNS = ['id', 'seq', 'title', 'status', 'priority', 'due_at_ms', 'due_phrase', 'project_id', 'created_at_ms', 'updated_at_ms', 'source_turn_ids', 'confidence'];

/** Statement texts kept (all forgotten when full): one per shape, so very few. */
const MAX_STATEMENTS = 1000;
const statements = new Map<string, string>();

/**
 * The statement text of shape `key`, built once: every read then hands the driver the same
 * string, whose hash its statement cache has already computed, instead of building and hashing
 * a new one of ~1 KB (the pool's statements are long: a subquery per ordering).
 */
function statement(key: string, build: () => string): string {
  return remembered(statements, key, MAX_STATEMENTS, build);
}

/**
 * Rows of `table` chosen by `where` (on alias r), with their access statistics when `kind` is
 * given: `access_count` and `last_ms`, NULL for a record never used.
 */
function select(table: string, columns: readonly string[], kind: MemoryKind | undefined, where: string): string {
  const cols = columns.map((c) => `r.${c}`).join(', ');
  if (!kind) return `SELECT ${cols} FROM ${table} r WHERE ${where}`;
  return `SELECT ${cols}, a.access_count AS access_count, a.last_ms AS last_ms FROM ${table} r
    LEFT JOIN memory_access a ON a.user_id = r.user_id AND a.kind = '${kind}' AND a.record_id = r.id WHERE ${where}`;
}

/** `UserMemoryStore.recordPool`. */
export async function recordPool(scope: UserScope, options: RecordPoolOptions): Promise<RecordPool> {
  const { db } = scope.ctx;
  const { userId } = scope;
  const n = perOrderOf(options.perOrder);
  const withAccess = options.withAccess === true;
  // Buffered touches (store/access.ts): added to what is read on SQLite with the statistics (no
  // await between taking them and issuing the reads: see `pendingOf`), else written first.
  const overlay = withAccess && db.dialect === 'sqlite';
  if (!overlay) await flushTouches(scope.ctx, userId);
  const pending = overlay ? pendingOf(scope) : new Map<string, PendingTouch>();
  const ids = distinct([...(options.ids ?? []), ...mostRecent(pending, ['fact', 'decision'], n)]);
  const spans = (options.createdWithin ?? []).filter((w) => Number.isFinite(w.startMs) && Number.isFinite(w.endMs) && w.endMs > w.startMs);
  const factKind = withAccess ? 'fact' : undefined;
  const decisionKind = withAccess ? 'decision' : undefined;

  const facts = new Map<string, Row>();
  const decisions = new Map<string, Row>();
  const add = (into: Map<string, Row>, rows: readonly Row[]) => {
    for (const r of rows) into.set(str(r.id), r);
  };
  // The statements are independent: issued together (on PostgreSQL they run on several pooled
  // connections instead of one round trip after another), their rows added in the same order.
  const reads: Array<[Map<string, Row>, Promise<Row[]>]> = [
    [facts, db.all<Row>(statement(`facts|${n}|${withAccess}`, () => select('memory_facts', FACT_COLUMNS, factKind, `r.user_id = ? AND r.id IN (${factIds(n)})`)), [userId, userId, userId, userId, userId, userId])],
    [decisions, db.all<Row>(statement(`decisions|${n}|${withAccess}`, () => select('memory_decisions', DECISION_COLUMNS, decisionKind, `r.user_id = ? AND r.id IN (${decisionIds(n)})`)), [userId, userId, userId])],
  ];
  for (let i = 0; i < ids.length; i += ID_BATCH) {
    const batch = ids.slice(i, i + ID_BATCH);
    const list = () => placeholders(batch.length);
    reads.push([facts, db.all<Row>(statement(`facts-in|${batch.length}|${withAccess}`, () => select('memory_facts', FACT_COLUMNS, factKind, `r.user_id = ? AND r.id IN (${list()})`)), [userId, ...batch])]);
    reads.push([decisions, db.all<Row>(statement(`decisions-in|${batch.length}|${withAccess}`, () => select('memory_decisions', DECISION_COLUMNS, decisionKind, `r.user_id = ? AND r.id IN (${list()})`)), [userId, ...batch])]);
  }
  for (const w of spans) {
    const span = [userId, Math.ceil(w.startMs), Math.ceil(w.endMs)];
    const within = () => `r.user_id = ? AND r.created_at_ms >= ? AND r.created_at_ms < ? ORDER BY r.created_at_ms DESC, r.seq DESC LIMIT ${n}`;
    reads.push([facts, db.all<Row>(statement(`facts-within|${n}|${withAccess}`, () => select('memory_facts', FACT_COLUMNS, factKind, within())), span)]);
    reads.push([decisions, db.all<Row>(statement(`decisions-within|${n}|${withAccess}`, () => select('memory_decisions', DECISION_COLUMNS, decisionKind, within())), span)]);
  }
  const lastRead = db.all<Row>('SELECT project_id, MAX(created_at_ms) AS last_ms FROM memory_decisions WHERE user_id = ? AND project_id IS NOT NULL GROUP BY project_id', [userId]);
  const taskRead = options.tasks ? taskPool(scope, options.tasks, withAccess, overlay) : undefined;
  taskRead?.catch(() => undefined); // awaited below
  const [rows, last] = await Promise.all([Promise.all(reads.map(([, read]) => read)), lastRead]);
  reads.forEach(([into], i) => add(into, rows[i]!));

  // The orders of listFacts (most recently updated first) and listDecisions (newest first).
  const desc = (a: Row, b: Row, at: string) => num(b[at]) - num(a[at]) || num(b.seq) - num(a.seq);
  const factRows = [...facts.values()].sort((a, b) => desc(a, b, 'updated_at_ms'));
  const decisionRows = [...decisions.values()].sort((a, b) => desc(a, b, 'created_at_ms'));
  const pool: RecordPool = {
    facts: factRows.map((r) => factFromRow(userId, r)),
    decisions: decisionRows.map((r) => decisionFromRow(userId, r)),
    lastDecisionMs: new Map(last.map((r) => [str(r.project_id), num(r.last_ms)])),
  };
  const taskPart = taskRead ? await taskRead : undefined;
  const tasks = taskPart?.rows;
  if (tasks) pool.tasks = tasks.map((r) => taskFromRow(userId, r));
  if (withAccess) {
    const access = new Map<string, { count: number; lastMs: number }>();
    const note = (kind: MemoryKind, list: readonly Row[], pending: ReadonlyMap<string, PendingTouch>) => {
      for (const r of list) {
        const key = `${kind}:${str(r.id)}`;
        // Touches still in the buffer count as written (see `pendingOf`).
        const p = pending.get(key);
        const stored = r.access_count !== null && r.access_count !== undefined;
        if (stored || p) access.set(key, { count: (stored ? num(r.access_count) : 0) + (p?.count ?? 0), lastMs: Math.max(stored ? num(r.last_ms) : -Infinity, p?.lastMs ?? -Infinity) });
      }
    };
    note('fact', factRows, pending);
    note('decision', decisionRows, pending);
    if (taskPart) note('task', taskPart.rows, taskPart.pending);
    pool.access = access;
  }
  return pool;
}

/**
 * A copy of the user's buffered touches (store/access.ts), which the pool adds to the statistics
 * it reads and whose most recent records it includes (the "most recently used" ordering reads
 * only the written ones: the pool is then a superset of the one the written touches would give).
 * SQLite runs statements in the order issued on one connection, so touches taken just before
 * the reads are issued are in none of them. (On PostgreSQL a write under way could land in
 * them twice: the touches are written first there.)
 */
function pendingOf(scope: UserScope): Map<string, PendingTouch> {
  const copy = new Map<string, PendingTouch>();
  for (const [key, p] of pendingTouches(scope)) copy.set(key, { ...p });
  return copy;
}

/** Ids of the `n` most recently touched pending records of each of `kinds`. */
function mostRecent(pending: ReadonlyMap<string, PendingTouch>, kinds: readonly MemoryKind[], n: number): string[] {
  if (pending.size === 0) return [];
  return kinds.flatMap((kind) =>
    [...pending.values()]
      .filter((p) => p.kind === kind)
      .sort((a, b) => b.lastMs - a.lastMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, n)
      .map((p) => p.id),
  );
}

/** The task rows of the pool (see the module comment), in `listTasks` order. */
async function taskPool(scope: UserScope, options: TaskPoolOptions, withAccess: boolean, overlay: boolean): Promise<{ rows: Row[]; pending: ReadonlyMap<string, PendingTouch> }> {
  const { db } = scope.ctx;
  const { userId } = scope;
  const n = perOrderOf(options.perOrder);
  const closed = options.closed === true;
  const kind = withAccess ? 'task' : undefined;
  const ids = distinct(options.ids);
  if (options.about) {
    // Titles of every open task, so that no task the query names is left out of the pool.
    const about = options.about;
    const seen = new Set(ids);
    for (const t of await openTitles(scope)) {
      if (!seen.has(t.id) && about(t)) {
        seen.add(t.id);
        ids.push(t.id);
      }
    }
  }
  // Taken here, after the awaits above, with no await before the reads are issued (see `pendingOf`).
  const pending = overlay ? pendingOf(scope) : new Map<string, PendingTouch>();
  for (const id of mostRecent(pending, ['task'], n)) if (!ids.includes(id)) ids.push(id);
  const params = Array.from({ length: closed ? 7 : 6 }, () => userId);
  const reads = [db.all<Row>(statement(`tasks|${n}|${closed}|${withAccess}`, () => select('memory_tasks', TASK_COLUMNS, kind, `r.user_id = ? AND r.id IN (${taskIds(n, closed)})`)), params)];
  for (let i = 0; i < ids.length; i += ID_BATCH) {
    const batch = ids.slice(i, i + ID_BATCH);
    reads.push(db.all<Row>(statement(`tasks-in|${batch.length}|${withAccess}`, () => select('memory_tasks', TASK_COLUMNS, kind, `r.user_id = ? AND r.id IN (${placeholders(batch.length)})`)), [userId, ...batch]));
  }
  const byId = new Map<string, Row>();
  for (const rows of await Promise.all(reads)) {
    for (const r of rows) {
      const isOpen = r.status === 'todo' || r.status === 'doing';
      // (Recently used tasks and full-text hits may be closed.)
      if (isOpen || closed) byId.set(str(r.id), r);
    }
  }
  return { rows: [...byId.values()].sort(listOrder), pending };
}

interface OpenTitle {
  id: string;
  title: string;
  projectId: string | null;
}

/** Users whose open task titles are remembered per store (all forgotten when full). */
const TITLE_USERS = 1000;
const titleCache = new WeakMap<StoreContext, Map<string, { version: number; titles: OpenTitle[] }>>();

/**
 * Id, title and project of every open task of the user, remembered per memory version: every
 * rebuild checks them all, and they change only with a write, which bumps the version (in the
 * same transaction). The version is read first, so the titles are at least as new as the version
 * they are kept under; another process's write bumps it too, so nothing stale is served.
 */
async function openTitles(scope: UserScope): Promise<OpenTitle[]> {
  const { db } = scope.ctx;
  const row = await db.get<Row>('SELECT version FROM memory_versions WHERE user_id = ?', [scope.userId]);
  const version = num(row?.version);
  let users = titleCache.get(scope.ctx);
  if (!users) titleCache.set(scope.ctx, (users = new Map()));
  const known = users.get(scope.userId);
  if (known && known.version === version) return known.titles;
  const rows = await db.all<Row>(`SELECT id, title, project_id FROM memory_tasks WHERE user_id = ? AND ${OPEN}`, [scope.userId]);
  const titles = rows.map((r) => ({ id: str(r.id), title: str(r.title), projectId: r.project_id === null || r.project_id === undefined ? null : str(r.project_id) }));
  if (users.size >= TITLE_USERS && !users.has(scope.userId)) users.clear();
  users.set(scope.userId, { version, titles });
  return titles;
}

/** `listTasks`' order: open tasks first by due time (undated last), then the rest by update time, newest first. */
function listOrder(a: Row, b: Row): number {
  const openA = a.status === 'todo' || a.status === 'doing';
  const openB = b.status === 'todo' || b.status === 'doing';
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

function perOrderOf(perOrder: number): number {
  return Math.min(MAX_POOL_PER_ORDER, Math.max(1, Math.floor(Number.isFinite(perOrder) ? perOrder : 1)));
}

function distinct(ids: readonly string[] | undefined): string[] {
  return [...new Set((ids ?? []).filter((id) => typeof id === 'string' && id !== ''))];
}
