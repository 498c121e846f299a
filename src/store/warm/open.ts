/**
 * Opens the warm store named by the configuration (`CTXVM_DB`: a SQLite file path, default
 * `$CTXVM_HOME/ctxvm.db`, or a `postgres://` URL) and brings its schema up to date.
 */
import { redactUrl } from '../../core/config.js';
import { CtxvmError } from '../../errors.js';
import { runMigrations, type Migration } from './migrations.js';
import { WARM_MIGRATIONS } from './schema.js';
import type { SqlDatabase } from './sql.js';
import { createBetterSqliteDriver } from './sqlite-driver.js';

/** Options of `openWarmDatabase`. */
export interface OpenWarmDatabaseOptions {
  /** SQLite file path or `postgres://` URL (`CtxvmConfig.db`). */
  db: string;
  /** Migrations to apply (default: every warm-store migration). */
  migrations?: readonly Migration[];
  /** Lock wait for SQLite, ms (default 5 000). */
  busyTimeoutMs?: number;
  /** Clock, Unix ms (default `Date.now`). */
  now?: () => number;
}

/** Opens the warm database and applies pending migrations; the caller closes it. */
export async function openWarmDatabase(options: OpenWarmDatabaseOptions): Promise<SqlDatabase> {
  if (/^postgres(ql)?:\/\//.test(options.db)) {
    throw new CtxvmError('E_UNSUPPORTED', `CTXVM_DB=${redactUrl(options.db)}: the PostgreSQL warm store is not available in this build`, {
      hint: 'unset CTXVM_DB to use the SQLite file under $CTXVM_HOME',
    });
  }
  const db = await createBetterSqliteDriver({ path: options.db, ...(options.busyTimeoutMs !== undefined ? { busyTimeoutMs: options.busyTimeoutMs } : {}) }).connect();
  try {
    await runMigrations(db, options.migrations ?? WARM_MIGRATIONS, options.now ? { now: options.now } : {});
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
