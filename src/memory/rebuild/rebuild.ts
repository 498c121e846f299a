/**
 * `rebuildContext`: the six-layer context for one query, within a token budget (DESIGN.md
 * "Memory engine", step 4). Reads the user's memory, ranks candidates (full text, entities,
 * recency, importance, access), packs them with the real tokenizer, renders them
 * deterministically, and records what was used so it weighs more next time.
 */
import { sha256Hex } from '../../core/hash.js';
import { createSearchAnalyzer, memoizeAnalyzer, type SearchAnalyzer } from '../analyzer.js';
import type { RebuiltContext } from '../context.js';
import type { MemoryKind, Task } from '../model.js';
import type { SearchHit, SearchOptions, UserMemoryStore } from '../memory-store.js';
import { zoneId } from '../format-time.js';
import { clockBlock, clockReserveTokens, insertClock } from './clock.js';
import { historyCandidates, turnSearch } from './history.js';
import { activeProject, memoryCandidates, nextTaskTierChange, profileCandidates, projectCandidates, systemCandidates, taskCandidates, type RecordInputs } from './layers.js';
import { optionsHash, resolveRebuildOptions, type RebuildOptions, type ResolvedRebuildOptions } from './options.js';
import { packContext } from './pack.js';
import { readRecords } from './records.js';
import { analyseQuery, type QueryInfo } from './query.js';
import { normaliseHits } from './score.js';
import { fuseByRank, semanticHits } from '../semantic/semantic-recall.js';

/** Hot-cache kind of rebuild results. */
export const REBUILD_CACHE_KIND = 'rebuild';

/**
 * A cached rebuild and the span of rounded `now` it holds for: `fromMs <= now < untilMs`. The
 * key has user, query, memory version and options (the scoring clock among them), not `now`;
 * within the span no input that depends on `now` changes (see `stableSpan`), so the cached text
 * is exactly what a rebuild would produce.
 */
interface CachedRebuild {
  context: RebuiltContext;
  fromMs: number;
  untilMs: number;
}

const isCachedRebuild = (v: unknown): v is CachedRebuild =>
  typeof v === 'object' && v !== null && typeof (v as CachedRebuild).fromMs === 'number' && typeof (v as CachedRebuild).untilMs === 'number' && typeof (v as CachedRebuild).context === 'object';

// The default analyzer remembers what it analysed: task titles and the sentences of stored
// turns come back on every rebuild. (An analyzer passed in options is used as it is.)
let defaultAnalyzer: SearchAnalyzer | undefined;

/** Builds the context for `query` from `store`'s memory; see `RebuildOptions` for the knobs. */
export async function rebuildContext(store: UserMemoryStore, query: string, options: RebuildOptions): Promise<RebuiltContext> {
  const o = resolveRebuildOptions(options);
  const analyzer = options.analyzer ?? (defaultAnalyzer ??= memoizeAnalyzer(createSearchAnalyzer()));
  const version = await store.version();
  const ns = { userId: store.userId, kind: REBUILD_CACHE_KIND };
  // Hashed only for a rebuild that may be cached (processMessage's never is).
  const key = options.cache ? sha256Hex(JSON.stringify([query, version, optionsHash(o)])) : '';
  if (options.cache) {
    const hit = await options.cache.get<CachedRebuild>(ns, key).catch(() => undefined);
    if (isCachedRebuild(hit) && hit.context.memoryVersion === version && hit.fromMs <= o.nowMs && o.nowMs < hit.untilMs) {
      if (o.touch) await touchUsed(store, hit.context, o.nowMs);
      return withClock({ ...hit.context, cached: true }, o);
    }
  }
  // The clock's tokens are set aside first (when the budget holds them); the layers fill the rest.
  const clockReserve = o.clock ? clockReserveTokens(o.timeZone, o.tokens) : 0;
  const layersBudget = clockReserve <= o.budgetTokens ? o.budgetTokens - clockReserve : o.budgetTokens;

  // The searches need only the query's terms: they run while the projects are read.
  const searching: Promise<[SearchHit[], SearchHit[]]> = analyzer(query).length > 0 || (o.semantic && query.trim() !== '') ? fullTextHits(store, query, o) : Promise.resolve([[], []]);
  searching.catch(() => undefined); // awaited below
  const projects = await store.listProjects();
  const q = analyseQuery(query, analyzer, projects, o.nowMs, o.timeZone);
  const [recordHits, turnHits] = await searching;
  // The history layer's reads (turns, neighbourhoods) need only the turn hits: they run while
  // the records are read (on PostgreSQL, round trips overlap instead of adding up).
  const history = historyCandidates(store, q, o, analyzer, turnHits);
  history.catch(() => undefined); // awaited below; this only keeps an early throw from leaving it unhandled
  // Closed tasks are read only when the query asks about finished work.
  const records = await readRecords(store, q, recordHits, o, analyzer);
  const { facts, decisions, tasks } = records;
  const inputs: RecordInputs = {
    facts,
    tasks,
    projects,
    decisions,
    fullText: normaliseHits(recordHits),
    access: records.access,
    ...(records.lastDecisionMs ? { lastDecisionMs: records.lastDecisionMs } : {}),
  };
  const project = activeProject(inputs);
  const projectDecisions = project ? await records.decisionsOf(project.id) : [];

  const candidates = [
    ...systemCandidates(o.systemPrompt),
    ...profileCandidates(facts),
    ...projectCandidates(project, projectDecisions, o.timeZone),
    ...taskCandidates(inputs, q, o, analyzer),
    ...(await history),
    ...memoryCandidates(inputs, q, o, project?.id),
  ];
  const packed = packContext(candidates, layersBudget, o.layerShares, o.tokens);
  const context: RebuiltContext = {
    text: packed.text,
    tokens: packed.tokens,
    budgetTokens: o.budgetTokens,
    layers: packed.layers,
    dropped: packed.dropped,
    stablePrefixChars: packed.stablePrefixChars,
    memoryVersion: version,
    cached: false,
  };
  if (options.cache) {
    // The hot tier is lossy by contract: a failed write only costs a rebuild later. Not awaited
    // (the entry is encoded in the call): the caller does not wait for the hot tier's round trip.
    const entry: CachedRebuild = { context, ...stableSpan(o, tasks, q) };
    options.cache.set(ns, key, entry, { ttlMs: o.cacheTtlMs }).catch(() => undefined);
  }
  if (o.touch) await touchUsed(store, context, o.nowMs);
  return withClock(context, o);
}

