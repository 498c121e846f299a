/**
 * The HTTP API as a Hono app (no listening here: serve.ts does that). Every request goes through
 * the same chain — route → auth → body limit → validation (zod) → handler — and every error
 * becomes `{ error: { code, message } }` in `onError` (errors.ts holds the mapping). One log line
 * and one metrics observation per request, with per-stage timings and the request id
 * (`X-Request-Id`). The web console's static files are served under `/console/` without a key
 * (console-static.ts); `/` redirects there.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Logger } from 'pino';
import { CONSOLE_PATH, createConsoleFiles } from './console-static.js';
import { createMemoryOps } from './memory-ops.js';
import type { ApiPrincipal } from './api-keys.js';
import { UsageError } from '../errors.js';
import { HttpError, mapError } from './errors.js';
import { logRequest, type RequestLogEntry } from './logger.js';
import { createServerMetrics, type ServerMetrics } from './metrics.js';
import { buildOpenApiDocument } from './openapi.js';
import { honoPath, parseInput, type HandlerReply, type RouteDef } from './route.js';
import { memoryRoutes } from './routes-memory.js';
import { reminderRoutes } from './routes-reminders.js';
import { sessionRoutes } from './routes-sessions.js';
import { systemRoutes } from './routes-system.js';
import type { ServerServices } from './services.js';

/** Default request body limit, bytes (1 MiB). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Options of `createHttpApp`. */
export interface HttpAppOptions {
  /** Request log (default: none). See logger.ts. */
  logger?: Logger;
  /** Put message text, queries and replies on log lines (default false). */
  logContent?: boolean;
  /** Largest accepted request body, bytes (default 1 MiB); larger → 413. */
  maxBodyBytes?: number;
  /** Metrics to record into (default: new ones over `services.hot`). */
  metrics?: ServerMetrics;
  /** Serve `/metrics` without a key (default false: admin keys only). */
  publicMetrics?: boolean;
  /** Version reported by /healthz and /openapi.json. */
  version?: string;
  /** Clock for uptime, Unix ms (default `Date.now`). */
  now?: () => number;
  /** Folder of the built web console served under /console/ (default: this package's `dist/console/`). */
  consoleDir?: string;
  /** Worker number under `ctxvm serve --workers N`, reported by /healthz (default: none). */
  worker?: number;
}

type Vars = {
  route: string;
  principal: ApiPrincipal | undefined;
  log: Pick<RequestLogEntry, 'stages' | 'keyId' | 'user' | 'intent' | 'content'>;
};
type Ctx = Context<{ Variables: Vars }>;

/** The app plus what it was built from (for tests and for serve.ts). */
export interface HttpApp {
  app: Hono<{ Variables: Vars }>;
  routes: readonly RouteDef[];
  metrics: ServerMetrics;
}

