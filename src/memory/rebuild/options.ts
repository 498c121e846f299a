/**
 * Options of `rebuildContext`, their defaults, and the hash that keys cached rebuilds.
 */
import { sha256Hex } from '../../core/hash.js';
import { validateTimeZone, type TimeZone } from '../../core/time-zone.js';
import { UsageError } from '../../errors.js';
import type { HotCache } from '../../store/hot-cache.js';
import type { TokenCounter } from '../../text/tokens.js';
import type { SearchAnalyzer } from '../analyzer.js';
import { LAYER_NAMES, type LayerName } from '../context.js';
import type { SemanticRecall } from '../semantic/semantic-recall.js';

/** Weights of the retrieval signals; each signal is 0..1, the score is their weighted sum. */
export interface RetrievalWeights {
  /** Full-text (BM25) score, normalised by the best hit of the same search. */
  fullText: number;
  /** Share of the query's entities (names, projects, task titles, calendar dates) the item matches. */
  entity: number;
  /** Exponential decay with age (half-life `recencyHalfLifeMs`). */
  recency: number;
  /** Fact importance, task priority. */
  importance: number;
  /** How often the item was used in earlier contexts, decaying while idle. */
  access: number;
}

/** Options of `rebuildContext`. */
export interface RebuildOptions {
  /** Token counter used for every budget decision (the real tokenizer). */
  tokens: TokenCounter;
  /** Total budget of the rendered context, tokens (default 2000). */
  budgetTokens?: number;
  /** Share of the budget reserved for each layer (0..1, normalised); unused quota flows on. */
  layerShares?: Partial<Record<LayerName, number>>;
  /** The instant the context is built for, Unix ms (default `Date.now()`), rounded down to `nowGranularityMs`. */
  now?: number;
  /** Rounding of `now`, ms (default 60 000): rebuilds within one minute are identical (a cached one may serve longer, see `scoreGranularityMs`). */
  nowGranularityMs?: number;
  /**
   * Rounding of the clock that recency and access decay are computed at, ms (default 3 600 000,
   * one hour; never finer than `nowGranularityMs`). Due-time tiers ("overdue", "due soon") and
   * date words use the rounded `now` itself. With a 30-day half-life an hour moves a decay by
   * 0.1%; what it buys is that a context stays the same from one minute to the next unless a
   * due time or a date word says otherwise, so a cached rebuild can serve the following minutes
   * exactly (rebuild.ts).
   */
  scoreGranularityMs?: number;
  /** The user's time zone for dates in the text (default "UTC"). */
  timeZone?: TimeZone;
  /** Retrieval weights (defaults in `DEFAULT_WEIGHTS`). */
  weights?: Partial<RetrievalWeights>;
  /** Half-life of recency and access decay, ms (default 30 days). */
  recencyHalfLifeMs?: number;
  /** Text of the system layer (default none). */
  systemPrompt?: string;
  /**
   * Analyzer for query terms and key sentences; use the one the store indexes with (default
   * `createSearchAnalyzer()`). Not part of the cache key: one cache should serve one analyzer.
   */
  analyzer?: SearchAnalyzer;
  /** Rebuild cache; results are keyed by user, query, memory version and these options, and serve every `now` they are exact for. */
  cache?: HotCache;
  /** Lifetime of a cached rebuild, ms (default 10 minutes). */
  cacheTtlMs?: number;
  /** Record the facts, tasks and decisions used with `store.touch` (default true). */
  touch?: boolean;
  /** Most full-text hits fetched per search (default: grows with the budget, 40-200). */
  searchLimit?: number;
  /**
   * Free-form facts and decisions read per ordering (newest, most important, most recently used)
   * from a store with `recordPool`, besides full-text hits and records of the query's dates
   * (default: budgetTokens / 40, at least 40; the union of the orderings is two to three times
   * that, more than `memoryCandidates` keeps).
   */
  memoryPool?: number;
  /**
   * Most facts and decisions built into candidates, the best by score of those read (default
   * budgetTokens / 12, at least 60: more than the layer holds even when it gets the leftovers).
   */
  memoryCandidates?: number;
  /**
   * Open tasks read per ordering (due soonest, most recently updated, high priority, most
   * recently used) from a store with `recordPool`, and most tasks built into candidates besides
   * those the query is about, which are always read and built (default budgetTokens / 40, at
   * least 40).
   */
  taskPool?: number;
  /** Neighbour turns fetched around a retrieved turn: one number for both sides, or each side (default 2 before, 2 after). */
  neighbourTurns?: number | { before: number; after: number };
  /** Ranking of history turns (defaults in `DEFAULT_HISTORY_TUNING`). */
  history?: Partial<HistoryTuning>;
  /** Turns never to show in the history layer: the message being answered (it is sent as the user message). */
  excludeTurnIds?: readonly string[];
  /**
   * Semantic recall (src/memory/semantic): the query is embedded and its nearest turns and
   * records are fused with the full-text hits. Default none: full text alone, exactly as before.
   */
  semantic?: SemanticRecall;
  /**
   * State the current date, weekday, time and zone in a block right after the stable prefix
   * (clock.ts; default true). Its tokens come out of the budget before the layers are packed.
   */
  clock?: boolean;
}

