import { describe, expect, it } from 'vitest';
import type { HotCacheHealth } from '../store/hot-cache.js';
import { createServerMetrics, histogramQuantile, LATENCY_BUCKETS_SECONDS } from './metrics.js';

const message = (totalMs: number, intent = 'create_task', hit = false) => ({
  metrics: { latencyMs: { extract: 0.2, update: 0.3, rebuild: totalMs / 2, respond: 0.1, total: totalMs }, contextTokens: 100, fullHistoryTokens: 400, rebuildCacheHit: hit } as never,
  extraction: { intent } as never,
});

describe('histogramQuantile', () => {
  it('interpolates within the bucket holding the rank, like Prometheus', () => {
    // 10 observations in (1, 2], 10 in (2, 4]
    expect(histogramQuantile(0.5, [1, 2, 4], [0, 10, 10, 0])).toBe(2);
    expect(histogramQuantile(0.25, [1, 2, 4], [0, 10, 10, 0])).toBe(1.5);
    expect(histogramQuantile(0.75, [1, 2, 4], [0, 10, 10, 0])).toBe(3);
    expect(histogramQuantile(0.5, [1, 2], [4, 0, 0])).toBe(0.5); // first bucket starts at 0
    expect(histogramQuantile(0.99, [1, 2], [1, 0, 9])).toBe(2); // +Inf bucket: the largest finite bound
    expect(histogramQuantile(0.5, [1, 2], [0, 0, 0])).toBeNull();
  });
});

describe('ServerMetrics.snapshot', () => {
  it('reports the numbers /metrics exports, with percentiles from the buckets', () => {
    const m = createServerMetrics({ hotStats: () => ({ hits: 3, misses: 1, sets: 0, errors: 2 }), memoryReadStats: () => ({ hits: 6, misses: 2, bypassed: 1 }) });
    expect(m.snapshot().stages.total).toEqual({ count: 0, sumMs: 0, p50Ms: null, p95Ms: null, p99Ms: null });
    for (let i = 0; i < 10; i++) m.observeMessage(message(3, i < 7 ? 'create_task' : 'query_tasks', i % 2 === 0));
    for (let i = 0; i < 4; i++) m.observeContext({ cached: i > 0 });
    m.observeRequest('/v1/users/{user}/messages', 'POST', 200, 4);
    m.observeRequest('/v1/users/{user}/messages', 'POST', 400, 1);
    m.observeRequest('/healthz', 'GET', 200, 1);
    const s = m.snapshot();
    expect(LATENCY_BUCKETS_SECONDS).toContain(0.0025);
    expect(LATENCY_BUCKETS_SECONDS).toContain(0.005);
    // all ten in (2.5 ms, 5 ms]: p50 = 2.5 + 2.5 * 5/10
    expect(s.stages.total).toEqual({ count: 10, sumMs: 30, p50Ms: 3.75, p95Ms: 4.875, p99Ms: 4.975 });
    expect(s.tokens).toEqual({ context: 1000, fullHistory: 4000, savingsRatio: 0.75 });
    expect(s.hotCache).toEqual({ hits: 3, misses: 1, hitRatio: 0.75, errors: 2 });
    expect(s.memoryReads).toEqual({ hits: 6, misses: 2, bypassed: 1, hitRatio: 0.75 });
    expect(m.render()).toContain('ctxvm_memory_read_cache_total{result="bypassed"} 1');
    expect(s.rebuildCache).toEqual({ hit: 3, miss: 1 }); // contexts asked for; messages are never counted
    expect(s.refreshAhead).toBeNull();
    expect(s.extractions).toEqual({ create_task: 7, query_tasks: 3 });
    expect(s.requests).toEqual({ total: 3, byRoute: { 'POST /v1/users/{user}/messages': 2, 'GET /healthz': 1 } });
    expect(m.render()).toContain('ctxvm_stage_duration_seconds_count{stage="total"} 10');
  });

  it('reports refresh-ahead rebuilds when it runs', () => {
    const m = createServerMetrics({ refreshStats: () => ({ passes: 2, rebuilds: 5, failed: 1 }) });
    expect(m.snapshot().refreshAhead).toEqual({ rebuilds: 5, failed: 1 });
    expect(m.render()).toContain('ctxvm_refresh_ahead_rebuilds_total{result="ok"} 5');
    expect(m.render()).toContain('ctxvm_refresh_ahead_rebuilds_total{result="failed"} 1');
  });

  it('hotCache and memoryReads are null without a hot cache or a read cache', () => {
    expect(createServerMetrics().snapshot().hotCache).toBeNull();
    expect(createServerMetrics().snapshot().memoryReads).toBeNull();
    const noReadCache = createServerMetrics({ memoryReadStats: () => undefined });
    expect(noReadCache.snapshot().memoryReads).toBeNull();
    expect(noReadCache.render()).not.toMatch(/ctxvm_memory_read_cache_total\{/);
  });

  it('reports whether the hot tier is in use: up, the breaker state, trips, refused calls, epoch changes', () => {
    let health: HotCacheHealth = { state: 'up', breaker: 'closed', sinceMs: 0, trips: 0, shortCircuited: 0, epochChanges: 0 };
    const m = createServerMetrics({ hotStats: () => ({ hits: 1, misses: 5, sets: 0, errors: 4 }), hotHealth: () => health });
    expect(m.render()).toContain('ctxvm_hot_cache_up 1');
    health = { state: 'down', breaker: 'open', sinceMs: 0, trips: 2, shortCircuited: 7, epochChanges: 1 };
    const text = m.render();
    for (const line of ['ctxvm_hot_cache_up 0', 'ctxvm_hot_cache_breaker_state{state="open"} 1', 'ctxvm_hot_cache_breaker_state{state="closed"} 0', 'ctxvm_hot_cache_breaker_trips_total 2', 'ctxvm_hot_cache_short_circuited_total 7', 'ctxvm_hot_cache_epoch_changes_total 1', 'ctxvm_hot_cache_errors_total 4']) {
      expect(text).toContain(line);
    }
    expect(m.snapshot().hotCache).toEqual({ hits: 1, misses: 5, hitRatio: 1 / 6, errors: 4, state: 'down', breaker: 'open', trips: 2, shortCircuited: 7, epochChanges: 1 });
  });
});
