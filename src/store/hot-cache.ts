/**
 * The hot tier: a small, fast, lossy cache in front of the warm store (see DESIGN.md, "storage
 * tiers"). Anything in it may vanish at any time, so callers always fall back to the warm store
 * on a miss, and a hot-tier failure is a miss rather than an error. Two drivers implement it:
 * `drivers/hot-lru.ts` (in-process, the default) and `drivers/hot-redis.ts` (shared, chosen
 * with `CTXVM_REDIS`).
 *
 * This module also holds what both drivers share, so they cannot drift apart: the ONE function
 * that turns a namespace and a key into a storage key, JSON encoding, argument checks and the
 * stats counter.
 */
import { CtxvmError, UsageError } from '../errors.js';

/** Who and what a cached value belongs to. Every key lives under exactly one user and kind. */
export interface CacheNamespace {
  /** The owning user; any non-empty string (`:`, `*`, `{` and friends are escaped). */
  userId: string;
  /** What sort of value this is, e.g. `rebuild` or `tasks-today`; any non-empty string. */
  kind: string;
}

/** Options of one write. */
export interface HotCacheSetOptions {
  /** Time to live in milliseconds (> 0). Required: every hot entry must expire on its own. */
  ttlMs: number;
}

/** Counters since the cache was created; every key of a batch counts once. */
export interface HotCacheStats {
  /** Reads that found a value. */
  hits: number;
  /** Reads that found nothing, including reads that failed. */
  misses: number;
  /** Values the backend accepted (it may still evict them at any time). */
  sets: number;
  /** Operations that failed (backend unreachable, timed out, or an unreadable stored value). */
  errors: number;
}

/**
 * How the hot tier is doing, for `/healthz` and `/metrics`. A tier that is `down` costs requests
 * nothing more than a miss: reads come from the warm store, writes are dropped and repaired.
 */
export interface HotCacheHealth {
  /** `up`: in use; `down`: unreachable or stalled, skipped until it answers again. */
  state: 'up' | 'down';
  /** The circuit breaker: `closed` (calls go out), `open` (refused at once), `half-open` (a probe is out). */
  breaker: 'closed' | 'open' | 'half-open';
  /** When the breaker last changed state (Unix ms). */
  sinceMs: number;
  /** Times the breaker opened. */
  trips: number;
  /** Calls refused at once while it was open. */
  shortCircuited: number;
  /** Times the server came back as another state (restarted from disk, failed over): the cache started empty. */
  epochChanges: number;
}

/** What an invalidation covers: one user, or everyone (messages may have been missed). */
export type HotCacheInvalidation = { scope: 'user'; userId: string } | { scope: 'all' };

/** Called for each invalidation this process learns of, its own included. */
export type HotCacheInvalidationListener = (event: HotCacheInvalidation) => void;

/** Where a cache reports trouble. `console` fits; the library never prints on its own. */
export interface HotCacheLogger {
  /** A failure worth a human's attention (reported once per outage, not per operation). */
  error(message: string, details?: Record<string, unknown>): void;
  /** A degradation the cache works around (e.g. invalidation messages unavailable). */
  warn?(message: string, details?: Record<string, unknown>): void;
  /** Good news, e.g. the backend recovered. */
  info?(message: string, details?: Record<string, unknown>): void;
}

/**
 * A per-user, per-kind key/value cache of JSON-serialisable values. Values round-trip through
 * JSON (a `Date` comes back as a string). No method rejects because the backend is down: reads
 * miss and writes are dropped (and repaired later where the driver can). Methods do throw a
 * `UsageError` for bad arguments, and a `CtxvmError` (`E_UNAVAILABLE`) after `close()`.
 */
export interface HotCache {
  /** Driver name for diagnostics, e.g. `lru` or `redis`. */
  readonly name: string;
  /** True when other processes see the same entries and invalidations (redis), false when private (lru). */
  readonly shared: boolean;
  /** The value stored under `key`, or undefined when absent, expired, invalidated or unreachable. */
  get<T>(ns: CacheNamespace, key: string): Promise<T | undefined>;
  /** Values for many keys of one namespace in one round trip, in the order of `keys`. */
  getMany<T>(ns: CacheNamespace, keys: readonly string[]): Promise<Array<T | undefined>>;
  /**
   * Stores `value` (JSON-serialisable) under `key` for `ttlMs` milliseconds. The value is encoded
   * during the call, before it returns: a caller may hand the value on (and let it be changed)
   * without awaiting the write, and a later `get` on the same cache sees the write.
   */
  set<T>(ns: CacheNamespace, key: string, value: T, options: HotCacheSetOptions): Promise<void>;
  /** Stores many `[key, value]` pairs of one namespace in one round trip, all with the same TTL; encoded during the call, as `set`. */
  setMany(ns: CacheNamespace, entries: Iterable<readonly [key: string, value: unknown]>, options: HotCacheSetOptions): Promise<void>;
  /** Removes one entry; removing an absent entry is not an error. */
  delete(ns: CacheNamespace, key: string): Promise<void>;
  /** Makes every entry of one user unreachable, in O(1), for all processes sharing the cache. */
  invalidateUser(userId: string): Promise<void>;
  /** Subscribes to invalidations (for a local cache layered on a shared one); returns the unsubscribe function. */
  onInvalidate?(listener: HotCacheInvalidationListener): () => void;
  /** A snapshot of the counters. */
  stats(): HotCacheStats;
  /** Whether the backend is in use or skipped, and why (drivers of this package always have it). */
  health?(): HotCacheHealth;
  /** Releases connections and memory; later calls reject with `E_UNAVAILABLE`. Idempotent. */
  close(): Promise<void>;
}

