/**
 * One run of a PostgreSQL transaction on one checked-out connection (postgres-driver.ts retries
 * runs). Every statement inside runs under a savepoint, so a failed one undoes only itself, as in
 * SQLite, and `fn` can catch a unique violation and go on (PostgreSQL would otherwise abort the
 * whole transaction): one extra round trip per statement. A serialization failure, deadlock or
 * lost connection instead dooms the run: it is rolled back whatever `fn` does with the error.
 *
 * A run can be *locked*: before BEGIN it takes a session-level advisory lock shared by every
 * locked run on the same schema (in any process), and gives it back after COMMIT/ROLLBACK. The
 * driver locks the runs of a transaction that already conflicted, so under contention writers
 * fall back to taking turns. The lock is taken before BEGIN on purpose: a SERIALIZABLE snapshot
 * starts at the first statement, and one taken while waiting would already be stale. Unlocked
 * runs take the same lock in shared mode for their transaction, which costs nothing until a
 * locked run waits: it then waits for them, later ones wait for it, and it cannot conflict.
 * (An unlocked run that waited has a stale snapshot and may conflict once; it then retries locked.)
 */
import type { PoolClient, QueryResult } from 'pg';
import { CtxvmError } from '../../errors.js';
import { connectError, isConnectionError, isRetryableTransactionError, statementError } from './pg-errors.js';
import type { SqlExecutor, SqlParams, SqlRow, SqlRunResult } from './sql.js';

const SAVEPOINT = 'ctxvm_stmt';
/** Key of the contention lock: 0x63747874 is "ctxt"; the second half is the schema. */
const LOCK_KEY = `${0x63747874}, hashtext(COALESCE(current_schema(), ''))`;

/** What a run needs from the driver. */
export interface RunContext {
  /** The database URL (errors redact it). */
  url: string;
  /** `SERIALIZABLE`, `REPEATABLE READ` or `READ COMMITTED`. */
  isolation: string;
  /** Rewrites `?` placeholders and checks the parameter count. */
  prepare(sql: string, params: SqlParams): { text: string; values: unknown[] };
}

/** How a run ended: a value, or a serialization failure / deadlock worth another run. */
export type RunOutcome<T> = { value: T } | { retry: CtxvmError };

interface TxState {
  /** COMMIT or ROLLBACK was sent: `tx` may no longer be used. */
  ended: boolean;
  /** A savepoint is open (released and re-opened before the next statement). */
  savepoint: boolean;
  /** Set when the run must roll back. */
  doomed: CtxvmError | undefined;
  /** Statements of one transaction run one at a time, in call order. */
  queue: Promise<unknown>;
}

/** The executor `fn` gets: the run's connection, each statement under a savepoint. */
function txExecutor(client: PoolClient, state: TxState, ctx: RunContext, location: string): SqlExecutor {
  const statement = (text: string, values?: unknown[]): Promise<QueryResult<SqlRow>> => {
    const next = state.queue.catch(() => {}).then(async () => {
      if (state.ended) throw new CtxvmError('E_USAGE', `${location}: the transaction has ended; use tx only inside its callback`);
      if (state.doomed) throw state.doomed;
      try {
        await client.query(state.savepoint ? `RELEASE SAVEPOINT ${SAVEPOINT}; SAVEPOINT ${SAVEPOINT}` : `SAVEPOINT ${SAVEPOINT}`);
        state.savepoint = true;
        return await (values ? client.query<SqlRow>({ text, values }) : client.query<SqlRow>(text));
      } catch (cause) {
        const error = statementError(ctx.url, cause);
        if (isRetryableTransactionError(cause) || isConnectionError(cause)) {
          state.doomed = error;
          throw error;
        }
        try {
          await client.query(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`);
        } catch (rollbackCause) {
          state.doomed = statementError(ctx.url, rollbackCause);
        }
        throw error;
      }
    });
    state.queue = next;
    return next;
  };
  const withParams = (sql: string, params: SqlParams = []) => {
    const { text, values } = ctx.prepare(sql, params);
    return statement(text, values);
  };
  return {
    all: async <T extends object>(sql: string, params?: SqlParams) => (await withParams(sql, params)).rows as unknown as T[],
    get: async <T extends object>(sql: string, params?: SqlParams) => (await withParams(sql, params)).rows[0] as unknown as T | undefined,
    run: async (sql: string, params?: SqlParams): Promise<SqlRunResult> => ({ changes: (await withParams(sql, params)).rowCount ?? 0 }),
    exec: async (sql: string) => void (await statement(sql)),
  };
}

/**
 * Runs `fn` once in a transaction on `client`, then releases the client (destroying it when the
 * connection failed). Errors of `fn` reach the caller unchanged; retryable failures come back
 * as `{ retry }`.
 */
export async function runTransaction<T>(client: PoolClient, fn: (tx: SqlExecutor) => Promise<T>, ctx: RunContext, location: string, locked: boolean): Promise<RunOutcome<T>> {
  // A connection error between statements is emitted on the client: record it, never crash.
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken ??= error;
  };
  client.on('error', onError);
  const state: TxState = { ended: false, savepoint: false, doomed: undefined, queue: Promise.resolve() };
  let holdsLock = false;
  try {
    try {
      if (locked) {
        await client.query(`SELECT pg_advisory_lock(${LOCK_KEY})`);
        holdsLock = true;
      }
      // An optimistic run holds the contention lock *shared* for its transaction (one round trip
      // with BEGIN), so a locked run waits for the optimistic ones in flight and new ones queue
      // behind it: a locked run then runs alone and cannot conflict again (no starvation).
      await client.query(locked ? `BEGIN ISOLATION LEVEL ${ctx.isolation}` : `BEGIN ISOLATION LEVEL ${ctx.isolation}; SELECT pg_advisory_xact_lock_shared(${LOCK_KEY})`);
    } catch (cause) {
      broken ??= cause as Error;
      throw isConnectionError(cause) ? connectError(ctx.url, cause) : statementError(ctx.url, cause);
    }
    try {
      const value = await fn(txExecutor(client, state, ctx, location));
      await state.queue.catch(() => {});
      if (state.doomed) throw state.doomed;
      state.ended = true;
      try {
        await client.query('COMMIT');
      } catch (cause) {
        // SERIALIZABLE may refuse the commit itself (40001): that run is retried like any other.
        state.doomed = statementError(ctx.url, cause);
        throw state.doomed;
      }
      return { value };
    } catch (error) {
      state.ended = true;
      await state.queue.catch(() => {});
      await client.query('ROLLBACK').catch((cause: Error) => {
        broken ??= cause;
      });
      if (state.doomed && isRetryableTransactionError(state.doomed)) return { retry: state.doomed };
      // fn's own errors (and the statement errors it let through) reach the caller unchanged.
      throw error;
    }
  } finally {
    state.ended = true;
    if (holdsLock && !broken) {
      await client.query(`SELECT pg_advisory_unlock(${LOCK_KEY})`).catch((cause: Error) => {
        broken ??= cause; // closing the connection releases the lock
      });
    }
    client.removeListener('error', onError);
    // Releasing with an error closes the connection instead of returning it to the pool.
    client.release(broken ?? (state.doomed && isConnectionError(state.doomed) ? state.doomed : undefined));
  }
}
