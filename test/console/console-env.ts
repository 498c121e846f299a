/**
 * The server the console tests drive: a temp CTXVM_HOME with real SQLite, a known Claude Code
 * session from the shared corpus (its trim pages tool output out behind stubs), a known memory
 * state (the Chinese seed, said at a fixed time through the HTTP API so /metrics counts it), an
 * admin key and a user key, and the real app listening on 127.0.0.1.
 */
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/core/config.js';
import { encodeClaudeProjectDir } from '../../src/session/discovery/resolve.js';
import { openServerServices, type OpenedServerServices } from '../../src/server/open-services.js';
import { CLAUDE_CORPUS_DIR } from '../support/corpus.js';
import { startApi, type RunningApi } from '../support/server-env.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { ensureConsoleBuilt, launchChromium } from './browser.js';

/** The fixture session: real Claude Code transcript whose trim leaves page-in stubs. */
export const FIXTURE_SESSION = {
  source: join(CLAUDE_CORPUS_DIR, 'drmaciver', 'coverage-test-fix.jsonl'),
  id: 'c64cc478-3430-40fe-8e9c-4ee9986e9754',
  project: '/tmp/tmpw6sk2trg',
};

/** The user of the memory state and what they said, in order, at `SEED_NOW`. */
export const SEED_USER = 'lin';
export const SEED_MESSAGES = ['记得下午三点要开项目评审会。', '另外，下班前需要把周报发给我。', '下午后还有啥要做到？', '把写周报标记为完成'];
export const SEED_NOW = '2026-03-10T09:00:00+08:00';
/** Said next, so every record kind of the memory view has something: a project, a decision, a fact, a preference. */
export const SEED_MORE = ['「凤凰」项目下周五上线，需要准备发布说明。', '我们决定用 PostgreSQL 做存储，因为团队都熟悉。', '我住在上海。', '以后任务都按截止时间排序。'];
export const SEED_TIME_ZONE = 'Asia/Shanghai';

export const haveFixture = existsSync(FIXTURE_SESSION.source);

export interface ConsoleEnv {
  api: RunningApi;
  services: OpenedServerServices;
  /** Console URL: `<origin>/console/`. */
  consoleUrl: string;
  keys: { admin: string; user: string; revoked: string };
  claudeConfigDir: string;
  /** Calls the API as admin (or with `key`) and returns the JSON body; throws on a non-2xx status. */
  json<T = any>(method: string, path: string, body?: unknown, key?: string): Promise<T>;
  close(): Promise<void>;
}

/** Builds the environment; `seed: false` leaves memory and sessions empty. */
export async function createConsoleEnv(options: { seed?: boolean } = {}): Promise<ConsoleEnv> {
  const consoleDir = await ensureConsoleBuilt();
  const root = await mkdtemp(join(tmpdir(), 'ctxvm-console-'));
  const vars = { CTXVM_HOME: join(root, 'ctxvm'), CLAUDE_CONFIG_DIR: join(root, 'claude'), CODEX_HOME: join(root, 'codex') };
  await Promise.all([mkdir(join(vars.CLAUDE_CONFIG_DIR, 'projects'), { recursive: true }), mkdir(join(vars.CODEX_HOME, 'sessions'), { recursive: true })]);
  const config = loadConfig(vars, { homeDir: root, cwd: root });
  // reads cached as with Redis or PostgreSQL, so the metrics view shows the memory-read counts too
  const services = await openServerServices({ config, timeZone: SEED_TIME_ZONE, cacheReads: true });
  const revoked = await services.keys.create({ userId: SEED_USER });
  await services.keys.revoke(revoked.keyId);
  const keys = { admin: (await services.keys.create({ admin: true })).key, user: (await services.keys.create({ userId: SEED_USER })).key, revoked: revoked.key };
  const api = await startApi(services, { consoleDir });

  async function json<T>(method: string, path: string, body?: unknown, key = keys.admin): Promise<T> {
    const r = await api.call(method, path, { key, ...(body !== undefined ? { body } : {}) });
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text.slice(0, 300)}`);
    return r.json<T>();
  }

  if (options.seed !== false) {
    const dir = join(config.claudeConfigDir, 'projects', encodeClaudeProjectDir(FIXTURE_SESSION.project));
    await mkdir(dir, { recursive: true });
    await copyFile(FIXTURE_SESSION.source, join(dir, `${FIXTURE_SESSION.id}.jsonl`));
    for (const text of [...SEED_MESSAGES, ...SEED_MORE]) await json('POST', `/v1/users/${SEED_USER}/messages`, { text, now: SEED_NOW }, keys.user);
  }

  return {
    api,
    services,
    consoleUrl: `${api.server.url}/console/`,
    keys,
    claudeConfigDir: config.claudeConfigDir,
    json,
    async close() {
      await api.close();
      await services.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** A suite's server and Chromium: started before its tests, closed after them. */
export interface ConsoleSuite {
  readonly env: ConsoleEnv;
  readonly browser: Browser;
}

/** Registers the hooks that start and close a suite's server (`createConsoleEnv()`) and Chromium. */
export function useConsoleSuite(): ConsoleSuite {
  const held: { env?: ConsoleEnv; browser?: Browser } = {};
  beforeAll(async () => {
    [held.env, held.browser] = await Promise.all([createConsoleEnv(), launchChromium()]);
  });
  afterAll(async () => {
    await held.browser?.close();
    await held.env?.close();
  });
  return {
    get env() {
      return held.env!;
    },
    get browser() {
      return held.browser!;
    },
  };
}