/** Tuning of the history layer's ranking. */
export interface HistoryTuning {
  /** Priority of a neighbour turn relative to its hit (0..1), per turn of distance. */
  neighbourFactor: number;
  /** Damping of the k-th hit of one session: priority / (1 + sessionDamping * k). */
  sessionDamping: number;
  /** Hits ranked below this many start compressed to their key sentence, like neighbours. */
  fullHits: number;
}

/** Defaults of `HistoryTuning`. */
// fullHits: chosen on LoCoMo's tune half (docs/benchmarks.md): each hit that starts in full
// takes the room of a few distinct turns in key-sentence form; one in full did best.
export const DEFAULT_HISTORY_TUNING: Readonly<HistoryTuning> = { neighbourFactor: 0.8, sessionDamping: 0, fullHits: 1 };

/** Default budget, tokens. */
export const DEFAULT_BUDGET_TOKENS = 2000;

/** Default layer shares: the volatile layers get most; unused quota flows on to later layers. */
export const DEFAULT_LAYER_SHARES: Readonly<Record<LayerName, number>> = {
  system: 0.15,
  profile: 0.1,
  project: 0.1,
  tasks: 0.15,
  history: 0.35,
  memories: 0.15,
};

/** Default retrieval weights. */
export const DEFAULT_WEIGHTS: Readonly<RetrievalWeights> = {
  fullText: 1,
  entity: 0.3,
  recency: 0.1,
  importance: 0.2,
  access: 0.1,
};

const DAY_MS = 86_400_000;

/** Options with every default filled in. */
export interface ResolvedRebuildOptions {
  tokens: TokenCounter;
  budgetTokens: number;
  layerShares: Record<LayerName, number>;
  /** `now` rounded down to `nowGranularityMs`: due-time tiers and date words. */
  nowMs: number;
  nowGranularityMs: number;
  /** `now` rounded down to `scoreGranularityMs`: recency and access decay. */
  scoreNowMs: number;
  scoreGranularityMs: number;
  timeZone: TimeZone;
  weights: RetrievalWeights;
  recencyHalfLifeMs: number;
  systemPrompt: string;
  cacheTtlMs: number;
  touch: boolean;
  searchLimit: number;
  memoryPool: number;
  memoryCandidates: number;
  taskPool: number;
  neighbourTurns: { before: number; after: number };
  history: HistoryTuning;
  excludeTurnIds: string[];
  semantic: SemanticRecall | undefined;
  clock: boolean;
}

