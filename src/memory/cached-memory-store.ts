/**
 * A `MemoryStore` with a hot-tier read cache in front of the warm store (DESIGN.md storage tiers:
 * write warm first, then hot; read hot, then warm; losing the hot tier loses nothing). It caches
 * what the manager reads on every turn — the task lists, facts and preferences (the time zone
 * among them), projects, decisions and the memory version that keys cached rebuilds — and what a
 * rebuild reads (full-text hits, turns by id and their neighbourhoods), per user under the
 * hot-cache kind `memory`, with a TTL. A handle opened with `cacheVolatileReads: false` (the
 * rebuild answering a message) serves hits and neighbourhoods from the cache but stores none:
 * any turn append retires them, and the reply is appended right after. Everything else (recent
 * turns, history, access statistics, single records) goes straight to the warm store.
 *
 * Writes go to the warm store first; once they return (or fail, since a failure after COMMIT
 * cannot be told apart) the user's cached values are retired. Appending turns retires only the
 * version (and what depends on turns), so the record lists survive a chat turn. How staleness is
 * ruled out, across processes too, is explained in ./cache/read-cache.ts.
 *
 * Every method of `UserMemoryStore` is listed here on purpose, none forwarded wholesale: a write
 * method added to the interface must retire cached values, so it has to be wrapped, not inherited.
 */
import type { HotCache, HotCacheLogger } from '../store/hot-cache.js';
import { createReadCache, type ReadCacheConsistency, type ReadCacheStats, type ReadFamily } from './cache/read-cache.js';
import type { ListTasksOptions, MemoryStore, SearchOptions, UserMemoryStore, UserScopeOptions } from './memory-store.js';

export type { ReadCacheConsistency, ReadCacheStats } from './cache/read-cache.js';

/** Options of `createCachedMemoryStore`. */
export interface CachedMemoryStoreOptions {
  /** The warm store (authoritative). */
  store: MemoryStore;
  /** The hot tier (in-process LRU or shared Redis). */
  hot: HotCache;
  /** Lifetime of cached values, ms (default 300 000 = 5 minutes). */
  ttlMs?: number;
  /**
   * How cached values are checked (default `warm-version`): `warm-version` checks the warm
   * store's version on every batch (one primary-key lookup), so a value is never served after a
   * write the warm store has, even when the writer died between its commit and telling the hot
   * tier (the fault suite kills writers there); `generation` trusts generation tokens kept in the
   * shared hot tier and costs no warm query on a hit, for deployments that accept that window.
   */
  consistency?: ReadCacheConsistency;
  /** Where hot-tier failures the cache itself sees are reported, once per outage (default: nowhere). */
  logger?: HotCacheLogger;
}

/** A memory store whose per-turn reads come from the hot tier when they can. */
export interface CachedMemoryStore extends MemoryStore {
  /** The warm store underneath. */
  readonly warm: MemoryStore;
  readonly hot: HotCache;
  readonly consistency: ReadCacheConsistency;
  /** Counters of cached reads (hits, misses, bypassed). */
  readStats(): ReadCacheStats;
  /**
   * Calls `listener` with the user id after each write through this store (once the cached
   * values it may have changed are retired, also when the write failed); returns the
   * unsubscribe function. Refresh-ahead of cached rebuilds listens here.
   */
  onWrite(listener: (userId: string) => void): () => void;
}

/** Default lifetime of cached values, ms. */
export const DEFAULT_READ_CACHE_TTL_MS = 5 * 60_000;

const MARKER = Symbol.for('ctxvm.cachedMemoryStore');

/** True for a store made by `createCachedMemoryStore` (so a caller does not wrap it twice). */
export function isCachedMemoryStore(store: MemoryStore): store is CachedMemoryStore {
  return (store as unknown as Record<symbol, unknown>)[MARKER] === true;
}

