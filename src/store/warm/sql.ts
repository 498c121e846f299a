/**
 * The warm tier's SQL seam: a small async interface that the SQLite driver (sqlite-driver.ts) and
 * the PostgreSQL driver (postgres-driver.ts) implement, so catalogs and migrations are written once. SQL passed
 * through it sticks to the portable subset (see schema.ts): `?` placeholders, TEXT / INTEGER /
 * BIGINT columns, `INSERT … ON CONFLICT … DO UPDATE`, no AUTOINCREMENT, times as Unix ms.
 */

/** A value bound to a `?` placeholder or read from a column. */
export type SqlValue = string | number | bigint | null | Uint8Array;

/** Positional parameters, one per `?` in the statement. */
export type SqlParams = readonly SqlValue[];

/** One result row, column name → value. */
export type SqlRow = Record<string, SqlValue>;

/** What a write statement did. */
export interface SqlRunResult {
  /** Rows inserted, updated or deleted. */
  changes: number;
}

/** Runs statements; the database itself and an open transaction both are one. */
export interface SqlExecutor {
  /** Every row of a query. */
  all<T extends object = SqlRow>(sql: string, params?: SqlParams): Promise<T[]>;
  /** The first row of a query, or undefined. */
  get<T extends object = SqlRow>(sql: string, params?: SqlParams): Promise<T | undefined>;
  /** Runs one write statement. */
  run(sql: string, params?: SqlParams): Promise<SqlRunResult>;
  /** Runs a script of `;`-separated statements without parameters (schema changes). */
  exec(sql: string): Promise<void>;
}

/** SQL dialects the warm tier speaks. */
export type SqlDialect = 'sqlite' | 'postgres';

/** An open warm-store database. */
export interface SqlDatabase extends SqlExecutor {
  /** Which SQL the backend speaks (for the rare statement that must differ). */
  readonly dialect: SqlDialect;
  /** Where the data lives: a file path or a redacted URL (for messages). */
  readonly location: string;
  /**
   * Runs `fn` in one serializable write transaction: commits when it resolves, rolls back when
   * it throws; a statement that fails inside it undoes only itself. `fn` must use `tx`, never
   * the database: on SQLite other calls wait until the transaction ends; on PostgreSQL they run
   * on other pooled connections and do not see its uncommitted changes. On PostgreSQL `fn` may
   * run more than once (after a serialization failure or deadlock, the driver retries), so it
   * must have no effects outside `tx`.
   */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Closes the connection; later calls fail. Safe to call twice. */
  close(): Promise<void>;
}

/** Opens connections to one SQLite database; hides which binding is used (keyv's seam). */
export interface SqliteDriver {
  /** Binding name, e.g. "better-sqlite3". */
  readonly name: string;
  /** Opens (creating if needed) the database, in WAL mode with a busy timeout. */
  connect(): Promise<SqlDatabase>;
}

/** True when `error` is a unique/primary-key violation reported by any warm-store backend. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  // better-sqlite3: SQLITE_CONSTRAINT_UNIQUE / _PRIMARYKEY; PostgreSQL: 23505 (on the error or its cause)
  return [e?.code, e?.cause?.code].some((code) => code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505');
}
