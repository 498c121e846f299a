/**
 * Opens the hot cache a configuration selects. Apart from hot-cache.ts (the interface and helpers
 * the drivers import), so that the interface and its drivers form no import cycle.
 */
import type { HotCache, HotCacheLogger } from './hot-cache.js';

/** Options of `createHotCache`. */
export interface HotCacheSelection {
  /** A `redis://` URL (`CtxvmConfig.redis`, from `CTXVM_REDIS`) selects Redis; undefined selects the in-process LRU. */
  redisUrl: string | undefined;
  /** Where the Redis driver reports outages (default: nowhere). */
  logger?: HotCacheLogger;
  /** Prefix of every Redis key (default `ctxvm`). */
  keyPrefix?: string;
}

/** The hot cache the configuration asks for: shared Redis when `redisUrl` is set, else the in-process LRU. */
export async function createHotCache(selection: HotCacheSelection): Promise<HotCache> {
  // Imported on demand: the Redis driver should not even be parsed by a process that never uses it.
  if (selection.redisUrl === undefined) {
    const { createLruHotCache } = await import('./drivers/hot-lru.js');
    return createLruHotCache();
  }
  const { createRedisHotCache } = await import('./drivers/hot-redis.js');
  return createRedisHotCache({ url: selection.redisUrl, logger: selection.logger, keyPrefix: selection.keyPrefix });
}
