/**
 * The records a rebuild ranks — tasks, facts, decisions — with their access statistics. From a
 * store with `recordPool`, bounded pools (the best by the score's static signals, the query's
 * full-text hits and dates, and every open task the query is about; see
 * store/record-pool.ts), read with their statistics in one call; from any other store, all of
 * them, then the statistics of each.
 */
import type { SearchAnalyzer } from '../analyzer.js';
import type { SearchHit, UserMemoryStore } from '../memory-store.js';
import type { Decision, Fact, MemoryKind, Task } from '../model.js';
import type { ResolvedRebuildOptions } from './options.js';
import { taskMention, type QueryInfo } from './query.js';

type AccessStats = Map<string, { count: number; lastMs: number }>;

/** What `readRecords` returns. */
export interface RankedRecords {
  facts: Fact[];
  decisions: Decision[];
  /** Open tasks (and closed ones when the query asks about finished work). */
  tasks: Task[];
  /** Access statistics keyed by `kind:id`. */
  access: AccessStats;
  /** Newest decision per project, Unix ms (with a pool, `decisions` may not hold it). */
  lastDecisionMs?: ReadonlyMap<string, number>;
  /** Every decision of a project (the project layer shows them all). */
  decisionsOf(projectId: string): Promise<Decision[]>;
}

/** Reads the records for `query`; `o.memoryPool` and `o.taskPool` bound the pools. */
export async function readRecords(store: UserMemoryStore, query: QueryInfo, hits: readonly SearchHit[], o: ResolvedRebuildOptions, analyzer: SearchAnalyzer): Promise<RankedRecords> {
  if (!store.recordPool) {
    const [tasks, facts, decisions] = await Promise.all([
      store.listTasks(query.asksDone ? {} : { status: ['todo', 'doing'] }),
      store.listFacts(),
      store.listDecisions(),
    ]);
    const access = await accessOf(store, tasks, facts, decisions);
    return { tasks, facts, decisions, access, decisionsOf: async (id) => decisions.filter((d) => d.projectId === id) };
  }
  const ids = hits.filter((h) => h.kind === 'fact' || h.kind === 'decision').map((h) => h.id);
  const taskIds = hits.filter((h) => h.kind === 'task').map((h) => h.id);
  // Date windows widen the span a record was talked about in; its creation time is what counts.
  const createdWithin = query.dateWindows.map((w) => ({ startMs: w.startMs, endMs: w.endMs }));
  // The tasks the query is about are protected (never dropped): the pool must hold every one.
  // (A full-text hit scoring >= 0.5 is also "about"; every task hit is in `taskIds`.)
  const about = (t: { title: string; projectId: string | null }) => taskMention(t, query, analyzer) >= 0.5;
  const pool = await store.recordPool({
    perOrder: o.memoryPool,
    ids,
    createdWithin,
    tasks: { perOrder: o.taskPool, ids: taskIds, closed: query.asksDone, about },
    withAccess: true,
  });
  let { tasks, access } = pool;
  // A store that does not know the newer options: read the tasks and statistics the old way.
  tasks ??= await store.listTasks(query.asksDone ? {} : { status: ['todo', 'doing'] });
  access ??= await accessOf(store, tasks, pool.facts, pool.decisions);
  return { facts: pool.facts, decisions: pool.decisions, tasks, access, lastDecisionMs: pool.lastDecisionMs, decisionsOf: (id) => store.listDecisions({ projectId: id }) };
}

/** Access statistics of the records, one lookup per kind. */
async function accessOf(store: UserMemoryStore, tasks: readonly Task[], facts: readonly Fact[], decisions: readonly Decision[]): Promise<AccessStats> {
  const kinds: Array<[MemoryKind, string[]]> = [
    ['task', tasks.map((t) => t.id)],
    ['fact', facts.map((f) => f.id)],
    ['decision', decisions.map((d) => d.id)],
  ];
  const stats = await Promise.all(kinds.map(([kind, ids]) => (ids.length === 0 ? new Map<string, { count: number; lastMs: number }>() : store.accessStats(kind, ids))));
  const access: AccessStats = new Map();
  kinds.forEach(([kind], i) => {
    for (const [id, s] of stats[i]!) access.set(`${kind}:${id}`, s);
  });
  return access;
}
