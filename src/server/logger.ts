/**
 * Structured logs of the HTTP server (pino, one JSON line per request). A line names the route
 * pattern (never the raw path or query, which can carry message text), the status, the wall time
 * and per-stage timings in ms, the key id (never the key) and the user. Message text, queries
 * and replies appear only with `logContent` (`ctxvm serve --log-content`).
 */
import { pino, type DestinationStream, type Level, type Logger } from 'pino';

/** Options of `createServerLogger`. */
export interface ServerLoggerOptions {
  /** Where lines go (default: file descriptor 2, stderr). */
  destination?: DestinationStream | NodeJS.WritableStream;
  /** Lowest level written (default "info"); "silent" writes nothing. */
  level?: Level | 'silent';
}

/** Creates the server's pino logger. Sync writes to stderr: lines are never lost on a crash. */
export function createServerLogger(options: ServerLoggerOptions = {}): Logger {
  const destination = options.destination ?? pino.destination({ fd: 2, sync: true });
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'ctxvm' },
      // a request line carries no secret, but a stray object might: redact the usual suspects
      redact: { paths: ['authorization', 'headers.authorization', 'key', '*.key'], censor: '[redacted]' },
    },
    destination as DestinationStream,
  );
}

/** Everything one request line says. Times in ms. */
export interface RequestLogEntry {
  method: string;
  /** Route pattern, e.g. `/v1/users/{user}/messages` (or "unmatched"). */
  route: string;
  status: number;
  durationMs: number;
  /** The request's id, also in the response's `X-Request-Id` (the client's own when it sent a valid one). */
  requestId?: string;
  /** Per-stage wall time in ms: auth, validate, handler, and the engine's own stages. */
  stages: Record<string, number>;
  /** Id of the API key used (not the key). */
  keyId?: string;
  /** The `{user}` of the path, when there is one. */
  user?: string;
  /** The extracted intent of a processed message. */
  intent?: string;
  /** Error code of a failed request. */
  errorCode?: string;
  /** Only with `logContent`: the request's text fields and the reply. */
  content?: Record<string, unknown>;
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/** Writes one request line: info for 1xx–4xx, error for 5xx. */
export function logRequest(logger: Logger, entry: RequestLogEntry, cause?: unknown): void {
  const stages: Record<string, number> = {};
  for (const [name, ms] of Object.entries(entry.stages)) stages[name] = round(ms);
  const line = { ...entry, durationMs: round(entry.durationMs), stages };
  if (entry.status >= 500) logger.error({ ...line, ...(cause instanceof Error ? { err: { type: cause.name, message: cause.message, stack: cause.stack } } : {}) }, 'request failed');
  else logger.info(line, 'request');
}