/** Wraps `options.store` with a read cache in `options.hot`; `close()` closes the warm store, not the cache. */
export function createCachedMemoryStore(options: CachedMemoryStoreOptions): CachedMemoryStore {
  const { store: warm, hot } = options;
  const consistency = options.consistency ?? 'warm-version';
  const cache = createReadCache({
    hot,
    consistency,
    ttlMs: options.ttlMs ?? DEFAULT_READ_CACHE_TTL_MS,
    async warmVersions(userId) {
      const u = warm.forUser(userId);
      if (u.versions) return u.versions();
      const version = await u.version();
      return { all: version, records: version };
    },
    ...(options.logger ? { logger: options.logger } : {}),
  });
  const writeListeners = new Set<(userId: string) => void>();
  const wroteFor = async (userId: string, family: ReadFamily): Promise<void> => {
    await cache.wrote(userId, family);
    for (const listener of writeListeners) listener(userId);
  };

  function forUser(userId: string, scope?: UserScopeOptions): UserMemoryStore {
    const inner = warm.forUser(userId, scope); // checks the user id
    const keepVolatile = scope?.cacheVolatileReads !== false;
    const read = <T>(key: string | undefined, family: ReadFamily, load: () => Promise<T>, keep = true): Promise<T> =>
      key === undefined ? cache.bypass(load) : cache.read(userId, key, family, load, keep);
    /** Values of many ids, one cache entry each (`<prefix><id>`); the misses come from one `load` call. */
    async function perId<T>(ids: readonly string[], prefix: string, family: ReadFamily, load: (ids: string[]) => Promise<Map<string, T>>, keep = true): Promise<Map<string, T>> {
      const unique = [...new Set(ids)];
      const values = await cache.readMany(
        userId,
        unique.map((id) => prefix + id),
        family,
        async (keys) => {
          const found = await load(keys.map((k) => k.slice(prefix.length)));
          return new Map([...found].map(([id, v]) => [prefix + id, v] as const));
        },
        keep,
      );
      const out = new Map<string, T>();
      unique.forEach((id, i) => values[i] !== undefined && out.set(id, values[i]!));
      return out;
    }
    /** Runs a warm write, then retires the cached values it may have changed. */
    async function write<T>(family: ReadFamily, run: () => Promise<T>, changed: (result: T) => boolean = () => true): Promise<T> {
      let result: T;
      try {
        result = await run();
      } catch (error) {
        await wroteFor(userId, family);
        throw error;
      }
      if (changed(result)) await wroteFor(userId, family);
      return result;
    }

    return {
      userId: inner.userId,
      version: () => (consistency === 'warm-version' ? inner.version() : read('version', 'all', () => inner.version())),
      ...(inner.versions ? { versions: () => inner.versions!() } : {}),

      addTurns: (turns) => write('all', () => inner.addTurns(turns), (r) => r.added > 0),
      // A stored turn never changes, so its cache entry outlives turn appends ('records').
      getTurns: (ids) => (isIdList(ids) ? perId(ids, 'turn:', 'records', (want) => inner.getTurns(want).then((ts) => new Map(ts.map((t) => [t.id, t])))).then((found) => ids.flatMap((id) => found.get(id) ?? [])) : cache.bypass(() => inner.getTurns(ids))),
      recentTurns: (limit) => inner.recentTurns(limit),
      turnNeighbours: (id, before, after) => inner.turnNeighbours(id, before, after),
      // Optional in the interface: offered only when the warm store has it (callers fall back).
      ...(inner.turnNeighbourhoods
        ? {
            turnNeighbourhoods: (ids: readonly string[], before: number, after: number) => {
              const load = (want: string[]) => inner.turnNeighbourhoods!(want, before, after);
              return isIdList(ids) && Number.isFinite(before) && Number.isFinite(after) ? perId(ids, `around:${before}:${after}:`, 'all', load, keepVolatile) : cache.bypass(() => load([...ids]));
            },
          }
        : {}),
      countTurns: () => inner.countTurns(),

      createTask: (task, turnId) => write('records', () => inner.createTask(task, turnId)),
      updateTask: (id, patch, turnId) => write('records', () => inner.updateTask(id, patch, turnId), (r) => r !== undefined),
      deleteTask: (id, turnId) => write('records', () => inner.deleteTask(id, turnId), (r) => r),
      getTask: (id) => inner.getTask(id),
      listTasks: (opts) => read(tasksKey(opts), 'records', () => inner.listTasks(opts)),
      ...(inner.openTaskTitles ? { openTaskTitles: (limit: number) => read(isCount(limit) ? `openTaskTitles:${limit}` : undefined, 'records', () => inner.openTaskTitles!(limit)) } : {}),

      ensureProject: (name, turnId) => write('records', () => inner.ensureProject(name, turnId)),
      getProject: (id) => inner.getProject(id),
      listProjects: () => read('projects', 'records', () => inner.listProjects()),

      addDecision: (decision, turnId) => write('records', () => inner.addDecision(decision, turnId)),
      listDecisions: (opts) => read(decisionsKey(opts), 'records', () => inner.listDecisions(opts)),

      setFact: (fact, turnId) => write('records', () => inner.setFact(fact, turnId)),
      listFacts: (opts) => read(factsKey(opts), 'records', () => inner.listFacts(opts)),
      getFactByKey: (key) => read(typeof key === 'string' && key !== '' ? `fact:${key}` : undefined, 'records', () => inner.getFactByKey(key)),

      // Scores use corpus statistics of all users: a cached search answers as of this user's last
      // write, as a cached rebuild does.
      search: (query, opts) => read(searchKey(query, opts), 'all', () => inner.search(query, opts), keepVolatile),
      ...(inner.searchMany
        ? {
            // One entry per search, shared with `search`; the missing ones in one warm call.
            searchMany: async (query: string, searches: readonly SearchOptions[]) => {
              const keys = searches.map((o) => searchKey(query, o));
              if (!keys.every((k): k is string => k !== undefined)) return cache.bypass(() => inner.searchMany!(query, searches));
              const unique = [...new Set(keys)];
              const values = await cache.readMany(
                userId,
                unique,
                'all',
                async (missing) => {
                  const hits = await inner.searchMany!(query, missing.map((k) => searches[keys.indexOf(k)]!));
                  return new Map(missing.map((k, i) => [k, hits[i] ?? []] as const));
                },
                keepVolatile,
              );
              return keys.map((k) => values[unique.indexOf(k)] ?? []);
            },
          }
        : {}),
      // The pool ranks records by their last use, which changes with every rebuild: not cached.
      ...(inner.recordPool ? { recordPool: inner.recordPool.bind(inner) } : {}),
      history: (opts) => inner.history(opts),
      // Access statistics are not memory content: they change on every rebuild, bump no version
      // and are not cached.
      touch: (kind, ids, atMs) => inner.touch(kind, ids, atMs),
      ...(inner.touchMany ? { touchMany: inner.touchMany.bind(inner) } : {}),
      accessStats: (kind, ids) => inner.accessStats(kind, ids),
      // The view inside is the warm store's own (uncached: it must see its own writes); the
      // user's cached values are retired once the one transaction has committed (or failed).
      ...(inner.atomically ? { atomically: <T>(fn: (store: UserMemoryStore) => Promise<T>) => write('records', () => inner.atomically!(fn)) } : {}),
      // Claims of message ids are not memory: never cached, they retire nothing.
      claimMessage: (id, owner, atMs, canTakeOver) => inner.claimMessage(id, owner, atMs, canTakeOver),
      releaseMessage: (id, owner) => inner.releaseMessage(id, owner),
    };
  }

  const cached: CachedMemoryStore & { [MARKER]: true } = {
    [MARKER]: true,
    driver: warm.driver,
    warm,
    hot,
    consistency,
    forUser,
    close: () => warm.close(),
    readStats: () => cache.stats(),
    onWrite(listener) {
      writeListeners.add(listener);
      return () => void writeListeners.delete(listener);
    },
    ...(warm.dueTasks ? { dueTasks: warm.dueTasks.bind(warm) } : {}),
    ...(warm.listUsers ? { listUsers: warm.listUsers.bind(warm) } : {}),
  };
  return cached;
}

