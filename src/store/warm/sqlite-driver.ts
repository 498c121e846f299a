/**
 * SQLite behind the `SqliteDriver` seam, over better-sqlite3 (loaded on first connect, so
 * commands that never touch the warm store never load the native module). One connection per
 * database object, WAL mode so readers never block the writer, and a busy timeout so a second
 * ctxvm process waits for a lock instead of failing (a transaction waits for the write lock on
 * timers, so the thread goes on serving meanwhile; see `openGroup`).
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

/**
 * Page size of a database this driver creates, bytes. Every table and index takes at least one
 * page, and the warm schema has some sixty of them, most empty in a home that only keeps
 * snapshots: with SQLite's default 4 KiB the empty catalog alone outweighs a small session's
 * packs. An existing file keeps the page size it was created with (SQLite changes it only on a
 * VACUUM outside WAL mode); see docs/storage.md.
 */
export const NEW_DATABASE_PAGE_SIZE = 1024;

/** Options of `createBetterSqliteDriver`. */
export interface BetterSqliteDriverOptions {
  /** Database file; its folder is created. `:memory:` for a private in-memory database. */
  path: string;
  /** How long a statement waits for a lock held by another process, ms (default 5 000). */
  busyTimeoutMs?: number;
  /**
   * WAL pages after which a commit checkpoints (SQLite's `wal_autocheckpoint`, default 1 000).
   * A server writing all the time does better with more (fewer, larger checkpoints: a page
   * rewritten many times is copied once, and the fsyncs that block the thread are rarer).
   * Set by the first connection to a file in a process.
   */
  walAutocheckpointPages?: number;
}