/** Builds the HTTP API over `services`. */
export function createHttpApp(services: ServerServices, options: HttpAppOptions = {}): HttpApp {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const refresh = services.manager.refreshAhead;
  const metrics =
    options.metrics ??
    createServerMetrics({
      ...(services.hot ? { hotStats: () => services.hot!.stats() } : {}),
      ...(services.hot?.health ? { hotHealth: () => services.hot!.health!() } : {}),
      memoryReadStats: () => services.manager.readStats(),
      ...(refresh ? { refreshStats: () => refresh.stats() } : {}),
    });
  const version = options.version ?? '0.0.0';
  const logContent = options.logContent === true;
  const ops = createMemoryOps(services.manager, services.llm);

  const routes: RouteDef[] = [];
  let openapi: unknown;
  routes.push(
    ...memoryRoutes({ ops, metrics, logContent, listUsers: services.listUsers?.bind(services) }),
    ...sessionRoutes(services.sessions),
    ...(services.reminders ? reminderRoutes({ hub: services.reminders }) : []),
    ...systemRoutes({
      version,
      uptimeMs: () => now() - startedAt,
      worker: options.worker,
      metrics,
      publicMetrics: options.publicMetrics === true,
      openapi: () => (openapi ??= buildOpenApiDocument(routes, { version, maxBodyBytes })),
      ...(services.hot ? { hotHealth: () => ({ driver: services.hot!.name, health: services.hot!.health?.() }) } : {}),
    }),
  );

  const app = new Hono<{ Variables: Vars }>();

  // Outermost: timing, the request id, the log line and metrics of every request, matched or not.
  app.use('*', async (c, next) => {
    const t0 = performance.now();
    // Read and written on Node's own request and response when served by @hono/node-server: the
    // fetch Headers objects otherwise built for them cost a few µs a request (~5% of a /healthz).
    const node = c.env as Partial<NodeBindings> | undefined;
    const sent = node?.incoming ? node.incoming.headers['x-request-id'] : c.req.header('x-request-id');
    const requestId = requestIdOf(typeof sent === 'string' ? sent : undefined);
    if (node?.outgoing) node.outgoing.setHeader('x-request-id', requestId);
    c.set('route', 'unmatched');
    c.set('log', { stages: {} });
    await next();
    if (!node?.outgoing) {
      try {
        c.res.headers.set('x-request-id', requestId);
      } catch {
        // a response with immutable headers: it goes without the id
      }
    }
    const durationMs = performance.now() - t0;
    const route = c.get('route');
    metrics.observeRequest(route, c.req.method, c.res.status, durationMs);
    if (options.logger) {
      const errorCode = c.res.status >= 400 ? c.res.headers.get('x-ctxvm-error') ?? undefined : undefined;
      logRequest(options.logger, { method: c.req.method, route, status: c.res.status, durationMs, requestId, ...c.get('log'), ...(errorCode ? { errorCode } : {}) }, c.error);
    }
  });

  const limit = declaredLengthLimit(maxBodyBytes);
  for (const def of routes) {
    const handlers = [
      async (c: Ctx, next: () => Promise<void>) => {
        c.set('route', def.path);
        const t0 = performance.now();
        c.set('principal', await authorise(c, def, services));
        c.get('log').stages.auth = performance.now() - t0;
        await next();
      },
      ...(def.body ? [limit] : []),
      async (c: Ctx) => reply(c, await run(c, def)),
    ];
    app.on(def.method.toUpperCase(), honoPath(def.path), ...(handlers as [never]));
  }

  // The console: public static files (they hold no data; its API calls carry their own key).
  const consoleFiles = createConsoleFiles(options.consoleDir);
  app.get('/', (c) => {
    c.set('route', '/');
    return c.redirect(CONSOLE_PATH, 302);
  });
  app.get('/console', (c) => {
    c.set('route', '/console/*');
    return c.redirect(CONSOLE_PATH, 301);
  });
  app.get('/console/*', async (c) => {
    c.set('route', '/console/*');
    // the raw path (c.req.path is already partly decoded): decoded exactly once, then checked
    const file = await consoleFiles.read(new URL(c.req.url).pathname, c.req.header('if-none-match'));
    if (file.status === 304) return c.body(null, 304, file.headers);
    return c.body(file.body as Uint8Array<ArrayBuffer>, 200, file.headers);
  });

  app.notFound((c) => {
    throw new HttpError('E_ROUTE', `no route ${c.req.method} ${new URL(c.req.url).pathname}`);
  });

  app.onError((error, c) => {
    const mapped = mapError(error);
    if (mapped.status === 401) c.header('WWW-Authenticate', 'Bearer realm="ctxvm"');
    // the rest of an oversized body is never read: the connection cannot carry another request
    if (mapped.status === 413) c.header('Connection', 'close');
    c.header('x-ctxvm-error', mapped.body.error.code);
    return c.json(mapped.body, mapped.status as 400);
  });

  return { app, routes, metrics };
}

/** What @hono/node-server passes a handler as `c.env`: Node's request and response. */
interface NodeBindings {
  incoming: IncomingMessage;
  outgoing: ServerResponse;
}

/** Longest client request id kept, characters. */
const MAX_REQUEST_ID = 128;

/**
 * The id of a request: the client's `X-Request-Id` when it is a plain token (letters, digits,
 * `._:-`, at most 128), so a caller can follow its own id into the log; else a new random one.
 * It is echoed in the response's `X-Request-Id` and written on the log line.
 */
export function requestIdOf(header: string | undefined): string {
  if (header !== undefined && header.length > 0 && header.length <= MAX_REQUEST_ID && /^[A-Za-z0-9._:-]+$/.test(header)) return header;
  return randomUUID();
}

