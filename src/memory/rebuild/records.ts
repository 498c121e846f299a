/**
 * The facts and decisions a rebuild ranks: from a store with `recordPool`, a bounded pool (the
 * best by the score's static signals, the query's full-text hits and dates; see
 * store/record-pool.ts); from any other store, all of them.
 */
import type { SearchHit, UserMemoryStore } from '../memory-store.js';
import type { Decision, Fact } from '../model.js';
import type { QueryInfo } from './query.js';

/** What `readRecords` returns. */
export interface RankedRecords {
  facts: Fact[];
  decisions: Decision[];
  /** Newest decision per project, Unix ms (with a pool, `decisions` may not hold it). */
  lastDecisionMs?: ReadonlyMap<string, number>;
  /** Every decision of a project (the project layer shows them all). */
  decisionsOf(projectId: string): Promise<Decision[]>;
}

/** Reads the records for `query`; `perOrder` bounds the pool (see `RebuildOptions.memoryPool`). */
export async function readRecords(store: UserMemoryStore, query: QueryInfo, hits: readonly SearchHit[], perOrder: number): Promise<RankedRecords> {
  if (!store.recordPool) {
    const [facts, decisions] = await Promise.all([store.listFacts(), store.listDecisions()]);
    return { facts, decisions, decisionsOf: async (id) => decisions.filter((d) => d.projectId === id) };
  }
  const ids = hits.filter((h) => h.kind === 'fact' || h.kind === 'decision').map((h) => h.id);
  // Date windows widen the span a record was talked about in; its creation time is what counts.
  const createdWithin = query.dateWindows.map((w) => ({ startMs: w.startMs, endMs: w.endMs }));
  const pool = await store.recordPool({ perOrder, ids, createdWithin });
  return { ...pool, decisionsOf: (id) => store.listDecisions({ projectId: id }) };
}
