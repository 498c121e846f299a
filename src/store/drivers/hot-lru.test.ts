import { describe, expect, it } from 'vitest';
import { createLruHotCache } from './hot-lru.js';

const ns = { userId: 'u', kind: 'k' };
const LONG = { ttlMs: 60_000 };

describe('createLruHotCache', () => {
  it('evicts the least recently used entry past maxEntries, counting reads as use', async () => {
    const cache = createLruHotCache({ maxEntries: 2 });
    await cache.set(ns, 'a', 1, LONG);
    await cache.set(ns, 'b', 2, LONG);
    await cache.get(ns, 'a'); // a is now more recent than b
    await cache.set(ns, 'c', 3, LONG);
    expect(await cache.getMany(ns, ['a', 'b', 'c'])).toEqual([1, undefined, 3]);
  });

  it('evicts past maxBytes and drops a value too big to ever fit, with its older value', async () => {
    const cache = createLruHotCache({ maxBytes: 200 });
    await cache.set(ns, 'a', 'x'.repeat(60), LONG);
    await cache.set(ns, 'b', 'x'.repeat(60), LONG);
    await cache.set(ns, 'c', 'x'.repeat(60), LONG); // a + b + c exceed 200 bytes with their keys
    expect(await cache.getMany(ns, ['a', 'b', 'c'])).toEqual([undefined, 'x'.repeat(60), 'x'.repeat(60)]);
    await cache.set(ns, 'b', 'x'.repeat(500), LONG);
    expect(await cache.get(ns, 'b')).toBeUndefined();
    expect(await cache.get(ns, 'c')).toBe('x'.repeat(60));
  });

  it('expires lazily at exactly ttlMs on the injected clock', async () => {
    let now = 1_000;
    const cache = createLruHotCache({ now: () => now });
    await cache.set(ns, 'a', 1, { ttlMs: 100 });
    now = 1_099;
    expect(await cache.get(ns, 'a')).toBe(1);
    now = 1_100;
    expect(await cache.get(ns, 'a')).toBeUndefined();
  });

  it('frees the room of expired entries once they are read', async () => {
    let now = 0;
    const cache = createLruHotCache({ maxEntries: 2, now: () => now });
    await cache.set(ns, 'old', 1, { ttlMs: 10 });
    await cache.set(ns, 'keep', 2, LONG);
    now = 20;
    expect(await cache.get(ns, 'old')).toBeUndefined();
    await cache.set(ns, 'new', 3, LONG); // fits without evicting 'keep'
    expect(await cache.getMany(ns, ['keep', 'new'])).toEqual([2, 3]);
  });

  it('is private to the process', () => {
    expect(createLruHotCache().shared).toBe(false);
    expect(createLruHotCache().onInvalidate).toBeUndefined();
  });

  it('refuses nonsensical bounds', () => {
    expect(() => createLruHotCache({ maxEntries: 0 })).toThrow(/maxEntries/);
    expect(() => createLruHotCache({ maxBytes: 1.5 })).toThrow(/maxBytes/);
  });
});
