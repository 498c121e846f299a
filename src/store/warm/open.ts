/**
 * Opens the warm store named by the configuration (`CTXVM_DB`: a SQLite file path, default
 * `$CTXVM_HOME/ctxvm.db`, or a `postgres://` URL) and brings its schema up to date.
 */
import { runMigrations, type Migration } from './migrations.js';
import { createPostgresDriver, type PostgresDriverOptions } from './postgres-driver.js';
import { WARM_MIGRATIONS, type WarmPart } from './schema.js';
import type { SqlDatabase } from './sql.js';
import { createBetterSqliteDriver } from './sqlite-driver.js';

/** True when `db` names a PostgreSQL database (`postgres://` or `postgresql://`). */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

/** Options of `openWarmDatabase`. */
export interface OpenWarmDatabaseOptions {
  /** SQLite file path or `postgres://` URL (`CtxvmConfig.db`). */
  db: string;
  /** Migrations to apply (default: every warm-store migration). */
  migrations?: readonly Migration[];
  /** Only these parts of the schema (default all): a sessions command needs no memory tables. */
  parts?: readonly WarmPart[];
  /** Lock wait for SQLite, ms (default 5 000). */
  busyTimeoutMs?: number;
  /** SQLite: WAL pages between automatic checkpoints (default 1 000; see `BetterSqliteDriverOptions`). */
  walAutocheckpointPages?: number;
  /** PostgreSQL pool, schema and transaction settings (ignored for SQLite). */
  postgres?: Omit<PostgresDriverOptions, 'url'>;
  /** Clock, Unix ms (default `Date.now`). */
  now?: () => number;
}

/** Opens the warm database and applies pending migrations; the caller closes it. */
export async function openWarmDatabase(options: OpenWarmDatabaseOptions): Promise<SqlDatabase> {
  const driver = isPostgresUrl(options.db)
    ? createPostgresDriver({ ...options.postgres, url: options.db })
    : createBetterSqliteDriver({
        path: options.db,
        ...(options.busyTimeoutMs !== undefined ? { busyTimeoutMs: options.busyTimeoutMs } : {}),
        ...(options.walAutocheckpointPages !== undefined ? { walAutocheckpointPages: options.walAutocheckpointPages } : {}),
      });
  const db = await driver.connect();
  try {
    await runMigrations(db, options.migrations ?? WARM_MIGRATIONS, { ...(options.now ? { now: options.now } : {}), ...(options.parts ? { parts: options.parts } : {}) });
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
