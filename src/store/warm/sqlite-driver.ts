/**
 * SQLite behind the `SqliteDriver` seam, over better-sqlite3 (loaded on first connect, so
 * commands that never touch the warm store never load the native module). One connection per
 * database object, WAL mode so readers never block the writer, and a busy timeout so a second
 * ctxvm process waits for a lock instead of failing.
 *
 * better-sqlite3 is synchronous; the async `SqlDatabase` surface exists so the PostgreSQL driver
 * can share it. Transactions span awaits, so they are serialised: calls made outside the
 * transaction wait for it to end instead of slipping into it. Connections to one file within a
 * process share a single underlying connection: with two, the second one's lock wait would block
 * the only thread while the first still has to commit — a deadlock until the busy timeout.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { CtxvmError, type ErrorCode } from '../../errors.js';
import type { SqlDatabase, SqlExecutor, SqliteDriver, SqlParams, SqlRunResult } from './sql.js';

/** Default time a statement waits for another process's lock, ms. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

/** Options of `createBetterSqliteDriver`. */
export interface BetterSqliteDriverOptions {
  /** Database file; its folder is created. `:memory:` for a private in-memory database. */
  path: string;
  /** How long a statement waits for a lock held by another process, ms (default 5 000). */
  busyTimeoutMs?: number;
}

// The parts of better-sqlite3 this driver uses (its types are a devDependency of the package).
interface BsStatement {
  readonly reader: boolean;
  all(...params: unknown[]): unknown[];
  get(...params: unknown[]): unknown;
  run(...params: unknown[]): { changes: number };
}
interface BsDatabase {
  readonly inTransaction: boolean;
  prepare(sql: string): BsStatement;
  exec(sql: string): void;
  pragma(sql: string, options?: { simple?: boolean }): unknown;
  close(): void;
}
type BsConstructor = new (path: string, options?: { timeout?: number }) => BsDatabase;

let loaded: Promise<BsConstructor> | undefined;
async function loadBinding(): Promise<BsConstructor> {
  loaded ??= import('better-sqlite3').then(
    (m) => ((m as { default?: unknown }).default ?? m) as BsConstructor,
    (cause: unknown) => {
      loaded = undefined;
      throw new CtxvmError('E_UNAVAILABLE', 'the SQLite binding (better-sqlite3) could not be loaded', {
        cause,
        hint: 'reinstall ctxvm so its native module is built for this Node.js version',
      });
    },
  );
  return loaded;
}

/** Maps a SQLite error code to a ctxvm error code. */
function codeFor(sqliteCode: string | undefined): ErrorCode {
  if (!sqliteCode) return 'E_IO';
  if (sqliteCode.startsWith('SQLITE_CONSTRAINT')) return 'E_CONFLICT';
  if (sqliteCode.startsWith('SQLITE_BUSY') || sqliteCode.startsWith('SQLITE_LOCKED')) return 'E_UNAVAILABLE';
  if (sqliteCode.startsWith('SQLITE_CORRUPT') || sqliteCode === 'SQLITE_NOTADB') return 'E_INTEGRITY';
  return 'E_IO';
}

function wrap(location: string, cause: unknown): CtxvmError {
  if (CtxvmError.is(cause)) return cause;
  const sqliteCode = (cause as { code?: string } | undefined)?.code;
  const code = codeFor(sqliteCode);
  const message = cause instanceof Error ? cause.message : String(cause);
  return new CtxvmError(code, `${location}: ${message}`, {
    cause,
    ...(code === 'E_UNAVAILABLE' ? { hint: 'another ctxvm process holds the database lock; retry' } : {}),
    ...(code === 'E_INTEGRITY' ? { hint: `the warm store file is damaged; move ${location} aside (snapshots in the object store stay intact)` } : {}),
  });
}

/** One underlying connection and its transaction queue, shared by the handles of a process. */
interface SharedConnection {
  db: BsDatabase;
  location: string;
  statements: Map<string, BsStatement>;
  /** A transaction is running. */
  active: boolean;
  /** Tail of the transaction queue. */
  queue: Promise<unknown>;
  /** Open handles. */
  handles: number;
}

