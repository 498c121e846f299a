import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeValue, escapeKeyPart, hotCacheKey, ttlMsOf, userVersionKey } from './hot-cache.js';
import { createHotCache } from './open-hot-cache.js';

// A small alphabet dense in separators and escapes makes near-collisions common.
const part = fc.string({ unit: fc.constantFrom('a', 'b', ':', '%', '3', 'A', '{', '}', '*', ' ', '\n', 'é'), maxLength: 6 });
const entry = fc.record({ userId: part, kind: part, version: fc.nat(3), key: part });

describe('hot cache keys', () => {
  it('escapes separators, braces, globs, spaces and the escape character itself', () => {
    expect(escapeKeyPart('a:b{c}*?[d]\\ %')).toBe('a%3Ab%7Bc%7D%2A%3F%5Bd%5D%5C%20%25');
    expect(escapeKeyPart('plain-id_1.2~用户')).toBe('plain-id_1.2~用户');
  });

  it('lays a key out as prefix, hash-tagged user, version, kind and key', () => {
    expect(hotCacheKey('ctxvm', { userId: 'a:b', kind: 'tasks' }, 3, 'today')).toBe('ctxvm:{a%3Ab}:v3:tasks:today');
    expect(userVersionKey('ctxvm', 'a:b')).toBe('ctxvm:{a%3Ab}:version');
  });

  it('never gives two different entries the same key (no query crosses users)', () => {
    fc.assert(
      fc.property(entry, entry, (x, y) => {
        const same = hotCacheKey('p', x, x.version, x.key) === hotCacheKey('p', y, y.version, y.key);
        expect(same).toBe(x.userId === y.userId && x.kind === y.kind && x.version === y.version && x.key === y.key);
      }),
      { numRuns: 5000 },
    );
  });

  it('never gives an entry the key of a version counter', () => {
    fc.assert(
      fc.property(entry, part, (x, userId) => {
        expect(hotCacheKey('p', x, x.version, x.key)).not.toBe(userVersionKey('p', userId));
      }),
    );
  });

  it('keeps each user inside one hash tag, so one user maps to one Redis Cluster slot', () => {
    fc.assert(
      fc.property(entry, (x) => {
        const key = hotCacheKey('p', x, x.version, x.key);
        expect(key.indexOf('{')).toBe(2);
        expect(key.slice(3, key.indexOf('}'))).toBe(escapeKeyPart(x.userId));
      }),
    );
  });
});

describe('hot cache values and TTLs', () => {
  it('encodes JSON and refuses what JSON cannot hold', () => {
    expect(encodeValue({ a: [1, null] })).toBe('{"a":[1,null]}');
    expect(encodeValue(null)).toBe('null');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const bad of [undefined, () => 1, Symbol('s'), 1n, cyclic]) expect(() => encodeValue(bad)).toThrow(/hot cache/);
  });

  it('rounds TTLs up to whole milliseconds and refuses non-positive ones', () => {
    expect(ttlMsOf({ ttlMs: 1.2 })).toBe(2);
    expect(ttlMsOf({ ttlMs: 0.001 })).toBe(1);
    for (const ttlMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => ttlMsOf({ ttlMs })).toThrow(/ttlMs/);
    expect(() => ttlMsOf(undefined)).toThrow(/ttlMs/);
  });
});

describe('createHotCache', () => {
  it('picks the in-process LRU when no Redis URL is configured', async () => {
    const cache = await createHotCache({ redisUrl: undefined });
    expect([cache.name, cache.shared]).toEqual(['lru', false]);
    await cache.close();
  });
});
