/**
 * The Redis hot-cache driver against a real redis-server it does not control: restarted from an
 * older snapshot (values from before read as misses, the cache works again at once) and paused
 * (the first call times out, the breaker refuses the rest at once, and a probe closes it after
 * SIGCONT). The API-level versions of these are redis-rollback and redis-stall.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createRedisHotCache } from '../../src/store/drivers/hot-redis.js';
import type { HotCache, HotCacheInvalidation } from '../../src/store/hot-cache.js';
import { recordHotLog } from '../support/redis-api.js';
import { describeWithRedisLab, startRedisNode, until, type RedisNode } from '../support/redis-lab.js';

const ns = { userId: 'u', kind: 'tasks' };
const LONG = { ttlMs: 600_000 };

describeWithRedisLab('redis hot cache against a real server that rolls back or hangs', () => {
  let dir: string;
  let redis: RedisNode;
  let cache: HotCache;
  let log: ReturnType<typeof recordHotLog>;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ctxvm-hot-lab-'));
    redis = await startRedisNode({ dir });
    log = recordHotLog();
    cache = await createRedisHotCache({ url: redis.url, logger: log.logger, maxReconnectDelayMs: 100 });
  });
  afterEach(async () => {
    await cache?.close();
    await redis?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('never serves a value of the state before a restart from an older snapshot', async () => {
    const heard: HotCacheInvalidation[] = [];
    cache.onInvalidate!((event) => heard.push(event));
    await cache.set(ns, 'k', 'v1', LONG);
    await cache.set(ns, 'gone', 'old', LONG);
    redis.cli('SAVE');
    await cache.set(ns, 'k', 'v2', LONG);
    await cache.delete(ns, 'gone');
    await cache.invalidateUser('other');
    expect(await cache.get(ns, 'k')).toBe('v2');

    await redis.kill();
    await redis.start();
    // The snapshot holds k = v1 and gone = old, both vouched for by the version counter it holds too.
    expect(redis.cli('GET', `ctxvm:{u}:v0:tasks:k`)).toMatch(/\|"v1"$/);
    await until('the epoch change', () => cache.health!().epochChanges === 1);
    expect(await cache.get(ns, 'k')).toBeUndefined();
    expect(await cache.getMany(ns, ['k', 'gone'])).toEqual([undefined, undefined]);
    expect(heard).toContainEqual({ scope: 'all' });
    expect(log.warn.some((m) => m.includes('restarted from disk or failed over'))).toBe(true);
    // And the cache is in use again at once.
    await cache.set(ns, 'k', 'v3', LONG);
    expect(await cache.get(ns, 'k')).toBe('v3');
    expect(cache.health!()).toMatchObject({ state: 'up', breaker: 'closed' });
  });

  it('skips a paused server after one timeout and takes it back after SIGCONT', async () => {
    await cache.set(ns, 'k', 'v', LONG);
    redis.pause();
    try {
      expect(await cache.get(ns, 'k')).toBeUndefined(); // waits one command timeout
      expect(cache.health!()).toMatchObject({ state: 'down', trips: 1 });
      const refusedBefore = cache.health!().shortCircuited;
      for (let i = 0; i < 100; i++) expect(await cache.get(ns, 'k')).toBeUndefined();
      await cache.set(ns, 'k', 'w', LONG); // dropped, and owed as a removal
      expect(cache.health!().shortCircuited - refusedBefore).toBe(101);
      expect(log.error, log.error.join('\n')).toHaveLength(1);
    } finally {
      redis.resume();
    }
    await until('the breaker to close', () => cache.health!().state === 'up', 5_000);
    expect(cache.health!()).toMatchObject({ breaker: 'closed', trips: 1 });
    // The write dropped during the pause was repaired by removal: no older value is served.
    await until('the repair', async () => (await cache.get(ns, 'k')) === undefined);
    await cache.set(ns, 'k', 'x', LONG);
    expect(await cache.get(ns, 'k')).toBe('x');
    expect(log.info.length).toBeGreaterThanOrEqual(1);
  });
});
