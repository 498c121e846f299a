/**
 * What `/metrics` reports: request counts and latencies per route, processMessage stage
 * latencies, token savings (the full raw history a prompt would otherwise carry vs the rebuilt
 * context), hot-cache hit rate, and extraction counts by intent.
 */
import type { RefreshAheadStats } from '../memory/cache/refresh-ahead.js';
import type { ReadCacheStats } from '../memory/cache/read-cache.js';
import type { RebuiltContext } from '../memory/context.js';
import type { ProcessResult } from '../memory/manager.js';
import type { HotCacheHealth, HotCacheStats } from '../store/hot-cache.js';
import { createRegistry, type Registry } from './prometheus.js';

/** Upper bounds of latency buckets, seconds (0.5 ms … 10 s). */
export const LATENCY_BUCKETS_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10] as const;

/** The server's metrics. */
export interface ServerMetrics {
  /** One finished HTTP request: route pattern (not the path), method, status, wall time in ms. */
  observeRequest(route: string, method: string, status: number, durationMs: number): void;
  /** One processMessage call (stage timings, tokens, intent). */
  observeMessage(result: Pick<ProcessResult, 'metrics' | 'extraction'>): void;
  /** One context rebuilt on request (`POST /v1/users/{user}/context`): served from the hot tier or rebuilt. */
  observeContext(context: Pick<RebuiltContext, 'cached'>): void;
  /** Prometheus text exposition. */
  render(): string;
  /** The same numbers as JSON (`GET /v1/metrics`); percentiles are estimated from the histogram buckets. */
  snapshot(): MetricsSnapshot;
}

/** Latency of one stage: count, sum and bucket-estimated percentiles (null before the first observation), ms. */
export interface StageSnapshot {
  count: number;
  sumMs: number;
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
}

/** What `GET /v1/metrics` returns (docs/console.md). */
export interface MetricsSnapshot {
  /** extract, update, rebuild, respond, total. */
  stages: Record<string, StageSnapshot>;
  /** Sums over processed messages: rebuilt context vs full raw history; `savingsRatio` = 1 - context/fullHistory (0 before any). */
  tokens: { context: number; fullHistory: number; savingsRatio: number };
  /**
   * Hot-cache reads since the server started, failed operations, and whether the tier is in use
   * (`state`, the circuit `breaker`, how often it opened); null without a hot cache.
   */
  hotCache: ({ hits: number; misses: number; hitRatio: number; errors: number } & Partial<Pick<HotCacheHealth, 'state' | 'breaker' | 'trips' | 'shortCircuited' | 'epochChanges'>>) | null;
  /**
   * Memory reads (task lists, facts, turns, searches…) answered by the hot tier with a value still
   * current (hits) or by the warm store (misses; a stale value found in the hot tier is one), and
   * reads that skipped the cache; null without a read cache.
   */
  memoryReads: { hits: number; misses: number; bypassed: number; hitRatio: number } | null;
  /**
   * Contexts asked for on their own (`POST /context`) served from the hot tier (hit) or rebuilt
   * (miss). processMessage's rebuild is not counted: it leaves out the message being answered, so
   * it is never cached.
   */
  rebuildCache: { hit: number; miss: number };
  /** Background rebuilds after writes (refresh-ahead); null when it is off. */
  refreshAhead: { rebuilds: number; failed: number } | null;
  /** Messages processed, by extracted intent. */
  extractions: Record<string, number>;
  /** HTTP requests: all, and per "<METHOD> <route pattern>". */
  requests: { total: number; byRoute: Record<string, number> };
}

/**
 * The `q` quantile (0..1) of a histogram, estimated like Prometheus' `histogram_quantile`: linear
 * within the bucket holding the rank, 0 as the lower edge of the first bucket, the largest finite
 * bound when the rank falls in the +Inf bucket; null for an empty histogram. Units of `bounds`.
 */
export function histogramQuantile(q: number, bounds: readonly number[], counts: readonly number[]): number | null {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let before = 0;
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i]!;
    if (n > 0 && before + n >= rank) {
      if (i >= bounds.length) return bounds[bounds.length - 1] ?? null;
      const lower = i === 0 ? 0 : bounds[i - 1]!;
      return lower + ((bounds[i]! - lower) * Math.max(0, rank - before)) / n;
    }
    before += n;
  }
  return bounds[bounds.length - 1] ?? null;
}