/** Fills in defaults and checks values; throws a UsageError naming the bad option. */
export function resolveRebuildOptions(options: RebuildOptions): ResolvedRebuildOptions {
  if (!options || typeof options.tokens?.count !== 'function') throw new UsageError('rebuildContext: options.tokens (a TokenCounter) is required');
  const budgetTokens = options.budgetTokens ?? DEFAULT_BUDGET_TOKENS;
  if (!Number.isInteger(budgetTokens) || budgetTokens < 0) throw new UsageError(`rebuildContext: budgetTokens must be a non-negative integer, got ${String(budgetTokens)}`);
  const layerShares = { ...DEFAULT_LAYER_SHARES };
  for (const [name, share] of Object.entries(options.layerShares ?? {})) {
    if (!(LAYER_NAMES as readonly string[]).includes(name)) throw new UsageError(`rebuildContext: unknown layer "${name}" in layerShares`);
    if (typeof share !== 'number' || !(share >= 0)) throw new UsageError(`rebuildContext: layerShares.${name} must be a number >= 0`);
    layerShares[name as LayerName] = share;
  }
  const total = LAYER_NAMES.reduce((sum, name) => sum + layerShares[name], 0);
  for (const name of LAYER_NAMES) layerShares[name] = total > 0 ? layerShares[name] / total : 1 / LAYER_NAMES.length;
  const weights = { ...DEFAULT_WEIGHTS };
  for (const [name, weight] of Object.entries(options.weights ?? {})) {
    if (!(name in DEFAULT_WEIGHTS)) throw new UsageError(`rebuildContext: unknown weight "${name}"`);
    if (typeof weight !== 'number' || !Number.isFinite(weight)) throw new UsageError(`rebuildContext: weights.${name} must be a finite number`);
    weights[name as keyof RetrievalWeights] = weight;
  }
  const granularity = positive('nowGranularityMs', options.nowGranularityMs, 60_000);
  const scoreGranularity = Math.max(granularity, positive('scoreGranularityMs', options.scoreGranularityMs, 3_600_000));
  const rawNow = options.now ?? Date.now();
  if (!Number.isFinite(rawNow)) throw new UsageError('rebuildContext: now must be a finite Unix ms instant');
  return {
    tokens: options.tokens,
    budgetTokens,
    layerShares,
    nowMs: Math.floor(rawNow / granularity) * granularity,
    nowGranularityMs: granularity,
    scoreNowMs: Math.floor(rawNow / scoreGranularity) * scoreGranularity,
    scoreGranularityMs: scoreGranularity,
    timeZone: validateTimeZone(options.timeZone ?? 'UTC'),
    weights,
    recencyHalfLifeMs: positive('recencyHalfLifeMs', options.recencyHalfLifeMs, 30 * DAY_MS),
    systemPrompt: options.systemPrompt ?? '',
    cacheTtlMs: positive('cacheTtlMs', options.cacheTtlMs, 10 * 60_000),
    touch: options.touch ?? true,
    searchLimit: Math.round(positive('searchLimit', options.searchLimit, Math.min(200, Math.max(40, budgetTokens / 25)))),
    memoryPool: Math.round(positive('memoryPool', options.memoryPool, Math.max(40, budgetTokens / 40))),
    memoryCandidates: Math.round(positive('memoryCandidates', options.memoryCandidates, Math.max(60, budgetTokens / 12))),
    taskPool: Math.round(positive('taskPool', options.taskPool, Math.max(40, budgetTokens / 40))),
    neighbourTurns: neighbourTurnsOf(options.neighbourTurns),
    excludeTurnIds: [...(options.excludeTurnIds ?? [])].sort(),
    semantic: options.semantic,
    clock: options.clock ?? true,
    history: {
      neighbourFactor: nonNegative('history.neighbourFactor', options.history?.neighbourFactor, DEFAULT_HISTORY_TUNING.neighbourFactor),
      sessionDamping: nonNegative('history.sessionDamping', options.history?.sessionDamping, DEFAULT_HISTORY_TUNING.sessionDamping),
      fullHits: nonNegative('history.fullHits', options.history?.fullHits, DEFAULT_HISTORY_TUNING.fullHits),
    },
  };
}

/**
 * A stable hash of everything besides user, query, memory and the rounded `now` that shapes the
 * result (the scoring clock `scoreNowMs` is in it; how far a result holds in `now` is decided by
 * the rebuild, see `stableSpan` in rebuild.ts).
 */
export function optionsHash(o: ResolvedRebuildOptions): string {
  // Only what shapes the text: whether records are marked as used, and how long a result is
  // kept, do not (a refresh-ahead rebuild, which touches nothing, serves later requests).
  const { tokens, systemPrompt, nowMs: _now, touch: _touch, cacheTtlMs: _ttl, semantic, ...rest } = o;
  // With semantic recall the embedding model shapes the text too (its absence leaves the hash as it was).
  const embeddings = semantic ? { embeddings: semantic.embedder.model } : {};
  return sha256Hex(JSON.stringify({ ...rest, tokenizer: tokens.name, systemPrompt: sha256Hex(systemPrompt), ...embeddings })).slice(0, 32);
}

function neighbourTurnsOf(value: RebuildOptions['neighbourTurns']): { before: number; after: number } {
  if (value === undefined) return { before: 2, after: 2 };
  if (typeof value === 'number') {
    const n = Math.round(nonNegative('neighbourTurns', value, 0));
    return { before: n, after: n };
  }
  return { before: Math.round(nonNegative('neighbourTurns.before', value.before, 0)), after: Math.round(nonNegative('neighbourTurns.after', value.after, 0)) };
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) throw new UsageError(`rebuildContext: ${name} must be a positive number`);
  return value;
}

function nonNegative(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value)) throw new UsageError(`rebuildContext: ${name} must be a number >= 0`);
  return value;
}
