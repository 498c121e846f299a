/**
 * Shared hot cache on Redis (node-redis), chosen with `CTXVM_REDIS`. The `redis` package is
 * imported inside the factory, so it only loads when this driver is picked.
 *
 * Invalidation. Every entry key embeds its user's version number, kept in Redis under
 * `<prefix>:{<user>}:version`. `invalidateUser` INCRs it (O(1), atomic across processes) and
 * publishes the new number on `<prefix>:invalidations`; the old entries become unreachable and
 * expire by their own TTL. Reading the version on every call would double the round trips, so
 * each process remembers versions for `versionCacheMs` and raises them as soon as a pub/sub
 * message arrives.
 * Staleness bound: once `invalidateUser` has resolved, the calling process never reads older
 * entries; another process may for at most `versionCacheMs` (default 1 s), and in practice only
 * for the pub/sub delivery latency: the bound is reached only when messages are lost (its
 * subscriber reconnecting), and a reconnect forgets all remembered versions.
 * Version counters have no TTL (one small key per user who was ever invalidated). Under an
 * `allkeys-*` eviction policy Redis could evict one and resurrect that user's older entries
 * until their TTL ends; prefer `volatile-lru` (every entry has a TTL) or `noeviction`.
 *
 * Fencing (./redis-epoch.ts). Redis may come back with older data than it acknowledged (restarted
 * from an older RDB or AOF, failed over to a lagging replica), old version counters included.
 * Every value is stored as `<epoch>|<json>`, the epoch naming the server state it was written
 * to (its run id and replication id); a value labelled with another epoch reads as a miss. After
 * a restart from disk or a failover the cache thus starts empty, whatever the disk held.
 *
 * Faults (DESIGN.md: a hot-tier failure is logged and never fatal). Commands never queue while
 * offline and time out after `commandTimeoutMs`; a failed read is a miss, a failed write resolves.
 * A Redis that stops answering (paused, overloaded) opens a circuit breaker
 * (./circuit-breaker.ts): calls are refused at once — misses, dropped writes — until a probe every
 * `probeEveryMs` gets an answer, so a stall adds at most one `commandTimeoutMs` to a request.
 * The outage is reported once through `logger.error`, recovery through `logger.info`, and the
 * next outage is reported again. A failed write or invalidation may leave an older value that
 * other processes keep reading, so it is repaired when Redis answers again — always by removal
 * (DEL the key or bump the user's version), never by replaying the write, which could clobber
 * a newer value. Reconnection uses capped exponential backoff with jitter, forever.
 */
import { randomUUID } from 'node:crypto';
import {
  type CacheNamespace,
  type HotCache,
  type HotCacheInvalidationListener,
  type HotCacheInvalidation,
  type HotCacheLogger,
  type HotCacheSetOptions,
  assertKey,
  assertNamespace,
  assertUserId,
  closedCacheError,
  createStatsCounter,
  decodeValue,
  encodeValue,
  hotCacheKey,
  ttlMsOf,
  userVersionKey,
} from '../hot-cache.js';
import { CtxvmError, UsageError } from '../../errors.js';
import { createCircuitBreaker } from './circuit-breaker.js';
import { createEpochTracker, type Epoch } from './redis-epoch.js';

/** Options of `createRedisHotCache`. */
export interface RedisHotCacheOptions {
  /** `redis://` or `rediss://` URL, credentials and database number included. */
  url: string;
  /** First part of every key and of the pub/sub channel, so apps and test runs can share one Redis (default `ctxvm`). */
  keyPrefix?: string;
  /** Where outages and recoveries are reported, once each (default: nowhere). */
  logger?: HotCacheLogger;
  /** Abandon a connection attempt after this many ms, then retry with backoff (default 2000). */
  connectTimeoutMs?: number;
  /**
   * A command with no reply after this many ms fails, the cache answers as a miss, and the circuit
   * breaker opens: the most a stalled Redis adds to a request (default 150).
   */
  commandTimeoutMs?: number;
  /** While the breaker is open, how often a PING checks whether Redis answers again, in ms (default 250). */
  probeEveryMs?: number;
  /** How often the server's identity (the epoch) is re-checked on a live connection, in ms (default 1000). */
  epochRecheckMs?: number;
  /** Longest pause between reconnection attempts, in ms (default 5000). */
  maxReconnectDelayMs?: number;
  /** How long a user's version number is trusted without re-reading it, in ms: the staleness bound of invalidation (default 1000; 0 = read it every call). */
  versionCacheMs?: number;
}

