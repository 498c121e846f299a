/**
 * PostgreSQL behind the warm store's async SQL seam, over node-postgres (`pg`, imported inside
 * `connect()`, so `import('ctxvm')` and SQLite users never load it).
 *
 * - Connections come from one `pg.Pool` per database object. Statements outside a transaction
 *   take any pooled connection; a transaction holds one connection from BEGIN to COMMIT.
 * - Placeholders: the seam's `?` become `$1 … $n` (pg-placeholders.ts; literals, quoted
 *   identifiers, dollar quotes and comments are skipped).
 * - Transactions run at SERIALIZABLE by default. SQLite (BEGIN IMMEDIATE, one writer) gives the
 *   catalogs and the memory store full serializability, and they rely on it for check-then-write
 *   steps (a name unused across two tables, read version → write version + 1); SERIALIZABLE
 *   keeps that true with concurrent writers. The price is that PostgreSQL may abort a
 *   transaction with a serialization failure (40001) or deadlock (40P01): the driver then rolls
 *   back and runs `fn` again, up to `maxTransactionAttempts` times with jittered backoff, so `fn`
 *   must have no effects outside `tx`. Conflicts are kept rare: one database object runs one
 *   transaction at a time (`maxConcurrentTransactions`, as the SQLite driver does), and a
 *   transaction that conflicted once retries under a per-schema advisory lock that every such
 *   retry takes (`lockAfterConflicts`), so under contention writers from all processes take turns.
 * - Inside a transaction every statement runs under a savepoint (pg-transaction.ts): a failed
 *   statement undoes only itself, as in SQLite. One extra round trip per statement.
 * - BIGINT / NUMERIC come back as numbers when safe (pg-types.ts), via the pool's own `types`.
 */
import type { Pool, PoolClient, PoolConfig, QueryResult } from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { CtxvmError } from '../../errors.js';
import { connectError, redactPostgresUrl, statementError } from './pg-errors.js';
import { translatePlaceholders } from './pg-placeholders.js';
import { createSlots } from './pg-slots.js';
import { runTransaction, type RunContext, type RunOutcome } from './pg-transaction.js';
import { warmTypes } from './pg-types.js';
import type { SqlDatabase, SqlExecutor, SqlParams, SqlRow, SqlRunResult } from './sql.js';

/** Isolation level of `transaction()`. */
export type PostgresIsolation = 'serializable' | 'repeatable read' | 'read committed';

/** Options of `createPostgresDriver`. */
export interface PostgresDriverOptions {
  /** `postgres://` or `postgresql://` URL, credentials and database included. */
  url: string;
  /** Most connections the pool keeps open (default 10). */
  poolSize?: number;
  /** Schemas for unqualified names, in order, set on every connection (default: the server's `search_path`). Names are used exactly (quoted). */
  searchPath?: string | readonly string[];
  /** Give up opening a connection, or waiting for a free pooled one, after this many ms (default 10 000). */
  connectTimeoutMs?: number;
  /** Close a pooled connection idle for this many ms (default 30 000). */
  idleTimeoutMs?: number;
  /** Isolation of `transaction()` (default `serializable`, see the module comment). */
  isolation?: PostgresIsolation;
  /** Runs of a transaction that keeps hitting serialization failures or deadlocks, first included (default 5). */
  maxTransactionAttempts?: number;
  /**
   * Transactions of this database object that run at once; more wait their turn (default 1).
   * One per process is what the SQLite driver does, and it means this process's writers never
   * make each other retry; only other processes can. Statements outside transactions always use
   * the whole pool.
   */
  maxConcurrentTransactions?: number;
  /**
   * Runs of a transaction made without the contention lock; later runs (after that many
   * serialization failures or deadlocks) take a per-schema advisory lock first, so conflicting
   * writers of every process take turns (default 1; 0 = always lock, i.e. one writer per schema).
   */
  lockAfterConflicts?: number;
  /**
   * Server settings for every connection, e.g. `{ statement_timeout: '30s' }`, or
   * `{ synchronous_commit: 'off' }` where losing the last commits in a crash is acceptable (tests).
   * Names are lower-case letters, digits, `_` and `.`; values must not contain whitespace or `\`.
   */
  settings?: Readonly<Record<string, string | number>>;
  /** `application_name` shown in `pg_stat_activity` (default `ctxvm`). */
  applicationName?: string;
  /** Told about errors of idle pooled connections (server restart, network); the pool replaces them (default: ignored). */
  onIdleError?: (error: CtxvmError) => void;
}

