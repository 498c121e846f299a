/**
 * The engine of the cached memory store (../cached-memory-store.ts): batched, validated reads of
 * one user's memory from the hot tier, falling back to the warm store.
 *
 * Every cached value is stored as `{ g, d }`: the data and the *generation* it was read under.
 * A value is served only while its generation is still current, so what decides freshness is
 * how generations are obtained — the `consistency` mode:
 *
 * - `generation` (opt-in for a shared cache, i.e. Redis): each user has two generation tokens
 *   in the hot tier itself, `gen:records` (tasks, projects, decisions, facts) and `gen:all`
 *   (anything, turns included — the `version` entry depends on it). A writer replaces the tokens
 *   after its warm write commits; a reader fetches the tokens in the same `getMany` as the
 *   values. A reader that misses labels what it loads with the token it saw *before* reading the
 *   warm store (creating the token first when there is none), so a value loaded before a
 *   concurrent write is labelled with the old token and is never served after the writer has
 *   replaced it: no "stale set after invalidate" race, in one process or many. Appending turns
 *   changes only `gen:all`, so the record lists survive a chat turn. A Redis that comes back with
 *   older data (restarted from an older snapshot, failed over to a lagging replica) brings old
 *   tokens back with the old values, but the Redis driver reads nothing written to another server
 *   state (../../store/drivers/redis-epoch.ts), so tokens and values start over together.
 * - `warm-version` (the default, for every hot tier): the generations are the
 *   warm store's versions, read with every batch (one primary-key lookup): the memory version for
 *   `all`, and for `records` a version that only record writes bump. Exact even when other
 *   processes write the same database, which a private cache cannot hear about; as in the shared
 *   cache, appending turns leaves the record lists valid.
 *
 * Reads issued in the same tick for one user (the rebuilder asks for facts, tasks, projects and
 * decisions at once) share one `getMany` and one `setMany`. The hot tier is never authoritative:
 * any failure of it is a miss (reads) or a skipped write, reported once per outage through the
 * logger; a generation change that could not be written (rejected, or dropped as the hot
 * cache's error counter shows) is retried before the next read of that user, and until it lands
 * that user's reads bypass the cache — so values cached before an outage are not served after it.
 */
import { idRandomBytes } from '../../core/id-random.js';
import type { CacheNamespace, HotCache, HotCacheLogger } from '../../store/hot-cache.js';

/** How cached values are checked for freshness (see the module comment). */
export type ReadCacheConsistency = 'generation' | 'warm-version';

/** What a cached value depends on: record writes only, or any write (turns included). */
export type ReadFamily = 'records' | 'all';

/** Counters of cached reads since the store was created; each read counts once. */
export interface ReadCacheStats {
  /** Reads answered by the hot tier. */
  hits: number;
  /** Reads answered by the warm store (and then cached). */
  misses: number;
  /** Reads that skipped the cache (uncacheable arguments, or an owed generation change). */
  bypassed: number;
}

/** Options of `createReadCache`. */
export interface ReadCacheOptions {
  hot: HotCache;
  consistency: ReadCacheConsistency;
  /** Lifetime of cached values and generation tokens, ms. */
  ttlMs: number;
  /** The warm versions of a user, per family, read together (used by `warm-version`). */
  warmVersions(userId: string): Promise<Record<ReadFamily, number>>;
  /** Where hot-tier failures are reported, once per outage. */
  logger?: HotCacheLogger;
}

/** Batched, validated reads for every user of one store. */
export interface ReadCache {
  /** The cached value of `key`, else `load()` (whose result is then cached, unless `keep` is false). */
  read<T>(userId: string, key: string, family: ReadFamily, load: () => Promise<T>, keep?: boolean): Promise<T>;
  /**
   * Values of many keys, in order; the missing ones come from ONE `loadMissing(keys)` call, which
   * returns what it found (keys it leaves out read as undefined and are not cached). With `keep`
   * false, what is loaded is handed out without being cached.
   */
  readMany<T>(userId: string, keys: readonly string[], family: ReadFamily, loadMissing: (keys: string[]) => Promise<Map<string, T>>, keep?: boolean): Promise<Array<T | undefined>>;
  /** Retires cached values after a warm write of `userId` committed (or may have). Never rejects. */
  wrote(userId: string, family: ReadFamily): Promise<void>;
  /** Reads straight from the warm store (arguments that have no cache key); counted as bypassed. */
  bypass<T>(load: () => Promise<T>): Promise<T>;
  stats(): ReadCacheStats;
}

