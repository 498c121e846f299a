/**
 * `rebuildContext`: the six-layer context for one query, within a token budget (DESIGN.md
 * "Memory engine", step 4). Reads the user's memory, ranks candidates (full text, entities,
 * recency, importance, access), packs them with the real tokenizer, renders them
 * deterministically, and records what was used so it weighs more next time.
 */
import { sha256Hex } from '../../core/hash.js';
import { createSearchAnalyzer, memoizeAnalyzer, type SearchAnalyzer } from '../analyzer.js';
import type { RebuiltContext } from '../context.js';
import type { MemoryKind } from '../model.js';
import type { SearchHit, SearchOptions, UserMemoryStore } from '../memory-store.js';
import { historyCandidates, turnSearch } from './history.js';
import { activeProject, memoryCandidates, profileCandidates, projectCandidates, systemCandidates, taskCandidates, type RecordInputs } from './layers.js';
import { optionsHash, resolveRebuildOptions, type RebuildOptions, type ResolvedRebuildOptions } from './options.js';
import { packContext } from './pack.js';
import { readRecords } from './records.js';
import { analyseQuery, asksAboutDone } from './query.js';
import { normaliseHits } from './score.js';

/** Hot-cache kind of rebuild results. */
export const REBUILD_CACHE_KIND = 'rebuild';

// The default analyzer remembers what it analysed: task titles and the sentences of stored
// turns come back on every rebuild. (An analyzer passed in options is used as it is.)
let defaultAnalyzer: SearchAnalyzer | undefined;

/** Builds the context for `query` from `store`'s memory; see `RebuildOptions` for the knobs. */
export async function rebuildContext(store: UserMemoryStore, query: string, options: RebuildOptions): Promise<RebuiltContext> {
  const o = resolveRebuildOptions(options);
  const analyzer = options.analyzer ?? (defaultAnalyzer ??= memoizeAnalyzer(createSearchAnalyzer()));
  const version = await store.version();
  const ns = { userId: store.userId, kind: REBUILD_CACHE_KIND };
  const key = sha256Hex(JSON.stringify([query, version, optionsHash(o)]));
  if (options.cache) {
    const hit = await options.cache.get<RebuiltContext>(ns, key).catch(() => undefined);
    if (hit && hit.memoryVersion === version) {
      if (o.touch) await touchUsed(store, hit, o.nowMs);
      return { ...hit, cached: true };
    }
  }

  // Closed tasks are candidates only when the query asks about finished work.
  const [tasks, projects] = await Promise.all([store.listTasks(asksAboutDone(query) ? {} : { status: ['todo', 'doing'] }), store.listProjects()]);
  const q = analyseQuery(query, analyzer, projects, o.nowMs, o.timeZone);
  const [recordHits, turnHits] = q.terms.size > 0 ? await fullTextHits(store, query, o) : [[], []];
  const records = await readRecords(store, q, recordHits, o.memoryPool);
  const { facts, decisions } = records;
  const memoryKinds: Array<[MemoryKind, string[]]> = [
    ['task', tasks.map((t) => t.id)],
    ['fact', facts.map((f) => f.id)],
    ['decision', decisions.map((d) => d.id)],
  ];
  const access = new Map<string, { count: number; lastMs: number }>();
  for (const [kind, ids] of memoryKinds) {
    if (ids.length === 0) continue;
    for (const [id, stats] of await store.accessStats(kind, ids)) access.set(`${kind}:${id}`, stats);
  }
  const inputs: RecordInputs = {
    facts,
    tasks,
    projects,
    decisions,
    fullText: normaliseHits(recordHits),
    access,
    ...(records.lastDecisionMs ? { lastDecisionMs: records.lastDecisionMs } : {}),
  };
  const project = activeProject(inputs);
  const projectDecisions = project ? await records.decisionsOf(project.id) : [];

  const candidates = [
    ...systemCandidates(o.systemPrompt),
    ...profileCandidates(facts),
    ...projectCandidates(project, projectDecisions, o.timeZone),
    ...taskCandidates(inputs, q, o, analyzer),
    ...(await historyCandidates(store, q, o, analyzer, turnHits)),
    ...memoryCandidates(inputs, q, o, analyzer, project?.id),
  ];
  const packed = packContext(candidates, o.budgetTokens, o.layerShares, o.tokens);
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
    // The hot tier is lossy by contract: a failed write only costs a rebuild later.
    await options.cache.set(ns, key, context, { ttlMs: o.cacheTtlMs }).catch(() => undefined);
  }
  if (o.touch) await touchUsed(store, context, o.nowMs);
  return context;
}

/** The query's full-text hits among memory records and among turns; one store call when it can. */
async function fullTextHits(store: UserMemoryStore, query: string, o: ResolvedRebuildOptions): Promise<[SearchHit[], SearchHit[]]> {
  const searches: SearchOptions[] = [{ kinds: ['task', 'decision', 'fact'], limit: o.searchLimit }, turnSearch(o)];
  if (store.searchMany) {
    const [records = [], turns = []] = await store.searchMany(query, searches);
    return [records, turns];
  }
  return [await store.search(query, searches[0]), await store.search(query, searches[1])];
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
  for (const [kind, ids] of byKind) await store.touch(kind, ids, nowMs);
}