/** Opens pooled connections to one PostgreSQL database. */
export interface PostgresDriver {
  /** Binding name: "pg". */
  readonly name: 'pg';
  /** Checks the URL, opens the pool and one connection to prove the server answers. */
  connect(): Promise<SqlDatabase>;
}

/** Defaults of `PostgresDriverOptions`. */
export const POSTGRES_DEFAULTS = {
  poolSize: 10,
  connectTimeoutMs: 10_000,
  idleTimeoutMs: 30_000,
  isolation: 'serializable',
  maxTransactionAttempts: 5,
  maxConcurrentTransactions: 1,
  lockAfterConflicts: 1,
} as const;

type PgModule = typeof import('pg');

async function loadPg(): Promise<PgModule> {
  try {
    const m = (await import('pg')) as PgModule & { default?: PgModule };
    return m.default ?? m;
  } catch (cause) {
    throw new CtxvmError('E_UNSUPPORTED', 'the PostgreSQL warm store needs the "pg" package', { cause, hint: 'npm install pg, or point CTXVM_DB at a SQLite file' });
  }
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]*$/;

/** Checks the options and turns them into pg's pool configuration (without `types`). */
function poolConfig(options: PostgresDriverOptions): PoolConfig {
  const location = redactPostgresUrl(options.url);
  let parsed: URL;
  try {
    parsed = new URL(options.url);
    decodeURIComponent(parsed.username);
    decodeURIComponent(parsed.password);
  } catch (cause) {
    throw new CtxvmError('E_USAGE', `${location}: not a valid PostgreSQL URL`, { cause, hint: 'expected postgres://user:password@host:5432/database' });
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new CtxvmError('E_USAGE', `${location}: not a PostgreSQL URL`, { hint: 'expected postgres://user:password@host:5432/database' });
  }
  const schemas = options.searchPath === undefined ? [] : typeof options.searchPath === 'string' ? [options.searchPath] : [...options.searchPath];
  for (const s of schemas) {
    if (!IDENTIFIER.test(s)) throw new CtxvmError('E_USAGE', `search path "${s}": schema names are letters, digits, _ and $, not starting with a digit`);
  }
  // Startup options are split at whitespace, so names and values are restricted rather than escaped.
  const settings = Object.entries(options.settings ?? {}).map(([name, value]) => {
    if (!/^[a-z_][a-z0-9_.]*$/.test(name) || /[\s\\]/.test(String(value)) || String(value) === '') {
      throw new CtxvmError('E_USAGE', `PostgreSQL setting ${name}=${String(value)}: expected a lower-case name and a value without spaces or backslashes`);
    }
    return `-c ${name}=${String(value)}`;
  });
  if (schemas.length) settings.unshift(`-c search_path=${schemas.map((s) => `"${s}"`).join(',')}`);
  const poolSize = options.poolSize ?? POSTGRES_DEFAULTS.poolSize;
  if (!Number.isSafeInteger(poolSize) || poolSize < 1) throw new CtxvmError('E_USAGE', `poolSize ${poolSize}: expected a positive integer`);
  return {
    connectionString: options.url,
    max: poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs ?? POSTGRES_DEFAULTS.connectTimeoutMs,
    idleTimeoutMillis: options.idleTimeoutMs ?? POSTGRES_DEFAULTS.idleTimeoutMs,
    application_name: options.applicationName ?? 'ctxvm',
    // Startup parameters, so every pooled connection has them before its first statement.
    ...(settings.length ? { options: settings.join(' ') } : {}),
  };
}

