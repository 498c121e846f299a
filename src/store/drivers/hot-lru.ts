/**
 * In-process hot cache: the zero-setup default. A `Map` keeps insertion order, so deleting and
 * re-inserting an entry on every hit makes its first key the least recently used one. Expired
 * entries are dropped lazily when read, or sooner by the size bound (nothing reads them, so
 * they drift to the LRU end), which keeps the cache free of timers.
 */
import { Buffer } from 'node:buffer';
import {
  type CacheNamespace,
  type HotCache,
  type HotCacheSetOptions,
  assertKey,
  assertNamespace,
  assertUserId,
  closedCacheError,
  createStatsCounter,
  encodeValue,
  hotCacheKey,
  ttlMsOf,
} from '../hot-cache.js';
import { UsageError } from '../../errors.js';

/** Options of `createLruHotCache`. */
export interface LruHotCacheOptions {
  /** Most entries kept before the least recently used is evicted (default 100 000). */
  maxEntries?: number;
  /** Most bytes kept, counted as UTF-8 length of keys plus JSON values (default 64 MiB). */
  maxBytes?: number;
  /** Clock in Unix ms (default `Date.now`); inject one to test expiry without waiting. */
  now?: () => number;
}

/**
 * Default `maxEntries` of the in-process cache. Entries are small (a stored turn, a turn's
 * neighbourhood, a record list), so the byte bound is the one meant to bind: at 10 000, 200 users
 * writing in turn (bench/process-message-cpu.bench.mjs) evicted their turns by count, and 42% of
 * the history layer's turn reads missed (20% at 100 000, mostly turns stored since the last read).
 * The map's own overhead per entry (~150 bytes) is not in `maxBytes`: ~15 MiB at this bound.
 */
export const DEFAULT_LRU_MAX_ENTRIES = 100_000;
/** Default `maxBytes` of the in-process cache (64 MiB). */
export const DEFAULT_LRU_MAX_BYTES = 64 * 1024 * 1024;

interface LruEntry {
  json: string;
  bytes: number;
  /** Absolute expiry, Unix ms. */
  expiresAtMs: number;
}

// Entry keys reuse the shared key function so both drivers namespace identically; the prefix
// is only cosmetic here.
const PREFIX = 'lru';

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) throw new UsageError(`createLruHotCache: ${name} must be a positive integer, got ${value}`);
  return value;
}

/** An in-process LRU hot cache with per-entry TTLs and an entry and byte bound; not shared between processes. */
export function createLruHotCache(options: LruHotCacheOptions = {}): HotCache {
  const maxEntries = positiveInteger('maxEntries', options.maxEntries, DEFAULT_LRU_MAX_ENTRIES);
  const maxBytes = positiveInteger('maxBytes', options.maxBytes, DEFAULT_LRU_MAX_BYTES);
  const now = options.now ?? Date.now;
  const entries = new Map<string, LruEntry>();
  // Bumping a user's version orphans all of their entries at once; the orphans are never read
  // again, so the LRU order evicts them first. A map entry per invalidated user is the cost.
  const versions = new Map<string, number>();
  const stats = createStatsCounter();
  let totalBytes = 0;
  let closed = false;
  const createdAtMs = Date.now();

  const keyOf = (ns: CacheNamespace, key: string) => hotCacheKey(PREFIX, ns, versions.get(ns.userId) ?? 0, key);

  function remove(storageKey: string): void {
    const entry = entries.get(storageKey);
    if (!entry) return;
    entries.delete(storageKey);
    totalBytes -= entry.bytes;
  }

  function read<T>(storageKey: string, at: number): T | undefined {
    const entry = entries.get(storageKey);
    if (entry && entry.expiresAtMs <= at) remove(storageKey);
    if (!entry || entry.expiresAtMs <= at) {
      stats.misses++;
      return undefined;
    }
    entries.delete(storageKey);
    entries.set(storageKey, entry);
    stats.hits++;
    // Parsing on every hit hands each caller its own copy, as Redis would: a caller mutating
    // what it got cannot change what the next caller reads.
    return JSON.parse(entry.json) as T;
  }

  function write(storageKey: string, json: string, expiresAtMs: number): void {
    remove(storageKey);
    stats.sets++;
    const bytes = Buffer.byteLength(storageKey) + Buffer.byteLength(json);
    // Too big to ever fit: keeping it would evict everything else. Dropping it is a legal cache
    // outcome, and the old value is already gone, so no stale read can follow.
    if (bytes > maxBytes) return;
    entries.set(storageKey, { json, bytes, expiresAtMs });
    totalBytes += bytes;
    while (entries.size > maxEntries || totalBytes > maxBytes) {
      const oldest = entries.keys().next();
      if (oldest.done) break;
      remove(oldest.value);
    }
  }

  function open(): void {
    if (closed) throw closedCacheError('lru');
  }

  return {
    name: 'lru',
    shared: false,

    async get<T>(ns: CacheNamespace, key: string): Promise<T | undefined> {
      open();
      assertNamespace(ns);
      assertKey(key);
      return read<T>(keyOf(ns, key), now());
    },

    async getMany<T>(ns: CacheNamespace, keys: readonly string[]): Promise<Array<T | undefined>> {
      open();
      assertNamespace(ns);
      keys.forEach(assertKey);
      const at = now();
      return keys.map((key) => read<T>(keyOf(ns, key), at));
    },

    async set<T>(ns: CacheNamespace, key: string, value: T, setOptions: HotCacheSetOptions): Promise<void> {
      open();
      assertNamespace(ns);
      assertKey(key);
      const ttlMs = ttlMsOf(setOptions);
      write(keyOf(ns, key), encodeValue(value), now() + ttlMs);
    },

    async setMany(ns: CacheNamespace, batch: Iterable<readonly [string, unknown]>, setOptions: HotCacheSetOptions): Promise<void> {
      open();
      assertNamespace(ns);
      const ttlMs = ttlMsOf(setOptions);
      // Encode everything before writing anything, so a bad value leaves the cache untouched.
      const encoded = [...batch].map(([key, value]) => {
        assertKey(key);
        return [key, encodeValue(value)] as const;
      });
      const expiresAtMs = now() + ttlMs;
      for (const [key, json] of encoded) write(keyOf(ns, key), json, expiresAtMs);
    },

    async delete(ns: CacheNamespace, key: string): Promise<void> {
      open();
      assertNamespace(ns);
      assertKey(key);
      remove(keyOf(ns, key));
    },

    async invalidateUser(userId: string): Promise<void> {
      open();
      assertUserId(userId);
      versions.set(userId, (versions.get(userId) ?? 0) + 1);
    },

    stats: () => stats.snapshot(),
    // In-process: nothing to lose touch with.
    health: () => ({ state: 'up', breaker: 'closed', sinceMs: createdAtMs, trips: 0, shortCircuited: 0, epochChanges: 0 }),

    async close(): Promise<void> {
      closed = true;
      entries.clear();
      versions.clear();
      totalBytes = 0;
    },
  };
}
