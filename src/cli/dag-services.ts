/**
 * What the DAG commands (sessions, snapshot, tree, list, info, rm, gc, du, export, import,
 * branch) share: the warm store and its catalog, the object store, the scratch folder, and
 * session discovery/resolution against the configured agent folders. Opened per command and
 * closed when it ends.
 *
 * Implementations are imported when a command runs, not when the CLI starts, so every command
 * (and `--version`) pays only for the modules it uses; `ctxvm sessions` is meant to be instant.
 */
import { join } from 'node:path';
import type { CtxvmConfig } from '../core/config.js';
import { UsageError } from '../errors.js';
import type { AgentKind } from '../session/context-model.js';
import type { SessionCatalog } from '../session/dag/catalog.js';
import type { DiscoveredSession, DiscoverResult } from '../session/discovery/discover.js';
import type { ObjectStore } from '../store/object-store.js';
import type { SqlDatabase } from '../store/warm/sql.js';
import type { CommandContext } from './io.js';

/** Open stores for one command. */
export interface DagServices {
  config: CtxvmConfig;
  db: SqlDatabase;
  catalog: SessionCatalog;
  store: ObjectStore;
  /** `$CTXVM_HOME/tmp`: scratch copies (removed when done, or by gc after a crash). */
  scratchDir: string;
}

/** Options of `withDagServices`. */
export interface DagServicesOptions {
  /** Whether the command touches the object store (default true); listing commands do not. */
  objects?: boolean;
  /** Use this object store instead of opening one (a command that already has one open). */
  store?: ObjectStore;
}

const noObjectStore = new Proxy({} as ObjectStore, {
  get(_target, key) {
    throw new Error(`internal: this command opened no object store (ObjectStore.${String(key)})`);
  },
});

/** Opens the stores, runs `fn`, and closes them whatever happens. */
export async function withDagServices<T>(ctx: CommandContext, fn: (services: DagServices) => Promise<T>, options: DagServicesOptions = {}): Promise<T> {
  const config = ctx.config();
  const [{ openWarmDatabase }, { createSqlSessionCatalog }, objectsFs] = await Promise.all([
    import('../store/warm/open.js'),
    import('../session/dag/sql-catalog.js'),
    options.objects === false || options.store ? undefined : import('../store/drivers/objects-fs.js'),
  ]);
  const db = await openWarmDatabase({ db: config.db, parts: ['sessions'] });
  try {
    const services: DagServices = {
      config,
      db,
      catalog: createSqlSessionCatalog(db),
      // Deferred: snapshot and rm flush once before they publish, instead of fsyncing every chunk.
      store: options.store ?? (objectsFs ? objectsFs.createFsObjectStore({ root: config.objectsDir, durability: 'deferred' }) : noObjectStore),
      scratchDir: join(config.home, 'tmp'),
    };
    return await fn(services);
  } finally {
    await db.close();
  }
}

/** Parses `--agent`. */
export function agentOption(value: string): AgentKind {
  if (value === 'claude' || value === 'codex') return value;
  throw new UsageError(`--agent must be claude or codex, got ${JSON.stringify(value)}`);
}

/** Refreshes the index and lists the sessions. */
export async function discover(services: DagServices, agent?: AgentKind): Promise<DiscoverResult> {
  const { discoverSessions } = await import('../session/discovery/discover.js');
  return discoverSessions({
    catalog: services.catalog,
    claudeConfigDir: services.config.claudeConfigDir,
    codexHome: services.config.codexHome,
    ...(agent ? { agent } : {}),
  });
}

/** Resolves a session reference (id, id prefix, path) or `--latest` against a fresh discovery. */
export async function resolveSession(ctx: CommandContext, services: DagServices, ref: string | undefined, latest: boolean, agent?: AgentKind): Promise<DiscoveredSession> {
  if (ref === undefined && !latest) throw new UsageError('no session given', { hint: 'pass --session <id|prefix|path> or --latest' });
  const { sessions } = await discover(services, agent);
  const { resolveSessionRef } = await import('../session/discovery/resolve.js');
  return resolveSessionRef(ref, latest, { sessions, cwd: ctx.io.cwd, ...(agent ? { agent } : {}) });
}

/** Parses a duration such as `0`, `500ms`, `30s`, `10m`, `2h`, `1d` into ms. */
export function durationOption(name: string) {
  return (value: string): number => {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(value.trim());
    if (!m) throw new UsageError(`${name} must be a duration such as 0, 30s, 10m or 2h, got ${JSON.stringify(value)}`);
    const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m[2] ?? 'ms') as 'ms' | 's' | 'm' | 'h' | 'd'];
    return Math.round(Number(m[1]) * unit);
  };
}

/** A short id for tables: the first 8 characters. */
export const shortId = (id: string): string => id.slice(0, 8);

/** ISO time without seconds, for tables: "2025-11-30 12:34". */
export function shortTime(ms: number | string): string {
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
}