// Characters that would let one part of a key pose as a separator (`:`), a Redis Cluster hash
// tag (`{}`), a SCAN/KEYS glob (`*?[]\`), or make keys unreadable in redis-cli (controls,
// space). `%` is escaped too, which makes the encoding injective: no two inputs share an output.
const KEY_PART_SPECIALS = /[%:{}*?[\]\\\u0000-\u0020\u007f]/g;

/** Escapes one key component so it contains no `:`, braces or glob characters (`%XX` encoding). */
export function escapeKeyPart(part: string): string {
  return part.replace(KEY_PART_SPECIALS, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/**
 * The storage key of one entry: `<prefix>:{<user>}:v<version>:<kind>:<key>`, every part escaped.
 * The braces are a Redis Cluster hash tag, so all keys of one user (and their version counter)
 * share a slot and one MGET can fetch them.
 */
export function hotCacheKey(prefix: string, ns: CacheNamespace, version: number, key: string): string {
  return `${prefix}:{${escapeKeyPart(ns.userId)}}:v${version}:${escapeKeyPart(ns.kind)}:${escapeKeyPart(key)}`;
}

/** The key of a user's version counter: `<prefix>:{<user>}:version` (never equal to an entry key). */
export function userVersionKey(prefix: string, userId: string): string {
  return `${prefix}:{${escapeKeyPart(userId)}}:version`;
}

/** Throws a `UsageError` unless `ns` names a user and a kind; the storage layer never works without a user. */
export function assertNamespace(ns: CacheNamespace): void {
  assertUserId(ns?.userId);
  if (typeof ns.kind !== 'string' || ns.kind === '') throw new UsageError('hot cache: namespace.kind must be a non-empty string');
}

/** Throws a `UsageError` unless `userId` is a non-empty string. */
export function assertUserId(userId: unknown): asserts userId is string {
  if (typeof userId !== 'string' || userId === '') throw new UsageError('hot cache: userId must be a non-empty string');
}

/** Throws a `UsageError` unless `key` is a string. */
export function assertKey(key: unknown): asserts key is string {
  if (typeof key !== 'string') throw new UsageError(`hot cache: key must be a string, got ${typeof key}`);
}

/** The TTL in whole milliseconds (rounded up, so a TTL never shrinks); throws unless it is finite and > 0. */
export function ttlMsOf(options: HotCacheSetOptions | undefined): number {
  const ttlMs = options?.ttlMs;
  if (typeof ttlMs !== 'number' || !Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw new UsageError(`hot cache: ttlMs must be a positive number of milliseconds, got ${String(ttlMs)}`);
  }
  return Math.ceil(ttlMs);
}

/** JSON text of a value; throws a `UsageError` for values JSON cannot hold (undefined, functions, BigInt, cycles). */
export function encodeValue(value: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (cause) {
    throw new UsageError('hot cache: value is not JSON-serialisable', { cause });
  }
  if (json === undefined) {
    throw new UsageError(`hot cache: cannot store ${typeof value}; use delete() to remove an entry`);
  }
  return json;
}

/** Parses stored JSON; `{ ok: false }` when it is not JSON (someone else wrote under our prefix). */
export function decodeValue<T>(json: string): { ok: true; value: T } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(json) as T };
  } catch {
    return { ok: false };
  }
}

/** The error every method of a closed cache rejects with. */
export function closedCacheError(name: string): CtxvmError {
  return new CtxvmError('E_UNAVAILABLE', `hot cache (${name}) is closed`, { hint: 'create a new cache; close() is final' });
}

/** Mutable counters behind `stats()`; `snapshot()` copies them so callers cannot change them. */
export interface StatsCounter extends HotCacheStats {
  snapshot(): HotCacheStats;
}

/** Fresh counters at zero. */
export function createStatsCounter(): StatsCounter {
  return {
    hits: 0,
    misses: 0,
    sets: 0,
    errors: 0,
    snapshot() {
      return { hits: this.hits, misses: this.misses, sets: this.sets, errors: this.errors };
    },
  };
}