/** Hot-cache kind under which every value of the cached store lives. */
export const READ_CACHE_KIND = 'memory';
const GEN_KEY: Record<ReadFamily, string> = { records: 'gen:records', all: 'gen:all' };
/** Most users remembered with an owed generation change; past it, the hot cache's own repair (Redis: removal on reconnect) is relied on. */
const MAX_OWED_USERS = 100_000;

interface Entry {
  /** Generation the value was read under. */
  g: string;
  /** The value; null stands for undefined (JSON has no undefined). */
  d: unknown;
}

interface Request {
  key: string;
  family: ReadFamily;
  load: () => Promise<unknown>;
  /** False when "not found" may change without a write of this family (a turn stored later). */
  cacheUndefined: boolean;
  /** False: hand out what is loaded without caching it. */
  keep: boolean;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

const newToken = () => idRandomBytes(9).toString('base64url');
const isEntry = (v: unknown): v is Entry => typeof v === 'object' && v !== null && typeof (v as Entry).g === 'string' && 'd' in v;
const fromEntry = (d: unknown) => (d === null ? undefined : d);

/** Creates the read cache; it holds no timers and no per-user state beyond pending batches. */
export function createReadCache(options: ReadCacheOptions): ReadCache {
  const { hot, consistency, ttlMs } = options;
  const ttl = { ttlMs };
  const pending = new Map<string, Request[]>();
  const owed = new Map<string, ReadFamily>();
  const counters: ReadCacheStats = { hits: 0, misses: 0, bypassed: 0 };
  let failing = false;

  const ns = (userId: string): CacheNamespace => ({ userId, kind: READ_CACHE_KIND });

  /** Runs one hot-tier call; a failure is reported once per outage and becomes `fallback`. */
  async function guarded<T>(during: string, call: () => Promise<T>, fallback: T): Promise<{ ok: boolean; value: T }> {
    try {
      const value = await call();
      if (failing) {
        failing = false;
        options.logger?.info?.(`ctxvm memory cache: the hot tier (${hot.name}) answers again`);
      }
      return { ok: true, value };
    } catch (error) {
      if (!failing) {
        failing = true;
        options.logger?.error(`ctxvm memory cache: the hot tier (${hot.name}) failed during ${during}; reading from the warm store`, { error });
      }
      return { ok: false, value: fallback };
    }
  }

  /** Writes new generation tokens; remembers the user as owed when that fails. */
  async function retire(userId: string, family: ReadFamily): Promise<boolean> {
    if (consistency === 'warm-version') return true; // the warm version moved with the write
    const token = newToken();
    const keys = family === 'records' ? [GEN_KEY.records, GEN_KEY.all] : [GEN_KEY.all];
    // A hot cache drops a write it cannot deliver without rejecting (the Redis driver repairs it
    // later by removal); its error counter tells. Any error meanwhile counts as this one: owing a
    // retirement that did land only costs a retry.
    const errorsBefore = hot.stats().errors;
    const { ok } = await guarded('invalidation', () => hot.setMany(ns(userId), keys.map((k) => [k, token] as const), ttl), undefined);
    if (ok && hot.stats().errors === errorsBefore) {
      if (owed.get(userId) === family || family === 'records') owed.delete(userId);
      return true;
    }
    if (owed.size < MAX_OWED_USERS || owed.has(userId)) owed.set(userId, owed.get(userId) === 'records' ? 'records' : family);
    return false;
  }

  /** Loads the missed values from the warm store, caches those with a generation, then hands them out. */
  async function loadAll(userId: string, requests: Request[], gens: Record<ReadFamily, string | undefined>): Promise<void> {
    const outcomes = await Promise.allSettled(requests.map((r) => r.load()));
    const entries: Array<readonly [string, Entry]> = [];
    outcomes.forEach((o, i) => {
      const r = requests[i]!;
      const g = gens[r.family];
      if (o.status !== 'fulfilled' || g === undefined || !r.keep || (o.value === undefined && !r.cacheUndefined)) return;
      entries.push([r.key, { g, d: o.value === undefined ? null : o.value }]);
    });
    // Encoded (the hot cache encodes in the call, before its first await) before anyone gets the
    // values, so a caller mutating its result cannot change what the cache holds. Not awaited: a
    // miss does not also wait for the hot tier's write. (`guarded` never rejects; a value
    // written late is still labelled with the generation it was read under.)
    if (entries.length > 0) void guarded('setMany', () => hot.setMany(ns(userId), entries, ttl), undefined);
    settle(requests, outcomes);
  }

  async function flush(userId: string, batch: Request[]): Promise<void> {
    const family = owed.get(userId);
    if (family !== undefined && !(await retire(userId, family))) {
      counters.bypassed += batch.length;
      return settle(batch, await Promise.allSettled(batch.map((r) => r.load())));
    }
    const keys = batch.map((r) => r.key);
    let gens: Record<ReadFamily, string | undefined>;
    let values: unknown[];
    if (consistency === 'warm-version') {
      const [versions, got] = await Promise.all([options.warmVersions(userId), guarded('getMany', () => hot.getMany(ns(userId), keys), keys.map(() => undefined))]);
      gens = { records: `r${versions.records}`, all: `v${versions.all}` };
      values = got.value;
    } else {
      const got = await guarded('getMany', () => hot.getMany(ns(userId), [GEN_KEY.records, GEN_KEY.all, ...keys]), [undefined, undefined, ...keys.map(() => undefined)]);
      const [records, all, ...rest] = got.value;
      gens = { records: typeof records === 'string' ? records : undefined, all: typeof all === 'string' ? all : undefined };
      values = rest;
    }
    const misses: Request[] = [];
    batch.forEach((r, i) => {
      const v = values[i];
      const g = gens[r.family];
      if (g !== undefined && isEntry(v) && v.g === g) {
        counters.hits++;
        r.resolve(fromEntry(v.d));
      } else {
        counters.misses++;
        misses.push(r);
      }
    });
    if (misses.length === 0) return;
    if (consistency === 'generation') {
      // A token must exist before the warm read, or a write landing meanwhile could not retire
      // what this read is about to cache.
      const missing = (['records', 'all'] as const).filter((f) => gens[f] === undefined && misses.some((r) => r.family === f));
      if (missing.length > 0) {
        const token = newToken();
        const { ok } = await guarded('setMany', () => hot.setMany(ns(userId), missing.map((f) => [GEN_KEY[f], token] as const), ttl), undefined);
        for (const f of missing) gens[f] = ok ? token : undefined;
      }
    }
    await loadAll(userId, misses, gens);
  }

  function settle(batch: Request[], outcomes: PromiseSettledResult<unknown>[]): void {
    outcomes.forEach((o, i) => (o.status === 'fulfilled' ? batch[i]!.resolve(o.value) : batch[i]!.reject(o.reason)));
  }

  function enqueue<T>(userId: string, key: string, family: ReadFamily, load: () => Promise<T>, cacheUndefined: boolean, keep: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let batch = pending.get(userId);
      if (!batch) {
        const fresh: Request[] = [];
        batch = fresh;
        pending.set(userId, fresh);
        queueMicrotask(() => {
          pending.delete(userId);
          flush(userId, fresh).catch((error: unknown) => {
            // Only a failing warm version read gets here: every request fails with it.
            for (const r of fresh) r.reject(error);
          });
        });
      }
      batch.push({ key, family, load, cacheUndefined, keep, resolve: resolve as (v: unknown) => void, reject });
    });
  }

  return {
    read<T>(userId: string, key: string, family: ReadFamily, load: () => Promise<T>, keep = true): Promise<T> {
      return enqueue(userId, key, family, load, true, keep);
    },

    readMany<T>(userId: string, keys: readonly string[], family: ReadFamily, loadMissing: (keys: string[]) => Promise<Map<string, T>>, keep = true): Promise<Array<T | undefined>> {
      // The misses of this call reach the warm store as ONE loadMissing call: the flush starts
      // every load of a batch in one synchronous loop, before the microtask below runs.
      let wanted: string[] | undefined;
      let loaded: Promise<Map<string, T>> | undefined;
      const loadOne = (key: string): Promise<T | undefined> => {
        if (!wanted) {
          const keysToLoad: string[] = [];
          wanted = keysToLoad;
          loaded = Promise.resolve().then(() => loadMissing(keysToLoad));
        }
        wanted.push(key);
        return loaded!.then((found) => found.get(key));
      };
      return Promise.all(keys.map((key) => enqueue(userId, key, family, () => loadOne(key), false, keep)));
    },

    async wrote(userId: string, family: ReadFamily): Promise<void> {
      await retire(userId, family);
    },

    bypass<T>(load: () => Promise<T>): Promise<T> {
      counters.bypassed++;
      return load();
    },

    stats: () => ({ ...counters }),
  };
}
