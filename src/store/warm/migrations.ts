/**
 * Schema migrations for the warm store: an ordered list of versioned steps, each applied in its
 * own transaction together with its row in `ctxvm_migrations`, so a step is either fully applied
 * and recorded or not at all. A table rather than `PRAGMA user_version`, so the same runner and
 * the same steps work on PostgreSQL. Two processes starting at once are safe: each step re-checks
 * the table inside its write transaction. On PostgreSQL, where writers do not queue behind one
 * lock as on SQLite, each step (and the creation of the table) first takes a transaction-scoped
 * advisory lock for the current schema, so steps run one process at a time; a process that
 * waited may still hold a snapshot from before the other's commit (SERIALIZABLE), so when its
 * step fails and the version turns out recorded meanwhile, the step counts as applied by the
 * other process.
 */
import { CtxvmError, UsageError } from '../../errors.js';
import type { SqlDatabase, SqlDialect, SqlExecutor } from './sql.js';

/** One schema step. Steps are never edited once released; fixes are new steps. */
export interface Migration {
  /** Position in the order, a positive integer, unique. */
  version: number;
  /** Short description, recorded with the version (e.g. "session catalog"). */
  name: string;
  /** Portable SQL script, or a function for steps that need logic (or differ by dialect). */
  up: string | ((tx: SqlExecutor, dialect: SqlDialect) => Promise<void>);
  /**
   * Which part of the schema the step belongs to (e.g. "sessions"), when a caller may need only
   * some parts; a step without one is always applied. A part's steps never depend on another's.
   */
  part?: string;
}

/** What `runMigrations` did. */
export interface MigrationResult {
  /** Versions applied by this call, in order. */
  applied: number[];
  /** Schema version after the call: the newest step recorded. */
  version: number;
}

/** Options of `runMigrations`. */
export interface RunMigrationsOptions {
  /** Clock for `applied_at_ms`, Unix ms (default `Date.now`). */
  now?: () => number;
  /**
   * Apply only the steps of these parts (and steps without a part); default every step. The
   * others are left for a later call that asks for them, so a database holds only what was used.
   */
  parts?: readonly string[];
}

const TABLE = 'ctxvm_migrations';

/** Throws a `UsageError` unless versions are positive integers in strictly increasing order. */
export function checkMigrations(migrations: readonly Migration[]): void {
  let previous = 0;
  for (const m of migrations) {
    if (!Number.isSafeInteger(m.version) || m.version <= previous) {
      throw new UsageError(`migration "${m.name}": version ${m.version} must be an integer greater than ${previous} (versions are ordered and unique)`);
    }
    previous = m.version;
  }
}

/** Current schema version of `db` (0 for a fresh database). */
export async function schemaVersion(db: SqlExecutor | SqlDatabase): Promise<number> {
  await ensureTable(db);
  const row = await db.get<{ v: number | null }>(`SELECT MAX(version) AS v FROM ${TABLE}`);
  return Number(row?.v ?? 0);
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS ${TABLE} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at_ms BIGINT NOT NULL)`;

/**
 * Serialises migration steps across processes on PostgreSQL (released at COMMIT/ROLLBACK).
 * Keyed by the current schema, so databases with one schema per tenant or test do not wait on
 * each other. 0x63747876 is "ctxv".
 */
const PG_MIGRATION_LOCK = `SELECT pg_advisory_xact_lock(${0x63747876}, hashtext(COALESCE(current_schema(), '')))`;

const isPostgres = (db: SqlExecutor | SqlDatabase): db is SqlDatabase => 'dialect' in db && db.dialect === 'postgres';

async function ensureTable(db: SqlExecutor | SqlDatabase): Promise<void> {
  // CREATE TABLE IF NOT EXISTS is not atomic on PostgreSQL: two sessions can both pass the check
  // and one then fails on the catalog's unique index. Under the lock the second one sees the table.
  if (isPostgres(db)) {
    await db.transaction(async (tx) => {
      await tx.get(PG_MIGRATION_LOCK);
      await tx.exec(CREATE_TABLE);
    });
  } else await db.exec(CREATE_TABLE);
}

/** Applies every step (of the parts asked for) not yet recorded in the database, in order. */
export async function runMigrations(db: SqlDatabase, migrations: readonly Migration[], options: RunMigrationsOptions = {}): Promise<MigrationResult> {
  checkMigrations(migrations);
  const now = options.now ?? Date.now;
  await ensureTable(db);
  const known = migrations.length ? migrations[migrations.length - 1]!.version : 0;
  const applied: number[] = [];
  const rows = await db.all<{ version: number; name: string }>(`SELECT version, name FROM ${TABLE} ORDER BY version`);
  const newest = rows.length ? Number(rows[rows.length - 1]!.version) : 0;
  if (newest > known) {
    throw new CtxvmError('E_UNSUPPORTED', `${db.location}: schema version ${newest} is newer than this ctxvm understands (${known})`, {
      hint: 'upgrade ctxvm, or point CTXVM_DB at another database',
    });
  }
  const byVersion = new Map(rows.map((r) => [Number(r.version), r.name]));
  const wanted = options.parts ? new Set(options.parts) : undefined;
  let version = newest;
  for (const m of migrations) {
    const recorded = byVersion.get(m.version);
    if (recorded !== undefined) {
      if (recorded !== m.name) {
        throw new CtxvmError('E_INTEGRITY', `${db.location}: migration ${m.version} was applied as "${recorded}" but this ctxvm calls it "${m.name}"`, {
          hint: 'the database was written by a different build of ctxvm',
        });
      }
      continue;
    }
    if (wanted && m.part !== undefined && !wanted.has(m.part)) continue;
    let ran: boolean;
    try {
      ran = await db.transaction(async (tx) => {
        if (isPostgres(db)) await tx.get(PG_MIGRATION_LOCK);
        // Another process may have applied it since the read above.
        if (await tx.get(`SELECT version FROM ${TABLE} WHERE version = ?`, [m.version])) return false;
        if (typeof m.up === 'string') await tx.exec(m.up);
        else await m.up(tx, db.dialect);
        await tx.run(`INSERT INTO ${TABLE} (version, name, applied_at_ms) VALUES (?, ?, ?)`, [m.version, m.name, now()]);
        return true;
      });
    } catch (error) {
      // The step and its row commit together, so a recorded row means another process applied
      // it whole while this one worked from an older snapshot (its CREATE or INSERT collided).
      const row = await db.get<{ name: string }>(`SELECT name FROM ${TABLE} WHERE version = ?`, [m.version]).catch(() => undefined);
      if (row === undefined || row.name !== m.name) throw error;
      ran = false;
    }
    if (ran) applied.push(m.version);
    version = Math.max(version, m.version);
  }
  return { applied, version };
}