/**
 * The body limit. A body of declared length (Content-Length, not chunked) is judged by the header
 * alone: Node's parser never reads past it. Such a body then stays on @hono/node-server's direct
 * read from the socket; hono's `bodyLimit` would touch `c.req.raw.body`, which builds a fetch
 * Request with a web stream over the socket for every request (measured: ~5% of the server's CPU
 * per processMessage). Chunked bodies are counted as they stream, by `bodyLimit`.
 */
function declaredLengthLimit(maxBodyBytes: number) {
  const tooLarge = () => {
    throw new HttpError('E_TOO_LARGE', `request body is larger than ${maxBodyBytes} bytes`);
  };
  const streamed = bodyLimit({ maxSize: maxBodyBytes, onError: tooLarge });
  return async (c: Ctx, next: () => Promise<void>) => {
    const declared = c.req.header('content-length');
    if (declared !== undefined && /^\d+$/.test(declared) && c.req.header('transfer-encoding') === undefined) {
      if (Number(declared) > maxBodyBytes) tooLarge();
      return next();
    }
    return streamed(c, next);
  };
}

/** Checks the key against the route's access rule; resolves to the principal (or undefined on public routes). */
async function authorise(c: Ctx, def: RouteDef, services: ServerServices): Promise<ApiPrincipal | undefined> {
  if (def.access === 'public') return undefined;
  const header = c.req.header('authorization');
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!m) throw new HttpError('E_UNAUTHORIZED', 'missing API key: send "Authorization: Bearer <key>" (create one with `ctxvm keys create`)');
  const principal = await services.keys.verify(m[1]!);
  if (!principal) throw new HttpError('E_UNAUTHORIZED', 'invalid or revoked API key');
  c.get('log').keyId = principal.keyId;
  if (def.access === 'admin' && !principal.admin) throw new HttpError('E_FORBIDDEN', 'this route needs an admin key');
  if (def.access === 'user' && !principal.admin) {
    const user = c.req.param('user');
    if (user === undefined || user !== principal.userId) throw new HttpError('E_FORBIDDEN', 'this key may only access its own user');
  }
  return principal;
}

/**
 * A body is JSON: a request that says it sends something else (text/plain, a form) is refused
 * rather than parsed as JSON anyway. A request without a Content-Type is read as JSON.
 */
function assertJsonMediaType(header: string | undefined): void {
  if (header === undefined || header.trim() === '') return;
  const type = header.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type)) return;
  throw new HttpError('E_MEDIA_TYPE', `request body has Content-Type ${JSON.stringify(header)}: this route reads only application/json`);
}

/** Parses path, query, headers and body with the route's schemas and calls its handler. */
async function run(c: Ctx, def: RouteDef): Promise<HandlerReply> {
  const log = c.get('log');
  const t0 = performance.now();
  const params = def.params ? parseInput(def.params, c.req.param(), 'path') : undefined;
  if (params && typeof (params as { user?: unknown }).user === 'string') log.user = (params as { user: string }).user;
  const query = def.query ? parseInput(def.query, c.req.query(), 'query') : undefined;
  const headers = def.headers ? parseInput(def.headers, c.req.header(), 'header') : undefined;
  let body: unknown;
  if (def.body) {
    assertJsonMediaType(c.req.header('content-type'));
    const raw = await c.req.text();
    let json: unknown;
    try {
      json = raw.trim() === '' ? undefined : JSON.parse(raw);
    } catch {
      throw new UsageError('body: not valid JSON', { hint: 'send a JSON object with Content-Type: application/json' });
    }
    body = parseInput(def.body, json, 'body');
  }
  const t1 = performance.now();
  log.stages.validate = t1 - t0;
  const result = await def.handler({
    params,
    query,
    body,
    headers,
    principal: c.get('principal'),
    stage: (name, ms) => void (log.stages[name] = ms),
    note: (fields) => Object.assign(log, fields),
  });
  log.stages.handler = performance.now() - t1;
  if ('json' in result && result.status === undefined && def.response.status !== undefined) return { ...result, status: def.response.status };
  return result;
}

function reply(c: Ctx, r: HandlerReply): Response {
  if ('response' in r) return r.response;
  if ('json' in r) return c.json(r.json as object, (r.status ?? 200) as 200);
  return c.body(r.text, (r.status ?? 200) as 200, { 'content-type': r.contentType });
}
