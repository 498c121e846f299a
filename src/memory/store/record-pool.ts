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
 * Tasks likewise, when asked: see task-pool.ts.
 *
 * Access statistics come with the rows (a LEFT JOIN on `memory_access`'s primary key) instead of
 * a lookup per record afterwards: one read per record instead of two, and no `IN` lists.
 */
import type { RecordPool, RecordPoolOptions } from '../memory-store.js';
import { flushTouches, NO_TOUCHES, pendingTouches, type PendingTouch } from './access.js';
import type { MemoryKind } from '../model.js';
import type { UserScope } from './context.js';
import { decisionFromRow } from './decisions.js';
import { factFromRow } from './facts.js';
import { mostRecent, perOrderOf, select, statement } from './pool-parts.js';
import { distinctIds, ID_BATCH, num, placeholders, str, type Row } from './rows.js';
import { taskPool } from './task-pool.js';
import { taskFromRow } from './tasks.js';


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

const FACT_COLUMNS = ['id', 'seq', 'kind', 'fact_key', 'text', 'importance', 'created_at_ms', 'updated_at_ms', 'source_turn_ids'];
const DECISION_COLUMNS = ['id', 'seq', 'text', 'rationale', 'task_id', 'project_id', 'created_at_ms', 'source_turn_ids'];

/** `UserMemoryStore.recordPool`. */
export async function recordPool(scope: UserScope, options: RecordPoolOptions): Promise<RecordPool> {
  const { db } = scope.ctx;
  const { userId } = scope;
  const n = perOrderOf(options.perOrder);
  const withAccess = options.withAccess === true;
  // Buffered touches (store/access.ts): added to what is read on SQLite with the statistics (no
  // await between taking them and issuing the reads: see pool-parts.ts), else written first.
  const overlay = withAccess && db.dialect === 'sqlite';
  if (!overlay) await flushTouches(scope.ctx, userId);
  const pending = overlay ? pendingTouches(scope) : NO_TOUCHES;
  const ids = distinctIds([...(options.ids ?? []), ...mostRecent(pending, ['fact', 'decision'], n)]);
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
    // `statsOf(r)`: the row holding r's written statistics (r itself when read with them).
    const note = (kind: MemoryKind, list: readonly Row[], pending: ReadonlyMap<string, PendingTouch>, statsOf: (r: Row) => Row | undefined = (r) => r) => {
      for (const r of list) {
        const key = `${kind}:${str(r.id)}`;
        // Touches still in the buffer count as written (see pool-parts.ts).
        const p = pending.get(key);
        const s = statsOf(r);
        const stored = s?.access_count !== null && s?.access_count !== undefined;
        if (stored || p) access.set(key, { count: (stored ? num(s.access_count) : 0) + (p?.count ?? 0), lastMs: Math.max(stored ? num(s.last_ms) : -Infinity, p?.lastMs ?? -Infinity) });
      }
    };
    note('fact', factRows, pending);
    note('decision', decisionRows, pending);
    if (taskPart) note('task', taskPart.rows, taskPart.pending, (r) => taskPart.stats.get(str(r.id)));
    pool.access = access;
  }
  return pool;
}
