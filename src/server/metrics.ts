/**
 * What `/metrics` reports: request counts and latencies per route, processMessage stage
 * latencies, token savings (the full raw history a prompt would otherwise carry vs the rebuilt
 * context), hot-cache hit rate, and extraction counts by intent.
 */
import type { ProcessResult } from '../memory/manager.js';
import type { HotCacheStats } from '../store/hot-cache.js';
import { createRegistry, type Registry } from './prometheus.js';

/** Upper bounds of latency buckets, seconds (0.5 ms … 10 s). */
export const LATENCY_BUCKETS_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10] as const;

/** The server's metrics. */
export interface ServerMetrics {
  /** One finished HTTP request: route pattern (not the path), method, status, wall time in ms. */
  observeRequest(route: string, method: string, status: number, durationMs: number): void;
  /** One processMessage call (stage timings, tokens, cache use, intent). */
  observeMessage(result: Pick<ProcessResult, 'metrics' | 'extraction'>): void;
  /** Prometheus text exposition. */
  render(): string;
}

/** Options of `createServerMetrics`. */
export interface ServerMetricsOptions {
  /** Hot-cache counters read at scrape time (default: none). */
  hotStats?: () => HotCacheStats;
}

const STAGES = ['extract', 'update', 'rebuild', 'respond', 'total'] as const;

/** Creates the metrics of one server. */
export function createServerMetrics(options: ServerMetricsOptions = {}): ServerMetrics {
  const registry: Registry = createRegistry();
  const requests = registry.counter('ctxvm_http_requests_total', 'HTTP requests by route pattern, method and status.');
  const requestSeconds = registry.histogram('ctxvm_http_request_duration_seconds', 'HTTP request wall time by route pattern, seconds.', LATENCY_BUCKETS_SECONDS);
  const stageSeconds = registry.histogram('ctxvm_stage_duration_seconds', 'processMessage stage latency (extract, update, rebuild, respond, total), seconds.', LATENCY_BUCKETS_SECONDS);
  const extractions = registry.counter('ctxvm_extractions_total', 'Messages processed, by extracted intent.');
  const contextTokens = registry.counter('ctxvm_context_tokens_total', 'Tokens of the rebuilt contexts sent to the LLM (sum over messages).');
  const historyTokens = registry.counter('ctxvm_full_history_tokens_total', "Tokens the user's whole raw history would have taken as the prompt instead (sum over messages).");
  const rebuilds = registry.counter('ctxvm_rebuild_cache_total', 'Context rebuilds of processMessage by hot-cache result (hit, miss).');
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
      return [{ value: s.hits + s.misses > 0 ? s.hits / (s.hits + s.misses) : 0 }];
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
      rebuilds.inc({ result: metrics.rebuildCacheHit ? 'hit' : 'miss' });
    },
    render: () => registry.render(),
  };
}