type RedisModule = typeof import('redis');
type RedisClient = ReturnType<RedisModule['createClient']>;

const DEFAULTS = { keyPrefix: 'ctxvm', connectTimeoutMs: 2000, commandTimeoutMs: 150, maxReconnectDelayMs: 5000, versionCacheMs: 1000, probeEveryMs: 250, epochRecheckMs: 1000 };
// Bounds on per-process bookkeeping, so a long outage or a huge user base cannot grow memory
// without limit. Past MAX_REPAIR_KEYS_PER_USER the repair widens to the whole user (cheaper).
const MAX_REMEMBERED_VERSIONS = 10_000;
const MAX_REPAIR_USERS = 10_000;
const MAX_REPAIR_KEYS_PER_USER = 100;
const MAX_QUEUED_COMMANDS = 100_000;
const SILENT_LOGGER: HotCacheLogger = { error() {} };

function checkOptions(options: RedisHotCacheOptions) {
  let parsed: URL;
  try {
    parsed = new URL(options.url);
  } catch (cause) {
    throw new UsageError('createRedisHotCache: url is not a valid URL', { cause, hint: 'use redis://host:6379' });
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new UsageError(`createRedisHotCache: url must start with redis:// or rediss://, got ${parsed.protocol}//`);
  }
  const merged = { ...DEFAULTS, ...definedOnly(options) };
  if (merged.keyPrefix === '' || /[\s{}]/.test(merged.keyPrefix)) {
    throw new UsageError('createRedisHotCache: keyPrefix must be non-empty, without spaces or braces');
  }
  for (const name of ['connectTimeoutMs', 'commandTimeoutMs', 'maxReconnectDelayMs', 'versionCacheMs', 'probeEveryMs', 'epochRecheckMs'] as const) {
    const value = merged[name];
    if (!Number.isFinite(value) || value < (name === 'versionCacheMs' ? 0 : 1)) {
      throw new UsageError(`createRedisHotCache: ${name} must be a ${name === 'versionCacheMs' ? 'non-negative' : 'positive'} number of ms, got ${value}`);
    }
  }
  // Only host and port reach the logs: the URL may carry a password.
  return { ...merged, where: `${parsed.hostname}:${parsed.port || 6379}` };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

async function loadRedis(): Promise<RedisModule> {
  try {
    return await import('redis');
  } catch (cause) {
    throw new CtxvmError('E_UNSUPPORTED', 'the redis hot cache needs the "redis" package', { cause, hint: 'npm install redis, or unset CTXVM_REDIS' });
  }
}

/**
 * `work`, or a rejection once `ms` have passed without it settling (a late reply is then ignored).
 * The deadline counts time the process could hear the reply. After a long synchronous stretch
 * (loading a dictionary, a big parse) the command may not even be on the wire yet — it is written
 * after an await — and the timer fires late: a timer late by more than half the deadline starts
 * it once more from then. A timer on time rejects in the event loop's next check phase, so a
 * reply that came in time, due together with the timer, gets its poll phase first (timers run
 * before the socket is read). A stalled Redis is thus reported after `ms`, or at most ~2 x `ms`
 * when the process itself was busy.
 */
function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    const arm = (again: boolean) => {
      const dueMs = performance.now() + ms;
      timer = setTimeout(() => {
        if (again && performance.now() - dueMs > ms / 2) return arm(false);
        setImmediate(() => reject(new CtxvmError('E_UNAVAILABLE', `redis did not answer within ${ms} ms`, { details: { timedOutMs: ms } })));
      }, ms);
    };
    arm(true);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/** True for the rejection of `withDeadline`: Redis stalled (rather than answered with an error). */
const isDeadline = (error: unknown) => CtxvmError.is(error) && typeof error.details?.timedOutMs === 'number';

/** `<epoch>|<json>`: a value labelled with the server state it was written to. */
const labelled = (epoch: Epoch, json: string) => `${epoch.token}|${json}`;

const messageOf = (error: unknown) => (error instanceof Error ? error.message || error.name : String(error));

/** A hot cache on Redis, shared by every process using the same URL and keyPrefix. Resolves even when Redis is down. */
export async function createRedisHotCache(options: RedisHotCacheOptions): Promise<HotCache> {
  const config = checkOptions(options);
  const { keyPrefix: prefix, versionCacheMs } = config;
  const logger = options.logger ?? SILENT_LOGGER;
  const { createClient } = await loadRedis();
  const channel = `${prefix}:invalidations`;
  const origin = randomUUID();
  const stats = createStatsCounter();
  const listeners = new Set<HotCacheInvalidationListener>();
  let closed = false;

  const client: RedisClient = createClient({
    url: options.url,
    // Queued commands would wait out the whole outage; failing fast turns them into misses.
    disableOfflineQueue: true,
    // node-redis's timeout only covers the wait to be written (it is dropped once a command is
    // on the wire), so `answered` below adds the deadline that covers a Redis that stops replying.
    commandOptions: { timeout: config.commandTimeoutMs },
    // Replies owed by a stalled Redis pile up until the socket closes; past this, fail at once.
    commandsQueueMaxLength: MAX_QUEUED_COMMANDS,
    socket: {
      connectTimeout: config.connectTimeoutMs,
      // Exponential backoff with jitter, so a fleet of processes does not reconnect in lockstep.
      reconnectStrategy: (retries: number) => Math.min(50 * 2 ** Math.min(retries, 16), config.maxReconnectDelayMs) + Math.floor(Math.random() * 100),
    },
  });
  // A connection in subscriber mode can run nothing else, hence a second one. Subscriptions
  // bypass the offline queue and node-redis renews them after every reconnect.
  const subscriber: RedisClient = client.duplicate();

  // --- outage reporting: one error per outage, one info per recovery ---------------------
  let healthy = true;
  function reportFailure(error: unknown, during: string): void {
    if (closed || !healthy) return;
    healthy = false;
    logger.error(`ctxvm hot cache: redis at ${config.where} is unavailable (${messageOf(error)}); reads miss until it is back`, { during, error });
  }
  function reportSuccess(): void {
    if (healthy) return;
    healthy = true;
    logger.info?.(`ctxvm hot cache: redis at ${config.where} is back`);
    // Counters may have changed (or been lost in a restart) while we could not hear about it.
    versions.clear();
    void runRepairs();
  }
  // Registered before the epoch tracker's, so a lost connection opens the breaker first.
  client.on('error', (error: unknown) => {
    reportFailure(error, 'connection');
    breaker.open(error);
  });
  client.on('ready', () => {
    breaker.close();
    reportSuccess();
    // Learnt now rather than by the next call, so a restart or failover is noticed (and layered
    // caches told) even by a process that is idle.
    epochs.current().catch(() => {});
  });

  const breaker = createCircuitBreaker({
    what: `redis at ${config.where}`,
    probeEveryMs: config.probeEveryMs,
    probe: () => withDeadline(client.ping(), config.commandTimeoutMs),
    // An error reply (READONLY, an ACL) comes from a Redis that answers: no reason to stop asking.
    trips: (error) => isDeadline(error) || !client.isReady,
    onOpen: (error) => reportFailure(error, 'stalled'),
    onClose: () => reportSuccess(),
  });

  const epochs = createEpochTracker(client, { recheckMs: config.epochRecheckMs });
  epochs.onChange(() => {
    // Another server state: what was remembered of the old one, and heard through it, is void.
    versions.clear();
    versionReads.clear();
    logger.warn?.(`ctxvm hot cache: redis at ${config.where} restarted from disk or failed over; entries from before are ignored`);
    notify({ scope: 'all' });
  });

  // --- user versions: remembered briefly, raised by pub/sub messages ---------------------
  // Tagged with the epoch they were read under: a counter restored from disk may be LOWER than
  // one remembered from before, so versions only grow within one epoch.
  const versions = new Map<string, { version: number; epoch: string; expiresAtMs: number }>();
  const versionReads = new Map<string, Promise<number>>();
  const readKey = (userId: string, epoch: string) => `${epoch} ${userId}`;

  function rememberVersion(userId: string, version: number, epoch: string): void {
    if (versionCacheMs === 0) return;
    const now = Date.now();
    const remembered = versions.get(userId);
    const known = remembered?.epoch === epoch ? remembered : undefined;
    if (!known && versions.size >= MAX_REMEMBERED_VERSIONS) {
      for (const [id, entry] of versions) if (entry.expiresAtMs <= now) versions.delete(id);
      if (versions.size >= MAX_REMEMBERED_VERSIONS) versions.clear();
    }
    // Versions only grow: a GET sent before an INCR may be answered after its pub/sub message.
    const newest = known && known.expiresAtMs > now ? Math.max(known.version, version) : version;
    versions.set(userId, { version: newest, epoch, expiresAtMs: now + versionCacheMs });
  }

  /** Records a version learnt from INCR or pub/sub, newer than any read still in flight. */
  function learnVersion(userId: string, version: number, epoch: string): void {
    // A GET in flight may have been answered before this version existed: later calls must
    // not join it (that matters most with versionCacheMs = 0, where nothing is remembered).
    versionReads.delete(readKey(userId, epoch));
    rememberVersion(userId, version, epoch);
  }

  function versionOf(userId: string, epoch: Epoch): Promise<number> {
    const known = versions.get(userId);
    if (known && known.epoch === epoch.token && known.expiresAtMs > Date.now()) return Promise.resolve(known.version);
    const readId = readKey(userId, epoch.token);
    let read = versionReads.get(readId);
    if (!read) {
      // Concurrent calls for one user share one GET.
      read = client
        .get(userVersionKey(prefix, userId))
        .then((raw) => {
          const version = raw === null ? 0 : Number(raw);
          if (!Number.isSafeInteger(version) || version < 0) throw new Error(`corrupt version counter for user ${JSON.stringify(userId)}`);
          rememberVersion(userId, version, epoch.token);
          return version;
        })
        .finally(() => {
          if (versionReads.get(readId) === read) versionReads.delete(readId);
        });
      versionReads.set(readId, read);
    }
    return read;
  }

  const keyOf = async (ns: CacheNamespace, key: string, epoch: Epoch) => hotCacheKey(prefix, ns, await versionOf(ns.userId, epoch), key);

  /** `work` under the current epoch; its outcome counts only if the epoch still holds once it is answered. */
  async function fenced<T>(work: (epoch: Epoch) => Promise<T>): Promise<T> {
    const epoch = await epochs.current();
    const result = await work(epoch);
    if (!epochs.holds(epoch)) throw new CtxvmError('E_UNAVAILABLE', 'redis reconnected or changed identity while answering; the reply is not trusted');
    return result;
  }
  // Every operation, epoch and version lookups included, gets one deadline, behind the breaker.
  const answered = <T>(work: (epoch: Epoch) => Promise<T>) => breaker.run(() => withDeadline(fenced(work), config.commandTimeoutMs));

  // --- invalidation messages ---------------------------------------------------------------
  function notify(event: HotCacheInvalidation): void {
    for (const listener of [...listeners]) {
      try {
        listener(event);
      } catch (error) {
        logger.warn?.('ctxvm hot cache: an invalidation listener threw', { error });
      }
    }
  }

  function onMessage(message: string): void {
    let parsed: { userId?: unknown; version?: unknown; origin?: unknown; epoch?: unknown };
    try {
      parsed = JSON.parse(message) as typeof parsed;
    } catch {
      return; // not ours
    }
    const { userId, version, epoch } = parsed;
    if (typeof userId !== 'string' || typeof version !== 'number') return;
    if (typeof epoch === 'string') learnVersion(userId, version, epoch);
    // Our own invalidations notified local listeners already, without waiting for Redis.
    if (parsed.origin !== origin) notify({ scope: 'user', userId });
  }

  // node-redis renews a subscription after every reconnect, but only one that succeeded once:
  // a SUBSCRIBE lost to an outage at startup is forgotten, so it is retried on each 'ready'.
  let subscribed = false;
  let subscribing = false;
  let firstSubscribeSettled: () => void = () => {};
  const firstSubscribe = new Promise<void>((resolve) => {
    firstSubscribeSettled = resolve;
  });
  function subscribeUntilItSticks(): void {
    if (subscribed || subscribing || closed) return;
    subscribing = true;
    subscriber
      .subscribe(channel, onMessage)
      .then(
        () => {
          subscribed = true;
          resyncAfterInterruption();
        },
        (error: unknown) => {
          // A lost connection retries on the next 'ready'; anything else (an ACL, say) will not heal.
          if (!closed && subscriber.isReady) {
            logger.warn?.(`ctxvm hot cache: cannot subscribe to ${channel} (${messageOf(error)}); invalidations from other processes arrive within ${versionCacheMs} ms instead`, { error });
          }
        },
      )
      .finally(() => {
        subscribing = false;
        firstSubscribeSettled();
      });
  }

  let subscriberInterrupted = false;
  subscriber.on('error', () => {
    // The main connection reports outages; this one only needs to know it may miss messages.
    subscriberInterrupted = true;
    firstSubscribeSettled();
  });
  // Messages sent while the subscriber was away are lost: forget remembered versions, and tell
  // layered caches to forget everything. Only once subscribed again, or an invalidation could
  // slip between their forgetting and our listening.
  function resyncAfterInterruption(): void {
    if (!subscriberInterrupted) return;
    subscriberInterrupted = false;
    versions.clear();
    notify({ scope: 'all' });
  }
  subscriber.on('ready', () => {
    // After a reconnect node-redis emits 'ready' only once it has renewed the subscription.
    if (subscribed) resyncAfterInterruption();
    else subscribeUntilItSticks();
  });

  function bumpVersion(userId: string): Promise<void> {
    return answered(async (epoch) => {
      const version = await client.incr(userVersionKey(prefix, userId));
      learnVersion(userId, version, epoch.token);
      await client.publish(channel, JSON.stringify({ userId, version, origin, epoch: epoch.token }));
    });
  }

  // --- repairs: removals owed to Redis after failed writes ----------------------------------
  // Per user: the entries to delete, or 'user' when bumping the whole user is owed (or cheaper).
  const repairs = new Map<string, Map<string, { kind: string; key: string }> | 'user'>();
  let repairsRunning = false;
  let repairOverflowReported = false;

  function roomForRepairsOf(userId: string): boolean {
    if (repairs.has(userId) || repairs.size < MAX_REPAIR_USERS) return true;
    if (!repairOverflowReported) {
      logger.error(`ctxvm hot cache: more than ${MAX_REPAIR_USERS} users await repair; other failed writes may leave stale entries until their TTL ends`);
    }
    repairOverflowReported = true;
    return false;
  }

  function oweRemoval(ns: CacheNamespace, key: string): void {
    const owed = repairs.get(ns.userId);
    if (owed === 'user' || !roomForRepairsOf(ns.userId)) return;
    if (owed && owed.size >= MAX_REPAIR_KEYS_PER_USER) return oweInvalidation(ns.userId);
    const keys = owed ?? new Map<string, { kind: string; key: string }>();
    keys.set(JSON.stringify([ns.kind, key]), { kind: ns.kind, key });
    repairs.set(ns.userId, keys);
  }

  function oweInvalidation(userId: string): void {
    if (roomForRepairsOf(userId)) repairs.set(userId, 'user');
  }

  async function runRepairs(): Promise<void> {
    if (repairsRunning || repairs.size === 0 || closed) return;
    repairsRunning = true;
    const due = [...repairs];
    repairs.clear();
    repairOverflowReported = false;
    const retryLater = (error: unknown, owe: () => void) => {
      reportFailure(error, 'repair');
      owe();
    };
    // Issued in one tick, so node-redis pipelines them.
    await Promise.all(
      due.flatMap(([userId, owed]) =>
        owed === 'user'
          ? [bumpVersion(userId).catch((error: unknown) => retryLater(error, () => oweInvalidation(userId)))]
          : [...owed.values()].map(({ kind, key }) => removeEntry({ userId, kind }, key).catch((error: unknown) => retryLater(error, () => oweRemoval({ userId, kind }, key)))),
      ),
    );
    repairsRunning = false;
  }

  function removeEntry(ns: CacheNamespace, key: string): Promise<void> {
    return answered(async (epoch) => {
      await client.del(await keyOf(ns, key, epoch));
    });
  }

  // --- operations -----------------------------------------------------------------------------
  function open(): void {
    if (closed) throw closedCacheError('redis');
  }

  function failed(error: unknown, during: string): void {
    stats.errors++;
    reportFailure(error, during);
  }

  function succeeded(): void {
    reportSuccess();
    if (repairs.size > 0) void runRepairs();
  }

  function decodeHit<T>(raw: string | null, epoch: Epoch): T | undefined {
    // Unlabelled, or written to another server state (before a restart from disk, a failover).
    if (raw === null || !raw.startsWith(`${epoch.token}|`)) {
      stats.misses++;
      return undefined;
    }
    const decoded = decodeValue<T>(raw.slice(epoch.token.length + 1));
    if (!decoded.ok) {
      stats.errors++;
      stats.misses++;
      return undefined;
    }
    stats.hits++;
    return decoded.value;
  }

  async function writeAll(ns: CacheNamespace, encoded: ReadonlyArray<readonly [string, string]>, ttlMs: number, during: string): Promise<void> {
    try {
      await answered(async (epoch) => {
        const version = await versionOf(ns.userId, epoch);
        // Issued in one tick: node-redis writes them as one pipeline, and unlike
        // multi().execAsPipeline() each command keeps the offline check.
        const expiration = { type: 'PX', value: ttlMs } as const;
        await Promise.all(encoded.map(([key, json]) => client.set(hotCacheKey(prefix, ns, version, key), labelled(epoch, json), { expiration })));
      });
      stats.sets += encoded.length;
      succeeded();
    } catch (error) {
      failed(error, during);
      for (const [key] of encoded) oweRemoval(ns, key);
    }
  }

  const cache: HotCache = {
    name: 'redis',
    shared: true,

    async get<T>(ns: CacheNamespace, key: string): Promise<T | undefined> {
      open();
      assertNamespace(ns);
      assertKey(key);
      try {
        const [raw, epoch] = await answered(async (epoch) => [await client.get(await keyOf(ns, key, epoch)), epoch] as const);
        succeeded();
        return decodeHit<T>(raw, epoch);
      } catch (error) {
        failed(error, 'get');
        stats.misses++;
        return undefined;
      }
    },

    async getMany<T>(ns: CacheNamespace, keys: readonly string[]): Promise<Array<T | undefined>> {
      open();
      assertNamespace(ns);
      keys.forEach(assertKey);
      if (keys.length === 0) return [];
      try {
        const [raws, epoch] = await answered(async (epoch) => {
          const version = await versionOf(ns.userId, epoch);
          return [await client.mGet(keys.map((key) => hotCacheKey(prefix, ns, version, key))), epoch] as const;
        });
        succeeded();
        return raws.map((raw) => decodeHit<T>(raw, epoch));
      } catch (error) {
        failed(error, 'getMany');
        stats.misses += keys.length;
        return keys.map(() => undefined);
      }
    },

    async set<T>(ns: CacheNamespace, key: string, value: T, setOptions: HotCacheSetOptions): Promise<void> {
      open();
      assertNamespace(ns);
      assertKey(key);
      await writeAll(ns, [[key, encodeValue(value)]], ttlMsOf(setOptions), 'set');
    },

    async setMany(ns: CacheNamespace, batch: Iterable<readonly [string, unknown]>, setOptions: HotCacheSetOptions): Promise<void> {
      open();
      assertNamespace(ns);
      const ttlMs = ttlMsOf(setOptions);
      // Encode everything before sending anything, so a bad value writes nothing.
      const encoded = [...batch].map(([key, value]) => {
        assertKey(key);
        return [key, encodeValue(value)] as const;
      });
      if (encoded.length > 0) await writeAll(ns, encoded, ttlMs, 'setMany');
    },

    async delete(ns: CacheNamespace, key: string): Promise<void> {
      open();
      assertNamespace(ns);
      assertKey(key);
      try {
        await removeEntry(ns, key);
        succeeded();
      } catch (error) {
        failed(error, 'delete');
        oweRemoval(ns, key);
      }
    },

    async invalidateUser(userId: string): Promise<void> {
      open();
      assertUserId(userId);
      // Layered local caches must drop the user now, whether or not Redis hears about it.
      notify({ scope: 'user', userId });
      try {
        await bumpVersion(userId);
        succeeded();
      } catch (error) {
        // Until the bump lands, this process must not trust its remembered version.
        versions.delete(userId);
        failed(error, 'invalidateUser');
        oweInvalidation(userId);
      }
    },

    onInvalidate(listener: HotCacheInvalidationListener): () => void {
      open();
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    stats: () => stats.snapshot(),

    health() {
      const b = breaker.stats();
      return { state: b.state === 'closed' ? 'up' : 'down', breaker: b.state, sinceMs: b.sinceMs, trips: b.trips, shortCircuited: b.shortCircuited, epochChanges: epochs.changes() };
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      breaker.stop();
      listeners.clear();
      await Promise.all([shutDown(client, config.commandTimeoutMs), shutDown(subscriber, config.commandTimeoutMs)]);
    },
  };

  // Start both connections, then wait for the outcome of the first attempt (bounded by the
  // connect timeout): a cache created against a running Redis hits and hears invalidations
  // from the first call, while one created during an outage still starts, serving misses.
  const firstAttempt = Promise.all([firstEvent(client, ['ready', 'error']), firstSubscribe]);
  client.connect().catch(() => {}); // outcome observed through events; rejects only on close()
  subscriber.connect().catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([firstAttempt, new Promise((resolve) => (timer = setTimeout(resolve, config.connectTimeoutMs + 100)))]);
  clearTimeout(timer);
  return cache;
}

/** Resolves on the first of `events`. */
function firstEvent(client: RedisClient, events: string[]): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      for (const event of events) client.off(event, done);
      resolve();
    };
    for (const event of events) client.on(event, done);
  });
}

/** Closes gracefully when connected (pending replies arrive, bounded by their timeout), else at once. */
async function shutDown(client: RedisClient, graceMs: number): Promise<void> {
  if (!client.isOpen) return;
  if (!client.isReady) {
    client.destroy();
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      client.destroy();
      resolve();
    }, graceMs);
  });
  await Promise.race([client.close().catch(() => client.destroy()), gaveUp]);
  clearTimeout(timer);
}
