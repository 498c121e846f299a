/**
 * Wires a server's services from the configuration: ONE warm database (CTXVM_DB) shared by the
 * memory store, the session catalog and the API keys; the hot tier (CTXVM_REDIS, else
 * in-process); the object store and the cold turn archive under CTXVM_HOME. Used by
 * `ctxvm serve` and `ctxvm mcp`; embedders can build `ServerServices` themselves.
 */
import { mkdir } from 'node:fs/promises';
import { openSemanticRecallFromEnv, type OpenedSemanticRecall } from '../memory/semantic/open.js';
import type { CtxvmConfig } from '../core/config.js';
import type { TimeZone } from '../core/time-zone.js';
import type { LlmCallback } from '../llm/llm.js';
import type { HotCache, HotCacheLogger } from '../store/hot-cache.js';
import type { SqlDatabase } from '../store/warm/sql.js';
import type { MemoryStore } from '../memory/memory-store.js';
import { createApiKeyStore, type ApiKeyStore } from './api-keys.js';
import type { ServerServices } from './services.js';

/** Options of `openServerServices`. */
export interface OpenServerServicesOptions {
  config: CtxvmConfig;
  /** Zone of users who have not stated one (default "UTC"). */
  timeZone?: TimeZone;
  /** Default context budget, tokens (default 2000). */
  budgetTokens?: number;
  /** Answers messages (default: the offline responder). */
  llm?: LlmCallback;
  /** Where the hot tier reports outages. */
  hotLogger?: HotCacheLogger;
  /** Environment for semantic recall (CTXVM_EMBED_MODEL …; src/memory/semantic/open.ts); unset = none. Its warnings go to `hotLogger.warn`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Directory relative session paths and `latest` resolve against (MCP: the agent's project). */
  cwd?: string;
  /** Hears of cold-archive flushes that failed (the turns stay queued and are retried). */
  onArchiveError?: (error: unknown) => void;
  /**
   * How long a verified API key is trusted before the database is asked again, ms (default
   * 5 000). Revoking through these services is immediate; `ctxvm keys revoke` run by another
   * process takes effect within this time.
   */
  verifiedKeyTtlMs?: number;
  /** Other processes serve from the same warm store (`serve --workers N`): see `MemoryManagerOptions.multiProcess`. */
  multiProcess?: boolean;
  /**
   * Cache users' per-turn warm reads in the hot tier (`MemoryManagerOptions.cacheReads`; default:
   * with PostgreSQL or Redis only — with SQLite and the in-process hot tier a read from SQLite
   * costs less). Refresh-ahead runs only where reads are cached.
   */
  cacheReads?: boolean;
  /** Rebuild users' most asked questions in the background after their memory changes (default true where reads are cached; `MemoryManagerOptions.refreshAhead`). */
  refreshAhead?: boolean;
}

/** How long `ctxvm serve` trusts a verified API key without asking the database again, ms. */
export const DEFAULT_VERIFIED_KEY_TTL_MS = 5_000;

/** Opened services; `close()` releases them (database last). */
export interface OpenedServerServices extends ServerServices {
  db: SqlDatabase;
  /** The warm memory store itself (authoritative; the manager reads through the hot tier). */
  store: MemoryStore;
  close(): Promise<void>;
}

/** Opens the warm database (migrations applied) and the API keys over it, for `ctxvm keys`. */
export async function openKeyStore(config: CtxvmConfig): Promise<{ keys: ApiKeyStore; close(): Promise<void> }> {
  const db = await openDatabase(config);
  return { keys: createApiKeyStore(db), close: () => db.close() };
}

