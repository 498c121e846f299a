/**
 * The redis driver against a real Redis: the shared contract, then what only a shared cache
 * can do (two clients standing in for two processes). Each run writes under its own random
 * prefix and removes it afterwards, so runs and developers can share one Redis.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from 'redis';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createRedisHotCache, type RedisHotCacheOptions } from '../../src/store/drivers/hot-redis.js';
import type { HotCache, HotCacheInvalidation } from '../../src/store/hot-cache.js';
import { createHotCache } from '../../src/store/open-hot-cache.js';
import { deleteRedisKeys, describeWithService } from '../support/services.js';
import { hotCacheContract } from './hot-cache.contract.js';

const runPrefix = `ctxvm-test-${randomUUID()}`;
let fixtures = 0;
const nextPrefix = () => `${runPrefix}:${++fixtures}`;

describeWithService('redis', process.env.REDIS_URL, (url) => {
  afterAll(async () => {
    await deleteRedisKeys(url, runPrefix);
  });

  hotCacheContract('redis', async () => ({
    cache: await createRedisHotCache({ url, keyPrefix: nextPrefix() }),
    advance: (ms) => sleep(ms),
  }));

  describe('shared between processes', () => {
    const open: HotCache[] = [];
    const ns = { userId: 'u:1', kind: 'tasks' };
    const LONG = { ttlMs: 60_000 };

    // Two caches over one prefix stand in for two processes: separate connections, separate
    // remembered versions, separate subscribers.
    async function twoProcesses(options: Partial<RedisHotCacheOptions> = {}): Promise<[HotCache, HotCache]> {
      const keyPrefix = nextPrefix();
      const a = await createRedisHotCache({ url, keyPrefix, ...options });
      const b = await createRedisHotCache({ url, keyPrefix, ...options });
      open.push(a, b);
      return [a, b];
    }

    afterEach(async () => {
      await Promise.all(open.splice(0).map((cache) => cache.close()));
    });

    it('declares itself shared, and is what a configured Redis URL selects', async () => {
      const [a] = await twoProcesses();
      expect(a.shared).toBe(true);
      const selected = await createHotCache({ redisUrl: url, keyPrefix: nextPrefix() });
      open.push(selected);
      expect([selected.name, selected.shared]).toEqual(['redis', true]);
    });

    it('takes a reply that came in time even when the process was busy past the deadline', async () => {
      const errors: string[] = [];
      const [a] = await twoProcesses({ commandTimeoutMs: 200, logger: { error: (m) => errors.push(m), warn: () => {}, info: () => {} } });
      await a.set(ns, 'x', 'ready', LONG);
      const reading = a.get(ns, 'x');
      const until = Date.now() + 400; // a synchronous stretch longer than the deadline: Redis answers meanwhile
      while (Date.now() < until);
      expect(await reading).toBe('ready');
      expect(a.stats().errors).toBe(0);
      expect(errors).toEqual([]);
    });

    it('sees values written by the other process', async () => {
      const [a, b] = await twoProcesses();
      await a.setMany(ns, [['x', 1], ['y', 2]], LONG);
      expect(await b.getMany(ns, ['x', 'y'])).toEqual([1, 2]);
    });

    it("sees the other process's invalidateUser at once when versions are not remembered", async () => {
      const [a, b] = await twoProcesses({ versionCacheMs: 0 });
      await a.set(ns, 'x', 'old', LONG);
      expect(await b.get(ns, 'x')).toBe('old');
      await a.invalidateUser(ns.userId);
      expect(await b.get(ns, 'x')).toBeUndefined();
    });

    it("sees the other process's invalidateUser through pub/sub, long before its remembered version expires", async () => {
      const [a, b] = await twoProcesses({ versionCacheMs: 60_000 });
      await a.set(ns, 'x', 'old', LONG);
      expect(await b.get(ns, 'x')).toBe('old'); // b now remembers the version for a minute
      await a.invalidateUser(ns.userId);
      await vi.waitFor(async () => expect(await b.get(ns, 'x')).toBeUndefined(), { timeout: 5_000, interval: 10 });
      expect(await a.get(ns, 'x')).toBeUndefined();
    });

    it('tells listeners of every invalidation once, its own included', async () => {
      const [a, b] = await twoProcesses();
      const heardByA: HotCacheInvalidation[] = [];
      const heardByB: HotCacheInvalidation[] = [];
      a.onInvalidate!((event) => heardByA.push(event));
      const unsubscribe = b.onInvalidate!((event) => heardByB.push(event));
      await a.invalidateUser('first');
      expect(heardByA).toEqual([{ scope: 'user', userId: 'first' }]); // synchronously, before Redis answers
      await vi.waitFor(() => expect(heardByB).toEqual([{ scope: 'user', userId: 'first' }]), { timeout: 5_000, interval: 10 });
      await b.invalidateUser('second');
      // One channel delivers in order: once a has b's message, a's own echo has come and gone.
      await vi.waitFor(() => expect(heardByA).toHaveLength(2), { timeout: 5_000, interval: 10 });
      expect(heardByA).toEqual([
        { scope: 'user', userId: 'first' },
        { scope: 'user', userId: 'second' },
      ]);
      unsubscribe();
      await a.invalidateUser('third');
      await sleep(50);
      expect(heardByB).toHaveLength(2);
    });

    it('stores every entry with a TTL and keeps all keys of one user in one cluster slot', async () => {
      const keyPrefix = nextPrefix();
      const cache = await createRedisHotCache({ url, keyPrefix });
      open.push(cache);
      await cache.set({ userId: 'a:b*', kind: 'k' }, 'x', 1, { ttlMs: 30_000 });
      await cache.invalidateUser('a:b*');
      const raw = createClient({ url });
      await raw.connect();
      try {
        const keys: string[] = [];
        for await (const batch of raw.scanIterator({ MATCH: `${keyPrefix}:*` })) keys.push(...batch);
        expect(keys.sort()).toEqual([`${keyPrefix}:{a%3Ab%2A}:v0:k:x`, `${keyPrefix}:{a%3Ab%2A}:version`]);
        const entryTtl = await raw.pTTL(`${keyPrefix}:{a%3Ab%2A}:v0:k:x`);
        expect(entryTtl).toBeGreaterThan(0);
        expect(entryTtl).toBeLessThanOrEqual(30_000);
      } finally {
        raw.destroy();
      }
    });
  });
});
