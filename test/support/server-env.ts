/**
 * A throwaway server environment: temp CTXVM_HOME (real SQLite warm store, object store),
 * CLAUDE_CONFIG_DIR and CODEX_HOME, the services opened from that configuration, and helpers to
 * start the HTTP app on a real loopback socket and call it.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { loadConfig, type CtxvmConfig } from '../../src/core/config.js';
import { createHttpApp, type HttpApp, type HttpAppOptions } from '../../src/server/http.js';
import { openServerServices, type OpenedServerServices, type OpenServerServicesOptions } from '../../src/server/open-services.js';
import { listen, type ListeningServer } from '../../src/server/serve.js';

export interface ServerEnv {
  root: string;
  config: CtxvmConfig;
  /** Environment variables pointing a CLI run at this environment. */
  env: Record<string, string>;
  services: OpenedServerServices;
  close(): Promise<void>;
}

/** Opens services over fresh temp folders (`options` go to openServerServices). */
export async function createServerEnv(options: Pick<OpenServerServicesOptions, 'cacheReads'> = {}): Promise<ServerEnv> {
  const root = await mkdtemp(join(tmpdir(), 'ctxvm-server-'));
  const env = { CTXVM_HOME: join(root, 'ctxvm'), CLAUDE_CONFIG_DIR: join(root, 'claude'), CODEX_HOME: join(root, 'codex') };
  await Promise.all([mkdir(join(env.CLAUDE_CONFIG_DIR, 'projects'), { recursive: true }), mkdir(join(env.CODEX_HOME, 'sessions'), { recursive: true })]);
  const config = loadConfig(env, { homeDir: root, cwd: root });
  const services = await openServerServices({ config, timeZone: 'UTC', ...options });
  return {
    root,
    config,
    env,
    services,
    async close() {
      await services.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** A captured log: every line pino wrote, parsed. */
export interface CapturedLog {
  logger: Logger;
  lines: Record<string, unknown>[];
  /** Everything written, as text (to search for things that must not be there). */
  raw(): string;
}

export function captureLog(): CapturedLog {
  const raw: string[] = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => void raw.push(s) });
  return {
    logger,
    get lines() {
      return raw.map((s) => JSON.parse(s) as Record<string, unknown>);
    },
    raw: () => raw.join(''),
  };
}

/** A response, read whole. */
export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  json<T = any>(): T;
}

/** A running app and a client for it. */
export interface RunningApi {
  http: HttpApp;
  server: ListeningServer;
  call(method: string, path: string, options?: { key?: string; body?: unknown; rawBody?: string | ReadableStream<Uint8Array>; headers?: Record<string, string> }): Promise<ApiResponse>;
  close(): Promise<void>;
}

/** Starts the app over `services` on 127.0.0.1 with a free port. */
export async function startApi(services: OpenedServerServices, options: HttpAppOptions = {}): Promise<RunningApi> {
  const http = createHttpApp(services, { version: 'test', ...options });
  const server = await listen(http.app, { port: 0 });
  return {
    http,
    server,
    async call(method, path, o = {}) {
      const headers: Record<string, string> = { ...(o.key ? { authorization: `Bearer ${o.key}` } : {}), ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}), ...o.headers };
      const init: RequestInit & { duplex?: "half" } = { method, headers };
      if (o.rawBody !== undefined) {
        init.body = o.rawBody;
        if (o.rawBody instanceof ReadableStream) init.duplex = 'half';
      } else if (o.body !== undefined) init.body = JSON.stringify(o.body);
      const res = await fetch(server.url + path, init);
      const text = await res.text();
      return {
        status: res.status,
        headers: res.headers,
        text,
        json<T>() {
          try {
            return JSON.parse(text) as T;
          } catch (error) {
            throw new Error(`${method} ${path}: body is not JSON (status ${res.status}): ${text.slice(0, 300)}`, { cause: error });
          }
        },
      };
    },
    close: () => server.close(1000),
  };
}