async function openDatabase(config: CtxvmConfig, server = false): Promise<SqlDatabase> {
  const { openWarmDatabase } = await import('../store/warm/open.js');
  if (!/^postgres(ql)?:\/\//.test(config.db)) await mkdir(config.home, { recursive: true });
  // a server commits all the time: checkpoint every ~40 MiB of WAL rather than every 4 MiB
  return openWarmDatabase({ db: config.db, ...(server ? { walAutocheckpointPages: SERVER_WAL_AUTOCHECKPOINT_PAGES } : {}) });
}

/** WAL pages between checkpoints of a server's SQLite connection (SQLite's default: 1 000). */
export const SERVER_WAL_AUTOCHECKPOINT_PAGES = 10_000;

/** Opens everything a server needs. */
export async function openServerServices(options: OpenServerServicesOptions): Promise<OpenedServerServices> {
  const { config } = options;
  const [{ createSqlMemoryStore }, { createMemoryManager }, { createHotCache }, { createFsObjectStore }, { createTurnArchive }, { createArchiveQueue }, { createSqlSessionCatalog }, { createSessionOps }] = await Promise.all([
    import('../memory/store/sql-memory-store.js'),
    import('../memory/manager.js'),
    import('../store/open-hot-cache.js'),
    import('../store/drivers/objects-fs.js'),
    import('../memory/store/turn-archive.js'),
    import('../memory/store/archive-queue.js'),
    import('../session/dag/sql-catalog.js'),
    import('./session-ops.js'),
  ]);
  const db = await openDatabase(config, true);
  let hot: HotCache | undefined;
  let semantic: OpenedSemanticRecall | undefined;
  try {
    const store = createSqlMemoryStore(db);
    const warn = options.hotLogger?.warn;
    semantic = options.env ? await openSemanticRecallFromEnv({ env: options.env, db: config.db, sqlDatabase: db, ...(warn ? { onWarning: (m: string) => warn(m) } : {}) }) : undefined;
    hot = await createHotCache({ redisUrl: config.redis, ...(options.hotLogger ? { logger: options.hotLogger } : {}) });
    // The warm store holds every acknowledged turn; the cold archive copies them in batches, off
    // the request path (archive-queue.ts: it may lag by ~50 ms, and is flushed on close).
    const archive = createTurnArchive({ objects: createFsObjectStore({ root: config.objectsDir }), db });
    const archiveQueue = createArchiveQueue({ archive, ...(options.onArchiveError ? { onError: options.onArchiveError } : {}) });
    const manager = createMemoryManager({
      store,
      hot,
      archive: { append: async (userId, turns) => archiveQueue.append(userId, turns) },
      defaultTimeZone: options.timeZone ?? 'UTC',
      ...(options.multiProcess ? { multiProcess: true } : {}),
      ...(options.cacheReads !== undefined ? { cacheReads: options.cacheReads } : {}),
      ...(options.refreshAhead === false ? { refreshAhead: false } : {}),
      ...(options.budgetTokens !== undefined ? { budgetTokens: options.budgetTokens } : {}),
      ...(semantic ? { semantic: semantic.semantic } : {}),
    });
    const openedSemantic = semantic;
    const sessions = createSessionOps({
      catalog: createSqlSessionCatalog(db),
      objects: createFsObjectStore({ root: config.objectsDir, durability: 'deferred' }),
      roots: { claudeConfigDir: config.claudeConfigDir, codexHome: config.codexHome, home: config.home },
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    });
    const opened = hot;
    return {
      db,
      store,
      manager,
      sessions,
      keys: createApiKeyStore(db, { verifiedTtlMs: options.verifiedKeyTtlMs ?? DEFAULT_VERIFIED_KEY_TTL_MS }),
      hot: opened,
      listUsers: (o) => store.listUsers!(o),
      ...(options.llm ? { llm: options.llm } : {}),
      close: async () => {
        manager.refreshAhead?.stop();
        await manager.refreshAhead?.settled();
        await archiveQueue.close().catch((error: unknown) => options.onArchiveError?.(error));
        await openedSemantic?.close();
        await opened.close();
        await store.close();
        await db.close();
      },
    };
  } catch (error) {
    await semantic?.close();
    await hot?.close();
    await db.close();
    throw error;
  }
}
