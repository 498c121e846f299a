/** System routes: health, who a key is, metrics (Prometheus text and JSON), the OpenAPI document. */
import { z } from 'zod';
import type { HotCacheHealth } from '../store/hot-cache.js';
import type { ServerMetrics } from './metrics.js';
import { PROMETHEUS_CONTENT_TYPE } from './prometheus.js';
import { defineRoute, type RouteDef } from './route.js';
import { HealthResponse, MetricsResponse, WhoamiResponse } from './schemas.js';

/** What the system routes need. */
export interface SystemRouteDeps {
  version: string;
  /** Milliseconds since the app was created. */
  uptimeMs(): number;
  /** Worker number under `serve --workers N` (reported by /healthz). */
  worker?: number | undefined;
  metrics: ServerMetrics;
  /** Serve /metrics without a key. */
  publicMetrics: boolean;
  /** The OpenAPI document (built once, on first request). */
  openapi(): unknown;
  /** The hot tier's driver and health, when the server has one. */
  hotHealth?: (() => { driver: string; health: HotCacheHealth | undefined }) | undefined;
}

/** The hot tier as /healthz shows it: no addresses or error text (the route is public). */
function hotCacheView(deps: SystemRouteDeps) {
  const hot = deps.hotHealth?.();
  if (!hot) return undefined;
  const h = hot.health ?? { state: 'up' as const, breaker: 'closed' as const, sinceMs: Date.now() - deps.uptimeMs() };
  return { driver: hot.driver, state: h.state, breaker: h.breaker, since: new Date(h.sinceMs).toISOString() };
}

/** The system routes. */
export function systemRoutes(deps: SystemRouteDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/healthz',
      operationId: 'health',
      summary: 'Liveness: the server answers; `status` is degraded while the hot tier is skipped (unreachable or stalled).',
      tag: 'system',
      access: 'public',
      response: { description: 'ok', schema: HealthResponse },
      async handler() {
        const hotCache = hotCacheView(deps);
        return {
          json: {
            ok: true,
            version: deps.version,
            uptimeMs: Math.round(deps.uptimeMs()),
            ...(deps.worker !== undefined ? { worker: deps.worker } : {}),
            status: hotCache?.state === 'down' ? 'degraded' : 'ok',
            ...(hotCache ? { hotCache } : {}),
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/metrics',
      operationId: 'metrics',
      summary: 'Prometheus metrics: request and stage latencies, token savings, hot-cache hit rate, extractions by intent.',
      tag: 'system',
      access: deps.publicMetrics ? 'public' : 'admin',
      response: { description: 'Prometheus text exposition format 0.0.4', contentType: 'text/plain' },
      async handler() {
        return { text: deps.metrics.render(), contentType: PROMETHEUS_CONTENT_TYPE };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/metrics',
      operationId: 'metricsJson',
      summary: 'The numbers of /metrics as JSON: stage latencies (percentiles estimated from the buckets), token savings, hot-cache hit rate, extractions by intent, requests by route.',
      tag: 'system',
      access: deps.publicMetrics ? 'public' : 'admin',
      response: { description: 'the metrics', schema: MetricsResponse },
      async handler() {
        return { json: deps.metrics.snapshot() };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/whoami',
      operationId: 'whoami',
      summary: 'What the presented key may see: admin (every user, sessions, metrics) or one user.',
      tag: 'system',
      access: 'any',
      response: { description: 'the key', schema: WhoamiResponse },
      async handler({ principal }) {
        return { json: { admin: principal!.admin, user: principal!.userId, keyId: principal!.keyId } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/openapi.json',
      operationId: 'openapi',
      summary: 'This API as an OpenAPI 3.1 document.',
      tag: 'system',
      access: 'public',
      response: { description: 'OpenAPI 3.1 document', schema: z.record(z.string(), z.unknown()) },
      async handler() {
        return { json: deps.openapi() };
      },
    }),
  ];
}