/** Options of `createServerMetrics`. */
export interface ServerMetricsOptions {
  /** Hot-cache counters read at scrape time (default: none). */
  hotStats?: () => HotCacheStats;
  /** Hot-tier health read at scrape time (default: none). */
  hotHealth?: () => HotCacheHealth;
  /** Counters of the memory read cache, read at scrape time (default: none; undefined = no read cache). */
  memoryReadStats?: () => ReadCacheStats | undefined;
  /** Refresh-ahead counters read at scrape time (default: none). */
  refreshStats?: () => RefreshAheadStats;
}

const STAGES = ['extract', 'update', 'rebuild', 'respond', 'total'] as const;

/** hits / (hits + misses); 0 before the first read. */
const hitRatio = ({ hits, misses }: { hits: number; misses: number }): number => (hits + misses > 0 ? hits / (hits + misses) : 0);

/** Creates the metrics of one server. */
export function createServerMetrics(options: ServerMetricsOptions = {}): ServerMetrics {
  const registry: Registry = createRegistry();
  const requests = registry.counter('ctxvm_http_requests_total', 'HTTP requests by route pattern, method and status.');
  const requestSeconds = registry.histogram('ctxvm_http_request_duration_seconds', 'HTTP request wall time by route pattern, seconds.', LATENCY_BUCKETS_SECONDS);
  const stageSeconds = registry.histogram('ctxvm_stage_duration_seconds', 'processMessage stage latency (extract, update, rebuild, respond, total), seconds.', LATENCY_BUCKETS_SECONDS);
  const extractions = registry.counter('ctxvm_extractions_total', 'Messages processed, by extracted intent.');
  const contextTokens = registry.counter('ctxvm_context_tokens_total', 'Tokens of the rebuilt contexts sent to the LLM (sum over messages).');
  const historyTokens = registry.counter('ctxvm_full_history_tokens_total', "Tokens the user's whole raw history would have taken as the prompt instead (sum over messages).");
  const rebuilds = registry.counter('ctxvm_rebuild_cache_total', 'Contexts asked for on their own (POST /context) by hot-tier result (hit, miss).');
  // Negative while histories are short: a rebuilt context (system prompt, profile, tasks) can be
  // larger than a few raw turns. It pays off as histories grow.
  registry.collected('ctxvm_token_savings_ratio', 'Share of prompt tokens saved by rebuilding from memory instead of replaying the full history: 1 - context/full (negative while histories are shorter than a context).', 'gauge', () => {
    const full = historyTokens.get();
    return [{ value: full > 0 ? 1 - contextTokens.get() / full : 0 }];
  });
  if (options.hotStats) {
    const stats = options.hotStats;
    registry.collected('ctxvm_hot_cache_requests_total', 'Hot-cache reads by result (hit, miss) since the server started.', 'counter', () => {
      const s = stats();
      return [
        { labels: { result: 'hit' }, value: s.hits },
        { labels: { result: 'miss' }, value: s.misses },
      ];
    });
    registry.collected('ctxvm_hot_cache_hit_ratio', 'Hot-cache hit rate since the server started (hits / reads; 0 before the first read).', 'gauge', () => {
      const s = stats();
      return [{ value: hitRatio(s) }];
    });
    registry.collected('ctxvm_hot_cache_errors_total', 'Hot-cache operations that failed (unreachable, timed out, refused by the open breaker, unreadable value); each is a miss or a dropped write.', 'counter', () => [{ value: stats().errors }]);
  }

  if (options.hotHealth) {
    const health = options.hotHealth;
    registry.collected('ctxvm_hot_cache_up', 'Whether the hot tier is in use (1) or skipped because it is unreachable or stalled (0): reads then come from the warm store.', 'gauge', () => [{ value: health().state === 'up' ? 1 : 0 }]);
    registry.collected('ctxvm_hot_cache_breaker_state', "The hot tier's circuit breaker: 1 for its current state (closed, open, half_open), 0 for the others.", 'gauge', () => {
      const { breaker } = health();
      return (['closed', 'open', 'half-open'] as const).map((state) => ({ labels: { state: state.replace('-', '_') }, value: breaker === state ? 1 : 0 }));
    });
    registry.collected('ctxvm_hot_cache_breaker_trips_total', "Times the hot tier's circuit breaker opened (a command timed out or the connection was lost).", 'counter', () => [{ value: health().trips }]);
    registry.collected('ctxvm_hot_cache_short_circuited_total', 'Hot-tier calls refused at once while the breaker was open (answered as misses).', 'counter', () => [{ value: health().shortCircuited }]);
    registry.collected('ctxvm_hot_cache_epoch_changes_total', 'Times Redis came back as another server state (restarted from disk, failed over): the cache started empty.', 'counter', () => [{ value: health().epochChanges }]);
  }

  if (options.memoryReadStats) {
    const stats = options.memoryReadStats;
    registry.collected('ctxvm_memory_read_cache_total', 'Memory reads by result: hit (a current value from the hot tier), miss (read from the warm store), bypassed (not cacheable).', 'counter', () => {
      const s = stats();
      if (!s) return [];
      return [
        { labels: { result: 'hit' }, value: s.hits },
        { labels: { result: 'miss' }, value: s.misses },
        { labels: { result: 'bypassed' }, value: s.bypassed },
      ];
    });
  }

  if (options.refreshStats) {
    const stats = options.refreshStats;
    registry.collected('ctxvm_refresh_ahead_rebuilds_total', "Background rebuilds of users' most asked questions after their memory changed, by result (ok, failed).", 'counter', () => {
      const s = stats();
      return [
        { labels: { result: 'ok' }, value: s.rebuilds },
        { labels: { result: 'failed' }, value: s.failed },
      ];
    });
  }

  return {
    observeRequest(route, method, status, durationMs) {
      requests.inc({ route, method, status: String(status) });
      requestSeconds.observe(durationMs / 1000, { route });
    },
    observeMessage({ metrics, extraction }) {
      for (const stage of STAGES) stageSeconds.observe(metrics.latencyMs[stage] / 1000, { stage });
      extractions.inc({ intent: extraction.intent });
      contextTokens.inc({}, metrics.contextTokens);
      historyTokens.inc({}, metrics.fullHistoryTokens);
    },
    observeContext({ cached }) {
      rebuilds.inc({ result: cached ? 'hit' : 'miss' });
    },
    render: () => registry.render(),
    snapshot() {
      const ms = (seconds: number | null) => (seconds === null ? null : Math.round(seconds * 1e6) / 1000);
      const stages: Record<string, StageSnapshot> = {};
      const byStage = new Map(stageSeconds.series().map((s) => [s.labels.stage, s]));
      for (const stage of STAGES) {
        const s = byStage.get(stage);
        stages[stage] = s
          ? { count: s.count, sumMs: ms(s.sum)!, p50Ms: ms(histogramQuantile(0.5, s.bounds, s.counts)), p95Ms: ms(histogramQuantile(0.95, s.bounds, s.counts)), p99Ms: ms(histogramQuantile(0.99, s.bounds, s.counts)) }
          : { count: 0, sumMs: 0, p50Ms: null, p95Ms: null, p99Ms: null };
      }
      const context = contextTokens.get();
      const fullHistory = historyTokens.get();
      let hotCache: MetricsSnapshot['hotCache'] = null;
      if (options.hotStats) {
        const h = options.hotStats();
        const health = options.hotHealth?.();
        hotCache = {
          hits: h.hits,
          misses: h.misses,
          hitRatio: hitRatio(h),
          errors: h.errors,
          ...(health ? { state: health.state, breaker: health.breaker, trips: health.trips, shortCircuited: health.shortCircuited, epochChanges: health.epochChanges } : {}),
        };
      }
      const reads = options.memoryReadStats?.();
      const memoryReads: MetricsSnapshot['memoryReads'] = reads ? { ...reads, hitRatio: hitRatio(reads) } : null;
      const extractionsByIntent: Record<string, number> = {};
      for (const s of extractions.series()) extractionsByIntent[s.labels.intent ?? ''] = s.value;
      const byRoute: Record<string, number> = {};
      let total = 0;
      for (const s of requests.series()) {
        const key = `${s.labels.method} ${s.labels.route}`;
        byRoute[key] = (byRoute[key] ?? 0) + s.value;
        total += s.value;
      }
      return {
        stages,
        tokens: { context, fullHistory, savingsRatio: fullHistory > 0 ? 1 - context / fullHistory : 0 },
        hotCache,
        memoryReads,
        rebuildCache: { hit: rebuilds.get({ result: 'hit' }), miss: rebuilds.get({ result: 'miss' }) },
        refreshAhead: options.refreshStats ? (({ rebuilds, failed }) => ({ rebuilds, failed }))(options.refreshStats()) : null,
        extractions: extractionsByIntent,
        requests: { total, byRoute },
      };
    },
  };
}