// Cache keys exist only for arguments whose meaning is unambiguous; anything else (a NaN limit,
// a non-array status) is read from the warm store, which reports it.
const isCount = (n: unknown) => n === undefined || (typeof n === 'number' && Number.isFinite(n));
const isOptText = (s: unknown) => s === undefined || typeof s === 'string';
const plain = (o: unknown) => o === undefined || (typeof o === 'object' && o !== null && !Array.isArray(o));

function tasksKey(o: ListTasksOptions | undefined): string | undefined {
  if (!plain(o) || !isCount(o?.dueBeforeMs) || !isCount(o?.limit)) return undefined;
  const status = o?.status;
  if (status !== undefined && !(Array.isArray(status) && status.every((s) => typeof s === 'string'))) return undefined;
  return `tasks:${JSON.stringify([status ? [...new Set(status)].sort() : null, o?.dueBeforeMs ?? null, o?.limit ?? null])}`;
}

const isIdList = (ids: unknown): ids is readonly string[] => Array.isArray(ids) && ids.every((id) => typeof id === 'string');

function searchKey(query: unknown, o: SearchOptions | undefined): string | undefined {
  if (typeof query !== 'string' || !plain(o) || !isCount(o?.limit)) return undefined;
  const kinds = o?.kinds;
  if (kinds !== undefined && !isIdList(kinds)) return undefined;
  return `search:${JSON.stringify([query, kinds ? [...new Set(kinds)].sort() : null, o?.limit ?? null])}`;
}

function decisionsKey(o: { projectId?: string; limit?: number } | undefined): string | undefined {
  if (!plain(o) || !isOptText(o?.projectId) || !isCount(o?.limit)) return undefined;
  return `decisions:${JSON.stringify([o?.projectId ?? null, o?.limit ?? null])}`;
}

function factsKey(o: { kind?: 'fact' | 'preference' } | undefined): string | undefined {
  if (!plain(o) || !isOptText(o?.kind)) return undefined;
  return `facts:${JSON.stringify(o?.kind ?? null)}`;
}
