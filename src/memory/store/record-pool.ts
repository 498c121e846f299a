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
 */
import type { RecordPool, RecordPoolOptions } from '../memory-store.js';
import type { UserScope } from './context.js';
import { decisionFromRow } from './decisions.js';
import { factFromRow } from './facts.js';
import { num, placeholders, str, type Row } from './rows.js';

/** Ids per `IN (…)` list. */
const ID_BATCH = 500;
/** Largest `perOrder` honoured (each distinct value is one more prepared statement). */
export const MAX_POOL_PER_ORDER = 100_000;

const FREE_FACT = "kind = 'fact' AND fact_key IS NULL";

const factsSql = (n: number) => `SELECT * FROM memory_facts WHERE user_id = ? AND (kind = 'preference' OR fact_key IS NOT NULL OR id IN (
  SELECT id FROM (SELECT id FROM memory_facts WHERE user_id = ? AND ${FREE_FACT} ORDER BY created_at_ms DESC, seq DESC LIMIT ${n}) AS newest
  UNION SELECT id FROM (SELECT id FROM memory_facts WHERE user_id = ? AND ${FREE_FACT} ORDER BY importance DESC, created_at_ms DESC, seq DESC LIMIT ${n}) AS important
  UNION SELECT id FROM (SELECT record_id AS id FROM memory_access WHERE user_id = ? AND kind = 'fact' ORDER BY last_ms DESC, record_id LIMIT ${n}) AS used))`;

const decisionsSql = (n: number) => `SELECT * FROM memory_decisions WHERE user_id = ? AND id IN (
  SELECT id FROM (SELECT id FROM memory_decisions WHERE user_id = ? ORDER BY created_at_ms DESC, seq DESC LIMIT ${n}) AS newest
  UNION SELECT id FROM (SELECT record_id AS id FROM memory_access WHERE user_id = ? AND kind = 'decision' ORDER BY last_ms DESC, record_id LIMIT ${n}) AS used)`;

/** `UserMemoryStore.recordPool`. */
export async function recordPool(scope: UserScope, options: RecordPoolOptions): Promise<RecordPool> {
  const { db } = scope.ctx;
  const { userId } = scope;
  const n = Math.min(MAX_POOL_PER_ORDER, Math.max(1, Math.floor(Number.isFinite(options.perOrder) ? options.perOrder : 1)));
  const ids = [...new Set((options.ids ?? []).filter((id) => typeof id === 'string' && id !== ''))];
  const spans = (options.createdWithin ?? []).filter((w) => Number.isFinite(w.startMs) && Number.isFinite(w.endMs) && w.endMs > w.startMs);

  const facts = new Map<string, Row>();
  const decisions = new Map<string, Row>();
  const add = (into: Map<string, Row>, rows: readonly Row[]) => {
    for (const r of rows) into.set(str(r.id), r);
  };
  add(facts, await db.all<Row>(factsSql(n), [userId, userId, userId, userId]));
  add(decisions, await db.all<Row>(decisionsSql(n), [userId, userId, userId]));
  for (let i = 0; i < ids.length; i += ID_BATCH) {
    const batch = ids.slice(i, i + ID_BATCH);
    const list = placeholders(batch.length);
    add(facts, await db.all<Row>(`SELECT * FROM memory_facts WHERE user_id = ? AND id IN (${list})`, [userId, ...batch]));
    add(decisions, await db.all<Row>(`SELECT * FROM memory_decisions WHERE user_id = ? AND id IN (${list})`, [userId, ...batch]));
  }
  for (const w of spans) {
    const span = [userId, Math.ceil(w.startMs), Math.ceil(w.endMs)];
    add(facts, await db.all<Row>(`SELECT * FROM memory_facts WHERE user_id = ? AND created_at_ms >= ? AND created_at_ms < ? ORDER BY created_at_ms DESC, seq DESC LIMIT ${n}`, span));
    add(decisions, await db.all<Row>(`SELECT * FROM memory_decisions WHERE user_id = ? AND created_at_ms >= ? AND created_at_ms < ? ORDER BY created_at_ms DESC, seq DESC LIMIT ${n}`, span));
  }
  const last = await db.all<Row>('SELECT project_id, MAX(created_at_ms) AS last_ms FROM memory_decisions WHERE user_id = ? AND project_id IS NOT NULL GROUP BY project_id', [userId]);

  // The orders of listFacts (most recently updated first) and listDecisions (newest first).
  const desc = (a: Row, b: Row, at: string) => num(b[at]) - num(a[at]) || num(b.seq) - num(a.seq);
  return {
    facts: [...facts.values()].sort((a, b) => desc(a, b, 'updated_at_ms')).map((r) => factFromRow(userId, r)),
    decisions: [...decisions.values()].sort((a, b) => desc(a, b, 'created_at_ms')).map((r) => decisionFromRow(userId, r)),
    lastDecisionMs: new Map(last.map((r) => [str(r.project_id), num(r.last_ms)])),
  };
}
