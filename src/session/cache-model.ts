/**
 * The prompt-caching cost model of trimming (the CMV paper's analysis, on exact token counts of
 * the reconstructed context). A resumed session is continued for `turns` model calls; each call
 * adds `growthTokens` of new input and produces `outputTokens`. The trimmed context is a new
 * prefix, so its first call writes the cache; the untrimmed one may still be warm (resumed within
 * the TTL) or cold. We report the one-time cost of that cold write, the per-turn saving, the
 * break-even turn and the cumulative cost curves.
 */
import type { ModelPrice } from './pricing.js';

export type CacheTtl = '5m' | '1h';

export interface CacheModelInput {
  /** Tokens of the untrimmed context. */
  beforeTokens: number;
  /** Tokens of the trimmed context. */
  afterTokens: number;
  /** New input tokens per model call (prompt, tool results). */
  growthTokens: number;
  /** Output tokens per model call. */
  outputTokens: number;
  /** Calls simulated (default 30). */
  turns?: number;
  price: ModelPrice;
}

export interface CacheScenario {
  ttl: CacheTtl;
  /** Whether the untrimmed session's cache is still warm when it is resumed. */
  untrimmedCacheWarm: boolean;
  /** Extra cost of the trimmed session's first call over the untrimmed one's (USD; negative = trimming is cheaper at once). */
  coldStartCostUsd: number;
  /** Saving on every later call (USD). */
  perTurnSavingUsd: number;
  /** First call (1-based) after which the trimmed session has cost no more in total; 1 = at once; null = never within `turns`. */
  breakEvenTurn: number | null;
  /** Share of input tokens read from cache over the simulated calls. */
  hitRate: { untrimmed: number; trimmed: number };
  /** Cumulative cost after each call (USD). */
  cumulativeUsd: { untrimmed: number[]; trimmed: number[] };
}

const perMTok = (tokens: number, usdPerMTok: number) => (tokens * usdPerMTok) / 1_000_000;

function simulate(prefixTokens: number, warm: boolean, input: CacheModelInput, ttl: CacheTtl) {
  const { growthTokens, outputTokens, price } = input;
  const write = ttl === '5m' ? price.cacheWrite5m : price.cacheWrite1h;
  const turns = input.turns ?? 30;
  const cumulative: number[] = [];
  let total = 0;
  let read = 0;
  let all = 0;
  let cached = warm ? prefixTokens : 0;
  let context = prefixTokens;
  for (let t = 1; t <= turns; t++) {
    // every call sends the whole context plus the new turn; what is cached is read, the rest written
    const sent = context + growthTokens;
    const fromCache = Math.min(cached, sent);
    const written = sent - fromCache;
    total += perMTok(fromCache, price.cacheRead) + perMTok(written, write) + perMTok(outputTokens, price.output);
    read += fromCache;
    all += sent;
    cumulative.push(total);
    // the reply joins the context, and the whole prefix is cached for the next call
    context = sent + outputTokens;
    cached = sent;
  }
  return { cumulative, hitRate: all ? read / all : 0 };
}

export function cacheScenarios(input: CacheModelInput): CacheScenario[] {
  const out: CacheScenario[] = [];
  for (const ttl of ['5m', '1h'] as const) {
    for (const warm of [true, false]) {
      const u = simulate(input.beforeTokens, warm, input, ttl);
      const tr = simulate(input.afterTokens, false, input, ttl);
      const first = tr.cumulative[0]! - u.cumulative[0]!;
      const later = u.cumulative.length > 1 ? u.cumulative[1]! - u.cumulative[0]! - (tr.cumulative[1]! - tr.cumulative[0]!) : 0;
      const idx = tr.cumulative.findIndex((c, i) => c <= u.cumulative[i]! + 1e-12);
      out.push({
        ttl,
        untrimmedCacheWarm: warm,
        coldStartCostUsd: round(first),
        perTurnSavingUsd: round(later),
        breakEvenTurn: idx === -1 ? null : idx + 1,
        hitRate: { untrimmed: round(u.hitRate, 4), trimmed: round(tr.hitRate, 4) },
        cumulativeUsd: { untrimmed: u.cumulative.map((x) => round(x)), trimmed: tr.cumulative.map((x) => round(x)) },
      });
    }
  }
  return out;
}

function round(x: number, digits = 6): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** The economics of trimming under prompt caching, in closed form (the warm-cache scenario above). */
export interface TrimEconomics {
  /** The one-time cost: writing the trimmed prefix to the cache on the first call after resuming (USD). */
  cacheWriteUsd: number;
  /**
   * What that first call costs over the untrimmed session's, which reads its warm prefix instead:
   * cacheWriteUsd minus that read (USD; negative when trimming is cheaper at once).
   */
  firstCallExtraUsd: number;
  /** The saving on every later call, which reads the smaller prefix from the cache (USD). */
  perTurnSavingUsd: number;
  /**
   * The first call (1-based) after which the trimmed session has cost no more in total:
   * 1 + ⌈firstCallExtraUsd / perTurnSavingUsd⌉, 1 when the first call is already cheaper,
   * null when it never pays (nothing saved per call).
   */
  breakEvenTurn: number | null;
}

export interface TrimEconomicsInput {
  /** Tokens of the untrimmed prefix (its cache is warm: the session is resumed within the TTL). */
  beforeTokens: number;
  /** Tokens of the trimmed prefix (a new prefix: its first call writes it). */
  afterTokens: number;
  price: ModelPrice;
  ttl: CacheTtl;
}

/**
 * Does trimming pay, and after how many calls. What both sessions add per call (the new turn,
 * the output) costs the same in both and cancels; so does a system prompt cached apart from the
 * messages. This is what cacheScenarios simulates for a warm untrimmed cache.
 */
export function trimEconomics(input: TrimEconomicsInput): TrimEconomics {
  const { beforeTokens, afterTokens, price } = input;
  const write = input.ttl === '5m' ? price.cacheWrite5m : price.cacheWrite1h;
  const cacheWrite = perMTok(afterTokens, write);
  const extra = cacheWrite - perMTok(beforeTokens, price.cacheRead);
  const saving = perMTok(beforeTokens - afterTokens, price.cacheRead);
  let breakEvenTurn: number | null;
  if (extra <= 0) breakEvenTurn = 1;
  else if (saving <= 0) breakEvenTurn = null;
  else breakEvenTurn = 1 + Math.ceil(extra / saving - 1e-9); // a whole ratio must not round up past itself
  return { cacheWriteUsd: round(cacheWrite), firstCallExtraUsd: round(extra), perTurnSavingUsd: round(saving), breakEvenTurn };
}
