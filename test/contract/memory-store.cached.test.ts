/**
 * The MemoryStore contract (isolation property included) against the cached store: the warm
 * store behind the hot-tier read cache, on every hot driver and in both consistency modes, so
 * caching can never leak a record across users or serve a value a write has replaced.
 *
 *   sqlite + lru    warm-version (the default for a private cache) and generation
 *   sqlite + redis  generation (the default for a shared cache)
 *   postgres + redis
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { createCachedMemoryStore, type ReadCacheConsistency } from '../../src/memory/cached-memory-store.js';
import type { MemoryStore } from '../../src/memory/memory-store.js';
import { createSqlMemoryStore, openMemoryStore } from '../../src/memory/store/sql-memory-store.js';
import { createLruHotCache } from '../../src/store/drivers/hot-lru.js';
import { createRedisHotCache } from '../../src/store/drivers/hot-redis.js';
import type { HotCache } from '../../src/store/hot-cache.js';
import { openWarmDatabase } from '../../src/store/warm/open.js';
import { createTempSchema, postgresReady } from '../support/postgres.js';
import { deleteRedisKeys, describeWithService } from '../support/services.js';
import { memoryStoreContract, type MemoryStoreHarness } from './memory-store.contract.js';

async function sqliteWarm(now: () => number): Promise<{ store: MemoryStore; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'ctxvm-cached-'));
  const store = await openMemoryStore({ db: join(dir, 'ctxvm.db'), now });
  return {
    store,
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function cachedHarness(warm: { store: MemoryStore; cleanup(): Promise<void> }, hot: HotCache, consistency?: ReadCacheConsistency): MemoryStoreHarness {
  return {
    store: createCachedMemoryStore({ store: warm.store, hot, ...(consistency ? { consistency } : {}) }),
    async cleanup() {
      await hot.close();
      await warm.cleanup();
    },
  };
}

for (const consistency of ['warm-version', 'generation'] as const) {
  memoryStoreContract(`sqlite + lru (${consistency})`, async ({ now }) => cachedHarness(await sqliteWarm(now), createLruHotCache(), consistency));
}

describeWithService('redis', process.env.REDIS_URL, (redisUrl) => {
  const runPrefix = `ctxvm-test-cached-${randomUUID()}`;
  let n = 0;
  const redis = () => createRedisHotCache({ url: redisUrl, keyPrefix: `${runPrefix}:${++n}` });
  afterAll(async () => {
    await deleteRedisKeys(redisUrl, runPrefix);
  });

  memoryStoreContract('sqlite + redis (generation)', async ({ now }) => cachedHarness(await sqliteWarm(now), await redis()));

  describeWithService(
    'postgres',
    process.env.DATABASE_URL,
    (pgUrl) => {
      memoryStoreContract('postgres + redis (generation)', async ({ now }) => {
        const schema = await createTempSchema(pgUrl, 'cached');
        const db = await openWarmDatabase({ db: pgUrl, now, postgres: { searchPath: schema.name, poolSize: 4, settings: { synchronous_commit: 'off' } } });
        const warm = {
          store: createSqlMemoryStore(db, { now }),
          async cleanup() {
            await db.close();
            await schema.drop();
          },
        };
        return cachedHarness(warm, await redis());
      });
    },
    { check: postgresReady },
  );
});