// The parts of better-sqlite3 this driver uses (its types are a devDependency of the package).
interface BsStatement {
  readonly reader: boolean;
  all(...params: unknown[]): unknown[];
  get(...params: unknown[]): unknown;
  run(...params: unknown[]): { changes: number };
  raw(toggle?: boolean): BsStatement;
  columns(): Array<{ name: string }>;
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

/**
 * A prepared statement and, for a query, its column names. Queries run in better-sqlite3's raw
 * mode (each row an array) and their row objects are built here: about a third cheaper than the
 * binding's own row objects (measured 0.32 against 0.50 ms for 178 rows of 13 columns), and a
 * context rebuild reads several hundred rows.
 */
interface CachedStatement {
  stmt: BsStatement;
  /** Column names, in order; undefined when rows come from the binding as objects. */
  columns: string[] | undefined;
  /** Builds one row object from the values of `columns` (see `rowMaker`). */
  make: ((values: unknown[]) => object) | undefined;
}

/** Most transactions committed together, and longest a group stays open, ms (bounds the wait of its first one). */
const MAX_GROUP = 32;
const MAX_GROUP_MS = 5;
/** Longest pause between two attempts at the write lock while another process holds it, ms. */
const MAX_LOCK_PAUSE_MS = 8;

/** One underlying connection and its transaction queue, shared by the handles of a process. */
interface SharedConnection {
  db: BsDatabase;
  location: string;
  statements: Map<string, CachedStatement>;
  /** A transaction is running. */
  active: boolean;
  /** Tail of the transaction queue. */
  queue: Promise<unknown>;
  /** Transactions queued and not yet started. */
  waiting: number;
  /** The open group commit: how to settle its finished transactions once it commits or fails. */
  group: { done: Array<(error: unknown) => void>; startedMs: number } | undefined;
  /** Open handles. */
  handles: number;
  /** How long a statement waits for another process's lock, ms. */
  busyTimeoutMs: number;
}

const shared = new Map<string, SharedConnection>();

/** Creates the better-sqlite3 driver for one database file. */
export function createBetterSqliteDriver(options: BetterSqliteDriverOptions): SqliteDriver {
  const busyTimeoutMs = Math.max(0, Math.floor(options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS));
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
          // before WAL mode and the first table: the only moment these take effect. Incremental
          // auto-vacuum lets gc hand free pages back to the file system (see free-pages.ts).
          db.pragma(`page_size = ${NEW_DATABASE_PAGE_SIZE}`);
          db.pragma('auto_vacuum = INCREMENTAL');
          db.pragma('journal_mode = WAL');
          db.pragma(`busy_timeout = ${busyTimeoutMs}`);
          // WAL + NORMAL: a killed process loses nothing committed; a power cut may lose the last
          // transactions but never corrupts the file.
          db.pragma('synchronous = NORMAL');
          db.pragma('foreign_keys = ON');
          if (options.walAutocheckpointPages !== undefined) db.pragma(`wal_autocheckpoint = ${Math.max(0, Math.floor(options.walAutocheckpointPages))}`);
        } catch (cause) {
          throw wrap(location, cause);
        }
        conn = { db, location, statements: new Map(), active: false, queue: Promise.resolve(), waiting: 0, group: undefined, handles: 0, busyTimeoutMs };
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

function columnNames(stmt: BsStatement): string[] {
  return stmt.columns().map((c) => c.name);
}

/**
 * A function `values => ({ col1: values[0], … })` for one statement's columns. Generated, so each
 * statement stores its rows' properties through its own inline caches: one loop assigning
 * `row[name]` for every statement is megamorphic and took 1 µs a row. Names are quoted with
 * JSON.stringify (a valid JS string literal); a repeated name keeps its last value, as in
 * better-sqlite3's rows. Statements with a "__proto__" column keep the binding's rows.
 */
function rowMaker(columns: readonly string[]): (values: unknown[]) => object {
  // (A computed key never sets the prototype, should a re-prepared "SELECT *" bring "__proto__".)
  const key = (name: string) => (name === '__proto__' ? `[${JSON.stringify(name)}]` : JSON.stringify(name));
  const fields = columns.map((name, i) => `${key(name)}: values[${i}]`).join(', ');
  return new Function('values', `return { ${fields} };`) as (values: unknown[]) => object;
}

function handleFor(conn: SharedConnection, release: () => void): SqlDatabase {
  const { db, location } = conn;
  let closed = false;

  const prepare = (sql: string): CachedStatement => {
    if (closed) throw new CtxvmError('E_USAGE', `${location}: the database is closed`);
    let cached = conn.statements.get(sql);
    if (!cached) {
      const stmt = db.prepare(sql);
      const columns = stmt.reader ? columnNames(stmt) : undefined;
      // "__proto__" as a key in an object literal would set its prototype: leave such rows to the binding.
      const raw = columns !== undefined && !columns.includes('__proto__');
      if (raw) stmt.raw(true);
      cached = raw ? { stmt, columns, make: rowMaker(columns) } : { stmt, columns: undefined, make: undefined };
      conn.statements.set(sql, cached);
    }
    return cached;
  };
  const rowOf = (cached: CachedStatement, values: unknown[]): object => {
    // SQLite re-prepares a statement after a schema change ("SELECT *" may gain a column).
    if (values.length !== cached.columns!.length) {
      cached.columns = columnNames(cached.stmt);
      cached.make = rowMaker(cached.columns);
    }
    return cached.make!(values);
  };
  const guard = <T>(op: () => T): T => {
    try {
      return op();
    } catch (cause) {
      throw wrap(location, cause);
    }
  };
  const all = (sql: string, params: SqlParams): object[] => {
    const cached = prepare(sql);
    const rows = cached.stmt.all(...params);
    return cached.columns ? (rows as unknown[][]).map((values) => rowOf(cached, values)) : (rows as object[]);
  };
  const get = (sql: string, params: SqlParams): object | undefined => {
    const cached = prepare(sql);
    const row = cached.stmt.get(...params);
    return cached.columns && row !== undefined ? rowOf(cached, row as unknown[]) : (row as object | undefined);
  };
  const direct: SqlExecutor = {
    all: async <T extends object>(sql: string, params: SqlParams = []) => guard(() => all(sql, params) as T[]),
    get: async <T extends object>(sql: string, params: SqlParams = []) => guard(() => get(sql, params) as T | undefined),
    run: async (sql: string, params: SqlParams = []): Promise<SqlRunResult> => guard(() => ({ changes: prepare(sql).stmt.run(...params).changes })),
    exec: async (sql: string) => {
      if (closed) throw new CtxvmError('E_USAGE', `${location}: the database is closed`);
      guard(() => db.exec(sql));
    },
  };
  /** Commits the open group (if any) and settles its transactions. */
  const commitGroup = () => {
    const group = conn.group;
    if (!group) return;
    conn.group = undefined;
    try {
      guard(() => db.exec('COMMIT'));
    } catch (error) {
      rollback();
      for (const settle of group.done) settle(error);
      return;
    }
    for (const settle of group.done) settle(undefined);
  };
  const rollback = () => {
    try {
      if (db.inTransaction) db.exec('ROLLBACK');
    } catch {
      // nothing more to undo: the connection reports the failure on its next statement
    }
  };
  /**
   * Opens a new group: on the event loop's next check phase, `BEGIN IMMEDIATE` (the write lock
   * up front: no deadlock upgrading a read lock later). While another process holds the lock
   * (`--workers N`, a CLI command), the attempt is repeated on timers instead of in SQLite's busy
   * handler, which sleeps on the only thread: this process goes on serving reads and queueing
   * transactions (they join the group) meanwhile. Gives up with E_UNAVAILABLE after the busy timeout.
   */
  const openGroup = async (): Promise<void> => {
    await new Promise((ready) => setImmediate(ready));
    const deadline = performance.now() + conn.busyTimeoutMs;
    for (let pauseMs = 1; ; pauseMs = Math.min(pauseMs * 2, MAX_LOCK_PAUSE_MS)) {
      if (closed) return;
      if (tryBegin(performance.now() >= deadline)) break;
      await new Promise((ready) => setTimeout(ready, pauseMs));
    }
    conn.group = { done: [], startedMs: performance.now() };
  };
  /** `BEGIN IMMEDIATE` without waiting for the lock: false while another process holds it (an error once `late`). */
  const tryBegin = (late: boolean): boolean => {
    // Through the statement cache: `db.pragma` prepares its statement on every call (8 µs for the two).
    get('PRAGMA busy_timeout = 0', []);
    try {
      db.exec('BEGIN IMMEDIATE');
      return true;
    } catch (cause) {
      if (!late && (cause as { code?: string } | undefined)?.code === 'SQLITE_BUSY') return false;
      throw wrap(location, cause);
    } finally {
      get(`PRAGMA busy_timeout = ${conn.busyTimeoutMs}`, []);
    }
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
      // Chained behind earlier transactions of every handle, so only one runs at a time. Group
      // commit: while more transactions wait, each runs in a SAVEPOINT of one open transaction
      // and the last of the group commits for all; every promise settles only after that COMMIT,
      // so nothing is acknowledged before it is durable. One COMMIT per group instead of per
      // transaction (FTS5 still writes a segment per transaction: it flushes at every SAVEPOINT,
      // and only a savepoint lets a failing transaction undo itself alone). A group starts on the
      // event loop's next check phase (setImmediate, see `openGroup`), so the transactions of
      // every request read in one poll join it: better-sqlite3 being synchronous, a server's
      // requests otherwise never overlap and each commits alone (measured: 4,499 transactions,
      // 4,455 COMMITs under `npm run bench:http`; now ~15 a COMMIT).
      conn.waiting++;
      return new Promise<T>((resolve, reject) => {
        const next = conn.queue.catch(() => {}).then(async () => {
          const failedToOpen = conn.group ? undefined : await openGroup().then(() => undefined, (error: unknown) => ({ error }));
          conn.waiting--;
          conn.active = true;
          let keepOpen = false;
          try {
            if (failedToOpen) throw failedToOpen.error;
            if (closed) {
              reject(new CtxvmError('E_USAGE', `${location}: the database is closed`));
              // another handle's group may be waiting for this transaction: commit it now
              commitGroup();
              return;
            }
            const group = conn.group!;
            guard(() => db.exec('SAVEPOINT ctxvm_tx'));
            try {
              const result = await fn(direct);
              guard(() => db.exec('RELEASE ctxvm_tx'));
              group.done.push((error) => (error === undefined ? resolve(result) : reject(error)));
            } catch (error) {
              reject(error);
              if (db.inTransaction) {
                guard(() => db.exec('ROLLBACK TO ctxvm_tx'));
                guard(() => db.exec('RELEASE ctxvm_tx'));
              } else {
                // SQLite rolled the whole transaction back (disk full, I/O error): the group with it
                conn.group = undefined;
                for (const settle of group.done) settle(error);
                return;
              }
            }
            keepOpen = conn.waiting > 0 && group.done.length < MAX_GROUP && performance.now() - group.startedMs < MAX_GROUP_MS;
            if (!keepOpen) commitGroup();
          } catch (error) {
            // BEGIN or a savepoint statement failed
            const group = conn.group;
            conn.group = undefined;
            rollback();
            for (const settle of group?.done ?? []) settle(error);
            reject(error);
          } finally {
            // an open group keeps readers outside waiting until its COMMIT
            if (!keepOpen) conn.active = false;
          }
        });
        conn.queue = next;
      });
    },
    async close() {
      if (closed) return;
      await conn.queue.catch(() => {});
      closed = true;
      guard(release);
    },
  };
}
