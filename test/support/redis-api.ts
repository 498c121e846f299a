/**
 * The HTTP API over a real SQLite warm store and a Redis hot tier at a given URL (a lab
 * redis-server, see ./redis-lab.ts), with the hot tier's log captured: what the fault tests of
 * the hot tier drive.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/core/config.js';
import { openServerServices, type OpenedServerServices } from '../../src/server/open-services.js';
import type { HotCacheLogger } from '../../src/store/hot-cache.js';
import { startApi, type RunningApi } from './server-env.js';

export interface HotLog {
  logger: HotCacheLogger;
  error: string[];
  warn: string[];
  info: string[];
}

export function recordHotLog(): HotLog {
  const log: HotLog = {
    error: [],
    warn: [],
    info: [],
    logger: {
      error: (m) => void log.error.push(m),
      warn: (m) => void log.warn.push(m),
      info: (m) => void log.info.push(m),
    },
  };
  return log;
}

export interface RedisApi {
  api: RunningApi;
  services: OpenedServerServices;
  log: HotLog;
  /** Posts a message for `user` and returns the response body. */
  say(user: string, text: string): Promise<any>;
  /** Task titles of `user` as the API lists them, sorted. */
  tasks(user: string): Promise<string[]>;
  /** Task titles of `user` in the warm store itself, sorted. */
  warmTasks(user: string): Promise<string[]>;
  close(): Promise<void>;
}

/** Opens the services with `CTXVM_REDIS=redisUrl` in a temp CTXVM_HOME and serves them on a free port. */
export async function openRedisApi(redisUrl: string): Promise<RedisApi> {
  const root = await mkdtemp(join(tmpdir(), 'ctxvm-redis-api-'));
  const env = { CTXVM_HOME: join(root, 'ctxvm'), CLAUDE_CONFIG_DIR: join(root, 'claude'), CODEX_HOME: join(root, 'codex'), CTXVM_REDIS: redisUrl };
  await Promise.all([mkdir(join(env.CLAUDE_CONFIG_DIR, 'projects'), { recursive: true }), mkdir(join(env.CODEX_HOME, 'sessions'), { recursive: true })]);
  const log = recordHotLog();
  const services = await openServerServices({ config: loadConfig(env, { homeDir: root, cwd: root }), timeZone: 'UTC', hotLogger: log.logger });
  const api = await startApi(services, { publicMetrics: true });
  const key = (await services.keys.create({ admin: true, label: 'faults' })).key;
  const titles = (tasks: Array<{ title: string }>) => tasks.map((t) => t.title).sort();
  return {
    api,
    services,
    log,
    async say(user, text) {
      const res = await api.call('POST', `/v1/users/${user}/messages`, { key, body: { text } });
      if (res.status !== 200) throw new Error(`POST message: ${res.status} ${res.text}`);
      return res.json();
    },
    async tasks(user) {
      const res = await api.call('GET', `/v1/users/${user}/tasks`, { key });
      if (res.status !== 200) throw new Error(`GET tasks: ${res.status} ${res.text}`);
      return titles(res.json().tasks);
    },
    warmTasks: async (user) => titles(await services.store.forUser(user).listTasks()),
    async close() {
      await api.close();
      await services.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}