const shared = new Map<string, SharedConnection>();

/** Creates the better-sqlite3 driver for one database file. */
export function createBetterSqliteDriver(options: BetterSqliteDriverOptions): SqliteDriver {
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  return {
    name: 'better-sqlite3',
    async connect() {
      const Database = await loadBinding();
      const location = options.path;
      const key = location === ':memory:' ? undefined : resolve(location);
      let conn = key ? shared.get(key) : undefined;
      if (!conn) {
        if (key) await mkdir(dirname(key), { recursive: true });
        // another connect() may have finished while this one waited for mkdir
        conn = key ? shared.get(key) : undefined;
      }
      if (!conn) {
        let db: BsDatabase;
        try {
          db = new Database(location, { timeout: busyTimeoutMs });
          db.pragma('journal_mode = WAL');
          db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
          // WAL + NORMAL: a killed process loses nothing committed; a power cut may lose the last
          // transactions but never corrupts the file.
          db.pragma('synchronous = NORMAL');
          db.pragma('foreign_keys = ON');
        } catch (cause) {
          throw wrap(location, cause);
        }
        conn = { db, location, statements: new Map(), active: false, queue: Promise.resolve(), handles: 0 };
        if (key) shared.set(key, conn);
      }
      conn.handles++;
      return handleFor(conn, () => {
        if (--conn.handles > 0) return;
        if (key) shared.delete(key);
        conn.statements.clear();
        conn.db.close();
      });
    },
  };
}

function handleFor(conn: SharedConnection, release: () => void): SqlDatabase {
  const { db, location } = conn;
  let closed = false;

  const prepare = (sql: string): BsStatement => {
    if (closed) throw new CtxvmError('E_USAGE', `${location}: the database is closed`);
    let stmt = conn.statements.get(sql);
    if (!stmt) {
      stmt = db.prepare(sql);
      conn.statements.set(sql, stmt);
    }
    return stmt;
  };
  const guard = <T>(op: () => T): T => {
    try {
      return op();
    } catch (cause) {
      throw wrap(location, cause);
    }
  };
  const direct: SqlExecutor = {
    all: async <T extends object>(sql: string, params: SqlParams = []) => guard(() => prepare(sql).all(...params) as T[]),
    get: async <T extends object>(sql: string, params: SqlParams = []) => guard(() => prepare(sql).get(...params) as T | undefined),
    run: async (sql: string, params: SqlParams = []): Promise<SqlRunResult> => guard(() => ({ changes: prepare(sql).run(...params).changes })),
    exec: async (sql: string) => {
      if (closed) throw new CtxvmError('E_USAGE', `${location}: the database is closed`);
      guard(() => db.exec(sql));
    },
  };
  // Outside a transaction, wait for a running one to end first.
  const idle = async () => {
    while (conn.active) await conn.queue.catch(() => {});
  };

  return {
    dialect: 'sqlite',
    location,
    async all(sql, params) {
      await idle();
      return direct.all(sql, params);
    },
    async get(sql, params) {
      await idle();
      return direct.get(sql, params);
    },
    async run(sql, params) {
      await idle();
      return direct.run(sql, params);
    },
    async exec(sql) {
      await idle();
      return direct.exec(sql);
    },
    transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      // Chained behind earlier transactions of every handle, so only one runs at a time.
      const next = conn.queue.catch(() => {}).then(async () => {
        if (closed) throw new CtxvmError('E_USAGE', `${location}: the database is closed`);
        conn.active = true;
        try {
          // IMMEDIATE takes the write lock up front: no deadlock upgrading a read lock later.
          guard(() => db.exec('BEGIN IMMEDIATE'));
          try {
            const result = await fn(direct);
            guard(() => db.exec('COMMIT'));
            return result;
          } catch (error) {
            if (db.inTransaction) guard(() => db.exec('ROLLBACK'));
            throw error;
          }
        } finally {
          conn.active = false;
        }
      });
      conn.queue = next;
      return next;
    },
    async close() {
      if (closed) return;
      await conn.queue.catch(() => {});
      closed = true;
      guard(release);
    },
  };
}
