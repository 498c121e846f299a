/**
 * Two real processes write the same user at the same time, through the cached store, on SQLite
 * (one file) and on PostgreSQL (one schema): no update is lost. Each child (fixtures/memory-writer.ts,
 * bundled from the current sources) creates N tasks with one turn each, completes every third,
 * sets its own keyed fact N times and overwrites one shared fact N times; afterwards the counts,
 * statuses, fact values and the change history match that exactly.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqlMemoryStore } from '../../src/memory/store/sql-memory-store.js';
import { openWarmDatabase } from '../../src/store/warm/open.js';
import { bundleScript } from '../support/bundle-script.js';
import { createTempSchema, postgresReady } from '../support/postgres.js';
import { deleteRedisKeys, describeWithService, probeService, serviceUrl } from '../support/services.js';

const N = 40;
const USER = 'shared-user';
const ENTRY = fileURLToPath(new URL('./fixtures/memory-writer.ts', import.meta.url));
let writer: string;

beforeAll(async () => {
  writer = await bundleScript(ENTRY, 'memory-writer');
}, 120_000);
afterAll(async () => {
  if (writer) await rm(dirname(writer), { recursive: true, force: true });
});

interface Target {
  db: string;
  searchPath?: string;
  redis?: string;
  keyPrefix?: string;
}

function runWriter(args: Record<string, unknown>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [writer, JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function twoWriters(target: Target): Promise<void> {
  // Both start at the same instant, after both have opened their connections.
  const startAtMs = Date.now() + 1500;
  const runs = await Promise.all(['a', 'b'].map((label) => runWriter({ ...target, userId: USER, label, n: N, startAtMs })));
  for (const run of runs) expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  const reports = runs.map((r) => JSON.parse(r.stdout.trim()) as { completed: number; readStats: { hits: number } });
  for (const r of reports) expect(r.completed).toBe(Math.ceil(N / 3));

  const db = await openWarmDatabase({ db: target.db, ...(target.searchPath ? { postgres: { searchPath: target.searchPath, poolSize: 2 } } : {}) });
  try {
    const u = createSqlMemoryStore(db).forUser(USER);
    const tasks = await u.listTasks({ limit: 10_000 });
    const done = Math.ceil(N / 3);
    expect(tasks).toHaveLength(2 * N);
    for (const label of ['a', 'b']) {
      const mine = tasks.filter((t) => t.title.startsWith(`${label} task `));
      expect(mine).toHaveLength(N);
      expect(mine.filter((t) => t.status === 'done').map((t) => Number(t.title.split(' ')[2])).sort((x, y) => x - y)).toEqual(
        Array.from({ length: done }, (_, i) => i * 3),
      );
      expect((await u.getFactByKey(`writer-${label}`))?.text).toBe(`step ${N - 1}`);
    }
    expect(await u.countTurns()).toBe(2 * N);
    expect((await u.getFactByKey('shared'))?.text).toMatch(new RegExp(`^[ab] step ${N - 1}$`));

    const history = await u.history({ limit: 100_000 });
    const count = (kind: string, field: string) => history.filter((h) => h.kind === kind && h.field === field).length;
    expect(count('task', '*')).toBe(2 * N);
    expect(count('task', 'status')).toBe(2 * done);
    expect(count('fact', '*')).toBe(3);
    // Own facts: N - 1 changes each; the shared one: every one of the 2N writes but the first.
    expect(count('fact', 'text')).toBe(2 * (N - 1) + (2 * N - 1));
    expect(new Set(history.map((h) => h.seq)).size).toBe(history.length);
    // The version counts every write: 2N turns, 2N tasks, the completions and 4N fact writes.
    expect(await u.version()).toBe(2 * N + 2 * N + 2 * done + 4 * N);
  } finally {
    await db.close();
  }
}

describe('two processes writing one user', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ctxvm-writers-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('lose no update on SQLite (in-process LRU in each)', async () => {
    const db = join(dir, 'lru.db');
    await (await openWarmDatabase({ db })).close(); // migrated once, before the race
    await twoWriters({ db });
  });

  it('lose no update on SQLite with a shared Redis', async (context) => {
    const redis = serviceUrl('redis');
    if (!(await probeService('redis', redis)).available) {
      if (process.env.CI === 'true') throw new Error('redis is required when CI=true');
      return context.skip();
    }
    const keyPrefix = `ctxvm-test-writers-${randomUUID()}`;
    const db = join(dir, 'redis.db');
    await (await openWarmDatabase({ db })).close();
    try {
      await twoWriters({ db, redis, keyPrefix });
    } finally {
      await deleteRedisKeys(redis, keyPrefix);
    }
  });
});

describeWithService(
  'postgres',
  process.env.DATABASE_URL,
  (url) => {
    it('two processes writing one user lose no update on PostgreSQL', async () => {
      const schema = await createTempSchema(url, 'writers');
      try {
        await (await openWarmDatabase({ db: url, postgres: { searchPath: schema.name, poolSize: 1 } })).close();
        const redis = serviceUrl('redis');
        const withRedis = (await probeService('redis', redis)).available;
        const keyPrefix = `ctxvm-test-writers-${randomUUID()}`;
        await twoWriters({ db: url, searchPath: schema.name, ...(withRedis ? { redis, keyPrefix } : {}) });
        if (withRedis) await deleteRedisKeys(redis, keyPrefix);
      } finally {
        await schema.drop();
      }
    });
  },
  { check: postgresReady },
);
