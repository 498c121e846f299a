/**
 * Wires the memory engine for one CLI run from the configuration: the warm store (CTXVM_DB), the
 * hot tier (CTXVM_REDIS, else in-process), the cold archive under CTXVM_HOME, the manager.
 */
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { TimeZone } from '../core/time-zone.js';
import type { MemoryManager } from '../memory/manager.js';
import type { MemoryStore } from '../memory/memory-store.js';
import type { HotCache } from '../store/hot-cache.js';
import { openSemanticRecallFromEnv, type OpenedSemanticRecall } from '../memory/semantic/open.js';
import type { CommandContext } from './io.js';

export interface MemoryServices {
  manager: MemoryManager;
  store: MemoryStore;
  hot: HotCache;
  close(): Promise<void>;
}

/** The zone of this machine, for commands run without `--tz`. */
export function systemTimeZone(): TimeZone {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** Options of `openMemoryServices`. */
export interface MemoryServicesOptions {
  timeZone?: TimeZone;
  budgetTokens?: number;
}

/** Runs `fn` with the memory services open and closes them afterwards, whatever happens. */
export async function withMemoryServices<T>(ctx: CommandContext, options: MemoryServicesOptions, fn: (services: MemoryServices) => Promise<T>): Promise<T> {
  const services = await openMemoryServices(ctx, options);
  try {
    return await fn(services);
  } finally {
    await services.close();
  }
}

export async function openMemoryServices(ctx: CommandContext, options: MemoryServicesOptions = {}): Promise<MemoryServices> {
  const config = ctx.config();
  const [{ openMemoryStore }, { createMemoryManager, readCacheSaves }, { createHotCache }, { createFsObjectStore }, { createTurnArchive }] = await Promise.all([
    import('../memory/store/sql-memory-store.js'),
    import('../memory/manager.js'),
    import('../store/open-hot-cache.js'),
    import('../store/drivers/objects-fs.js'),
    import('../memory/store/turn-archive.js'),
  ]);
  if (!/^postgres(ql)?:\/\//.test(config.db)) await mkdir(dirname(config.db), { recursive: true });
  const store = await openMemoryStore({ db: config.db });
  let hot: HotCache | undefined;
  let semantic: OpenedSemanticRecall | undefined;
  try {
    // Semantic recall when CTXVM_EMBED_MODEL is set (src/memory/semantic/open.ts); its failures are warnings.
    semantic = await openSemanticRecallFromEnv({ env: ctx.io.env, db: config.db, sqlDatabase: store.db, onWarning: (m) => ctx.note(`warning: ${m}`) });
    // The hot tier reports an outage once (error) and its recovery (info); it never fails a command.
    const logger = { error: (m: string) => ctx.note(`warning: ${m}`), warn: (m: string) => ctx.note(`warning: ${m}`), info: (m: string) => ctx.note(m) };
    hot = await createHotCache({ redisUrl: config.redis, logger });
    const objects = await createFsObjectStore({ root: config.objectsDir });
    const archive = createTurnArchive({ objects, db: store.db });
    const manager = createMemoryManager({
      store,
      hot,
      // (read cache where it saves round trips: see MemoryManagerOptions.cacheReads; its outages reported here)
      cacheReads: readCacheSaves(store, hot) ? { logger } : false,
      archive: { append: async (userId, turns) => void (await archive.append(userId, turns)) },
      ...(options.timeZone !== undefined ? { defaultTimeZone: options.timeZone } : { defaultTimeZone: systemTimeZone() }),
      ...(options.budgetTokens !== undefined ? { budgetTokens: options.budgetTokens } : {}),
      ...(semantic ? { semantic: semantic.semantic } : {}),
    });
    const opened = hot;
    const openedSemantic = semantic;
    return {
      manager,
      store,
      hot: opened,
      close: async () => {
        await openedSemantic?.close();
        await opened.close();
        await store.close();
      },
    };
  } catch (error) {
    await semantic?.close();
    await hot?.close();
    await store.close();
    throw error;
  }
}