/**
 * The context with its clock block (rebuilt for every request, cached or not: the layers do not
 * depend on the minute, the clock does); unchanged when the clock is off or does not fit.
 */
function withClock(context: RebuiltContext, o: ResolvedRebuildOptions): RebuiltContext {
  if (!o.clock || clockReserveTokens(o.timeZone, o.tokens) > o.budgetTokens) return context;
  const block = clockBlock(o.nowMs, o.timeZone);
  const clocked = insertClock(context, block, o.tokens);
  return { ...context, text: clocked.text, tokens: clocked.tokens, clock: { text: block, tokens: clocked.clockTokens, at: new Date(o.nowMs).toISOString(), timeZone: zoneId(o.timeZone) } };
}

/**
 * The rounded instants `now` for which a rebuild from the same memory renders the same context:
 * `now` enters it through the scoring clock (in the cache key), the task tiers (until the next
 * task becomes due soon or overdue) and the query's date words (resolved against `now`: such a
 * rebuild holds for its own minute only).
 */
function stableSpan(o: ResolvedRebuildOptions, tasks: readonly Task[], q: QueryInfo): { fromMs: number; untilMs: number } {
  if (q.dateWindows.length > 0) return { fromMs: o.nowMs, untilMs: o.nowMs + o.nowGranularityMs };
  return { fromMs: o.nowMs, untilMs: Math.min(o.scoreNowMs + o.scoreGranularityMs, nextTaskTierChange(tasks, o.nowMs)) };
}

/**
 * The query's hits among memory records and among turns: full text (one store call when it
 * can), fused with the nearest vectors when semantic recall is on and answers.
 */
async function fullTextHits(store: UserMemoryStore, query: string, o: ResolvedRebuildOptions): Promise<[SearchHit[], SearchHit[]]> {
  const searches: SearchOptions[] = [{ kinds: ['task', 'decision', 'fact'], limit: o.searchLimit }, turnSearch(o)];
  const semantic = o.semantic ? semanticHits(o.semantic, store.userId, query, searches) : undefined;
  let words: [SearchHit[], SearchHit[]];
  if (store.searchMany) {
    const [records = [], turns = []] = await store.searchMany(query, searches);
    words = [records, turns];
  } else words = [await store.search(query, searches[0]), await store.search(query, searches[1])];
  const near = semantic ? await semantic : undefined;
  if (!near) return words;
  return [fuseByRank([words[0], near[0]!], searches[0]!.limit!), fuseByRank([words[1], near[1]!], searches[1]!.limit!)];
}

const TOUCHABLE: ReadonlySet<string> = new Set<MemoryKind>(['task', 'project', 'decision', 'fact']);

/** Marks every memory record in the context as used at `nowMs`. */
async function touchUsed(store: UserMemoryStore, context: RebuiltContext, nowMs: number): Promise<void> {
  const byKind = new Map<MemoryKind, string[]>();
  for (const layer of context.layers) {
    for (const item of layer.items) {
      const kind = (item.kind === 'preference' ? 'fact' : item.kind) as MemoryKind;
      if (!TOUCHABLE.has(kind)) continue;
      const ids = byKind.get(kind) ?? [];
      ids.push(item.id);
      byKind.set(kind, ids);
    }
  }
  if (byKind.size === 0) return;
  // One warm statement when the store can (on PostgreSQL each commit is a round trip and a WAL flush).
  if (store.touchMany) return store.touchMany([...byKind].map(([kind, ids]) => ({ kind, ids })), nowMs);
  await Promise.all([...byKind].map(([kind, ids]) => store.touch(kind, ids, nowMs)));
}
