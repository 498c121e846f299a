/**
 * `UserMemoryStore.atomically`: one user's store bound to one warm transaction. The view is the
 * same store code over a database handle whose statements run on the transaction and whose
 * `transaction()` joins it, so every `write()` inside (context.ts) becomes part of the one
 * transaction: one COMMIT, all or nothing.
 */
import { UsageError } from '../../errors.js';
import type { SqlDatabase, SqlExecutor } from '../../store/warm/sql.js';
import type { UserMemoryStore } from '../memory-store.js';
import { transactionThen, type UserScope } from './context.js';

/** Runs `fn` with `make(scope)` bound to one transaction (see the module comment). */
export async function atomically<T>(scope: UserScope, make: (scope: UserScope) => UserMemoryStore, fn: (store: UserMemoryStore) => Promise<T>): Promise<T> {
  if (typeof fn !== 'function') throw new UsageError('atomically: expected a function');
  const { ctx } = scope;
  await ctx.ready();
  return transactionThen(ctx, async (tx, later) => {
    const unit = bindToTransaction(ctx.db, tx);
    // `outer`: buffered access statistics stay the store's (a delete inside flushes the user's
    // pending ones on this transaction, so none lands after the record's statistics go).
    // `afterCommit`: what the writes inside run once they are committed (context.ts): this unit's
    // own, or the enclosing unit's when this one only joins it.
    const afterCommit = ctx.afterCommit ?? later;
    const bound = make({ ...scope, ctx: { ...ctx, db: unit.db, outer: ctx.outer ?? ctx, afterCommit } });
    const result = await fn({ ...bound, touch: noAccessStats, touchMany: noAccessStats, accessStats: noAccessStats });
    unit.check();
    return result;
  });
}

/** A handle on one transaction for the writes of a unit, and the check that none of them failed. */
export interface BoundTransaction {
  db: SqlDatabase;
  /** Throws the first failure of a write inside, if any (the unit must then roll back). */
  check(): void;
}

/**
 * A database handle whose statements run on `tx` and whose transactions join it. A write inside
 * that throws may have done part of its work, and the transaction has no savepoint of its own to
 * undo it (PostgreSQL's per-statement savepoints would release one), so the failure decides for
 * the whole unit: later statements are refused and `check()` rethrows it, even when the caller
 * caught it — all or nothing.
 */
export function bindToTransaction(db: SqlDatabase, tx: SqlExecutor): BoundTransaction {
  let failed: { error: unknown } | undefined;
  const open = () => {
    if (failed) throw new UsageError('atomically: a write inside failed, so the whole unit rolls back; nothing more can run in it', { cause: failed.error });
  };
  const bound: SqlDatabase = {
    dialect: db.dialect,
    location: db.location,
    all: async (sql, params) => (open(), tx.all(sql, params)),
    get: async (sql, params) => (open(), tx.get(sql, params)),
    run: async (sql, params) => (open(), tx.run(sql, params)),
    exec: async (sql) => (open(), tx.exec(sql)),
    async transaction(fn) {
      open();
      try {
        return await fn(tx);
      } catch (error) {
        failed ??= { error };
        throw error;
      }
    },
    close: async () => {
      throw new UsageError('atomically: the database cannot be closed inside a transaction');
    },
  };
  return {
    db: bound,
    check() {
      if (failed) throw failed.error;
    },
  };
}

function noAccessStats(): never {
  throw new UsageError('atomically: access statistics (touch, touchMany, accessStats) are not part of an atomic write; call them on the store itself');
}
