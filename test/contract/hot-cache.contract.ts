/**
 * The behaviour every `HotCache` driver must share. A driver's test file calls
 * `hotCacheContract(name, setup)` with a setup that builds a fresh, empty cache per test.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CtxvmError } from '../../src/errors.js';
import type { CacheNamespace, HotCache } from '../../src/store/hot-cache.js';

/** A fresh cache plus a way to let time pass for it. */
export interface HotCacheFixture {
  cache: HotCache;
  /** Lets `ms` milliseconds pass: moves an injected clock, or really waits. */
  advance(ms: number): Promise<void>;
}

const LONG = { ttlMs: 60_000 };
const alice: CacheNamespace = { userId: 'alice', kind: 'rebuild' };
const bob: CacheNamespace = { userId: 'bob', kind: 'rebuild' };

export function hotCacheContract(name: string, setup: () => Promise<HotCacheFixture>): void {
  describe(`HotCache contract: ${name}`, () => {
    let fixture: HotCacheFixture;
    let cache: HotCache;

    beforeEach(async () => {
      fixture = await setup();
      cache = fixture.cache;
    });
    afterEach(async () => {
      await cache.close();
    });

    it('declares its name and whether it is shared', () => {
      expect(cache.name).toEqual(expect.any(String));
      expect(typeof cache.shared).toBe('boolean');
    });

    it('misses a key that was never set', async () => {
      expect(await cache.get(alice, 'nothing')).toBeUndefined();
    });

    it('round-trips JSON values, null included', async () => {
      const values: Record<string, unknown> = {
        object: { title: 'ship v1', tags: ['a', 'b'], due: null, nested: { n: 1.5 } },
        array: [1, 'two', { three: 3 }],
        string: '买牛奶 — buy milk',
        number: 42,
        boolean: false,
        null: null,
      };
      for (const [key, value] of Object.entries(values)) await cache.set(alice, key, value, LONG);
      for (const [key, value] of Object.entries(values)) expect(await cache.get(alice, key)).toEqual(value);
    });

    it('hands out copies: mutating a result does not change the cache', async () => {
      await cache.set(alice, 'task', { title: 'a' }, LONG);
      const first = await cache.get<{ title: string }>(alice, 'task');
      first!.title = 'mutated';
      expect(await cache.get(alice, 'task')).toEqual({ title: 'a' });
    });

    it('encodes a value during set and setMany: a write not awaited keeps the value as it was, and a later get sees it', async () => {
      const value = { title: 'a' };
      const writing = cache.set(alice, 'early', value, LONG);
      const writingMany = cache.setMany(alice, [['early-batch', value]], LONG);
      value.title = 'mutated after the call';
      expect(await cache.get(alice, 'early')).toEqual({ title: 'a' });
      expect(await cache.get(alice, 'early-batch')).toEqual({ title: 'a' });
      await Promise.all([writing, writingMany]);
    });

    it('overwrites and deletes', async () => {
      await cache.set(alice, 'k', 1, LONG);
      await cache.set(alice, 'k', 2, LONG);
      expect(await cache.get(alice, 'k')).toBe(2);
      await cache.delete(alice, 'k');
      expect(await cache.get(alice, 'k')).toBeUndefined();
      await expect(cache.delete(alice, 'never-set')).resolves.toBeUndefined();
    });

    it('expires entries after their ttl', async () => {
      await cache.set(alice, 'short', 'gone soon', { ttlMs: 50 });
      await cache.set(alice, 'long', 'stays', LONG);
      await fixture.advance(150);
      expect(await cache.get(alice, 'short')).toBeUndefined();
      expect(await cache.get(alice, 'long')).toBe('stays');
    });

    it('reads and writes batches in key order', async () => {
      await cache.setMany(alice, [['a', 1], ['b', { two: 2 }]], LONG);
      await cache.setMany(alice, new Map([['c', [3]]]), LONG);
      expect(await cache.getMany(alice, ['c', 'missing', 'a', 'b'])).toEqual([[3], undefined, 1, { two: 2 }]);
      expect(await cache.getMany(alice, [])).toEqual([]);
      await expect(cache.setMany(alice, [], LONG)).resolves.toBeUndefined();
    });

    it('expires batch-written entries too', async () => {
      await cache.setMany(alice, [['a', 1], ['b', 2]], { ttlMs: 50 });
      await fixture.advance(150);
      expect(await cache.getMany(alice, ['a', 'b'])).toEqual([undefined, undefined]);
    });

    it('keeps users and kinds apart for the same key', async () => {
      const aliceTasks = { userId: 'alice', kind: 'tasks' };
      await cache.set(alice, 'k', 'alice rebuild', LONG);
      await cache.set(aliceTasks, 'k', 'alice tasks', LONG);
      await cache.set(bob, 'k', 'bob rebuild', LONG);
      expect(await cache.get(alice, 'k')).toBe('alice rebuild');
      expect(await cache.get(aliceTasks, 'k')).toBe('alice tasks');
      expect(await cache.get(bob, 'k')).toBe('bob rebuild');
      await cache.delete(alice, 'k');
      expect(await cache.get(aliceTasks, 'k')).toBe('alice tasks');
      expect(await cache.get(bob, 'k')).toBe('bob rebuild');
    });

    it('cannot be confused by separators, globs or escapes in ids', async () => {
      // Every pair below would share a key under naive "user:kind:key" joining or partial escaping.
      const spots: Array<[CacheNamespace, string]> = [
        [{ userId: 'a:b', kind: 'c' }, 'd'],
        [{ userId: 'a', kind: 'b:c' }, 'd'],
        [{ userId: 'a', kind: 'b' }, 'c:d'],
        [{ userId: '*', kind: 'b' }, 'c:d'],
        [{ userId: 'a*', kind: 'b' }, 'c:d'],
        [{ userId: '%3A', kind: 'b' }, 'c:d'],
        [{ userId: ':', kind: 'b' }, 'c:d'],
        [{ userId: '{a}', kind: 'b' }, 'c:d'],
        [{ userId: 'a}:{b', kind: 'b' }, 'c:d'],
      ];
      for (const [i, [ns, key]] of spots.entries()) await cache.set(ns, key, i, LONG);
      for (const [i, [ns, key]] of spots.entries()) expect(await cache.get(ns, key)).toBe(i);
      await cache.invalidateUser('*');
      expect(await cache.get({ userId: '*', kind: 'b' }, 'c:d')).toBeUndefined();
      for (const [i, [ns, key]] of spots.entries()) if (ns.userId !== '*') expect(await cache.get(ns, key)).toBe(i);
    });

    it('invalidateUser drops every kind of that user and nothing of others', async () => {
      const aliceTasks = { userId: 'alice', kind: 'tasks' };
      await cache.setMany(alice, [['a', 1], ['b', 2]], LONG);
      await cache.set(aliceTasks, 'today', ['t1'], LONG);
      await cache.set(bob, 'a', 'bob', LONG);
      await cache.invalidateUser('alice');
      expect(await cache.getMany(alice, ['a', 'b'])).toEqual([undefined, undefined]);
      expect(await cache.get(aliceTasks, 'today')).toBeUndefined();
      expect(await cache.get(bob, 'a')).toBe('bob');
      // The user is usable again straight away, and a second invalidation works the same.
      await cache.set(alice, 'a', 'fresh', LONG);
      expect(await cache.get(alice, 'a')).toBe('fresh');
      await cache.invalidateUser('alice');
      expect(await cache.get(alice, 'a')).toBeUndefined();
    });

    it('counts hits, misses and sets per key', async () => {
      expect(cache.stats()).toEqual({ hits: 0, misses: 0, sets: 0, errors: 0 });
      await cache.get(alice, 'a'); // miss
      await cache.set(alice, 'a', 1, LONG); // set
      await cache.get(alice, 'a'); // hit
      await cache.setMany(alice, [['b', 2], ['c', 3]], LONG); // 2 sets
      await cache.getMany(alice, ['a', 'b', 'zzz']); // 2 hits, 1 miss
      expect(cache.stats()).toEqual({ hits: 3, misses: 2, sets: 3, errors: 0 });
    });

    it('rejects bad arguments with a UsageError instead of storing them', async () => {
      const usage = { code: 'E_USAGE' };
      await expect(cache.set(alice, 'k', 1, { ttlMs: 0 })).rejects.toMatchObject(usage);
      await expect(cache.set(alice, 'k', 1, { ttlMs: Number.NaN })).rejects.toMatchObject(usage);
      await expect(cache.set(alice, 'k', undefined, LONG)).rejects.toMatchObject(usage);
      await expect(cache.set(alice, 'k', { n: 1n }, LONG)).rejects.toMatchObject(usage);
      await expect(cache.get({ userId: '', kind: 'x' }, 'k')).rejects.toMatchObject(usage);
      await expect(cache.get({ userId: 'u', kind: '' }, 'k')).rejects.toMatchObject(usage);
      await expect(cache.invalidateUser('')).rejects.toMatchObject(usage);
      // A bad value anywhere in a batch writes nothing.
      await expect(cache.setMany(alice, [['ok', 1], ['bad', () => 1]], LONG)).rejects.toMatchObject(usage);
      expect(await cache.get(alice, 'ok')).toBeUndefined();
    });

    it('rejects calls after close with E_UNAVAILABLE, and close is idempotent', async () => {
      await cache.close();
      await cache.close();
      const error = await cache.get(alice, 'k').catch((e: unknown) => e);
      expect(CtxvmError.is(error) && error.code).toBe('E_UNAVAILABLE');
      await expect(cache.set(alice, 'k', 1, LONG)).rejects.toMatchObject({ code: 'E_UNAVAILABLE' });
    });
  });
}