/** Creates the PostgreSQL driver for one database URL. */
export function createPostgresDriver(options: PostgresDriverOptions): PostgresDriver {
  return {
    name: 'pg',
    async connect() {
      const config = poolConfig(options);
      const pg = await loadPg();
      const pool = new pg.Pool({ ...config, types: warmTypes(pg.types.getTypeParser as (oid: number, format?: string) => unknown) as PoolConfig['types'] });
      // Without a listener an idle connection's error (server restart) would crash the process.
      pool.on('error', (error) => options.onIdleError?.(connectError(options.url, error)));
      try {
        const client = await pool.connect();
        client.release();
      } catch (cause) {
        await pool.end().catch(() => {});
        throw connectError(options.url, cause);
      }
      return postgresDatabase(pool, options);
    },
  };
}

function postgresDatabase(pool: Pool, options: PostgresDriverOptions): SqlDatabase {
  const url = options.url;
  const location = redactPostgresUrl(url);
  const isolation = (options.isolation ?? POSTGRES_DEFAULTS.isolation).toUpperCase();
  const maxAttempts = Math.max(1, options.maxTransactionAttempts ?? POSTGRES_DEFAULTS.maxTransactionAttempts);
  const slots = createSlots(options.maxConcurrentTransactions ?? POSTGRES_DEFAULTS.maxConcurrentTransactions);
  const lockAfter = Math.max(0, options.lockAfterConflicts ?? POSTGRES_DEFAULTS.lockAfterConflicts);
  let closing: Promise<void> | undefined;

  const assertOpen = () => {
    if (closing) throw new CtxvmError('E_USAGE', `${location}: the database is closed`);
  };
  const prepare = (sql: string, params: SqlParams): { text: string; values: unknown[] } => {
    const { text, count } = translatePlaceholders(sql);
    if (count !== params.length) {
      throw new CtxvmError('E_USAGE', `${location}: the statement has ${count} placeholder(s) but ${params.length} parameter(s) were given: ${sql.slice(0, 200)}`);
    }
    return { text, values: [...params] };
  };
  /** Runs a parameterised statement on the pool (any free connection). */
  const onPool = async (sql: string, params: SqlParams = []): Promise<QueryResult<SqlRow>> => {
    assertOpen();
    const { text, values } = prepare(sql, params);
    try {
      return await pool.query<SqlRow>({ text, values });
    } catch (cause) {
      throw statementError(url, cause);
    }
  };

  const direct: SqlExecutor = {
    all: async <T extends object>(sql: string, params?: SqlParams) => (await onPool(sql, params)).rows as unknown as T[],
    get: async <T extends object>(sql: string, params?: SqlParams) => (await onPool(sql, params)).rows[0] as unknown as T | undefined,
    run: async (sql: string, params?: SqlParams): Promise<SqlRunResult> => ({ changes: (await onPool(sql, params)).rowCount ?? 0 }),
    async exec(sql: string) {
      assertOpen();
      try {
        // No parameters: the simple query protocol, which runs a multi-statement script as one implicit transaction.
        await pool.query(sql);
      } catch (cause) {
        throw statementError(url, cause);
      }
    },
  };

  const runContext: RunContext = { url, isolation, prepare };

  return {
    dialect: 'postgres',
    location,
    ...direct,
    async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      for (let run = 1; ; run++) {
        assertOpen();
        const release = await slots.acquire();
        let outcome: RunOutcome<T>;
        try {
          assertOpen();
          let client: PoolClient;
          try {
            client = await pool.connect();
          } catch (cause) {
            throw connectError(url, cause);
          }
          outcome = await runTransaction(client, fn, runContext, location, run > lockAfter);
        } finally {
          release();
        }
        if ('value' in outcome) return outcome.value;
        if (run >= maxAttempts) {
          const detail = (outcome.retry.cause as Error | undefined)?.message ?? outcome.retry.message;
          throw new CtxvmError('E_UNAVAILABLE', `${location}: the transaction kept conflicting with concurrent ones (${run} attempts): ${detail}`, {
            cause: outcome.retry,
            hint: 'other ctxvm processes are changing the same rows; retry',
          });
        }
        // Jittered exponential backoff, 10 ms doubling up to 500 ms, so colliding runs spread
        // out; the slot is given back meanwhile.
        const capMs = Math.min(500, 10 * 2 ** (run - 1));
        await sleep(capMs / 2 + Math.random() * (capMs / 2));
      }
    },
    close() {
      closing ??= pool.end().catch(() => {});
      return closing;
    },
  };
}
