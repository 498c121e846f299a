/**
 * `UserMemoryStore.atomically`: one user's store bound to one warm transaction. The view is the
 * same store code over a database handle whose statements run on the transaction and whose
 * `transaction()` joins it, so every `write()` inside (context.ts) becomes part of the one
 * transaction: one COMMIT, all or nothing.
 */
import { UsageError } from '../../errors.js';
import type { SqlDatabase, SqlExecutor } from '../../store/warm/sql.js';
import type { UserMemoryStore } from '../memory-store.js';
import type { UserScope } from './context.js';

/** Runs `fn` with `make(scope)` bound to one transaction (see the module comment). */
export async function atomically<T>(scope: UserScope, make: (scope: UserScope) => UserMemoryStore, fn: (store: UserMemoryStore) => Promise<T>): Promise<T> {
  if (typeof fn !== 'function') throw new UsageError('atomically: expected a function');
  const { ctx } = scope;
  await ctx.ready();
  return ctx.db.transaction((tx) => {
    // `outer`: buffered access statistics stay the store's (a delete inside flushes the user's
    // pending ones on this transaction, so none lands after the record's statistics go).
    const bound = make({ ...scope, ctx: { ...ctx, db: boundTo(ctx.db, tx), outer: ctx.outer ?? ctx } });
    return fn({ ...bound, touch: noAccessStats, touchMany: noAccessStats, accessStats: noAccessStats });
  });
}

/** A database handle whose statements run on `tx` and whose transactions join it. */
function boundTo(db: SqlDatabase, tx: SqlExecutor): SqlDatabase {
  const bound: SqlDatabase = {
    dialect: db.dialect,
    location: db.location,
    all: (sql, params) => tx.all(sql, params),
    get: (sql, params) => tx.get(sql, params),
    run: (sql, params) => tx.run(sql, params),
    exec: (sql) => tx.exec(sql),
    transaction: (fn) => fn(tx),
    close: async () => {
      throw new UsageError('atomically: the database cannot be closed inside a transaction');
    },
  };
  return bound;
}

function noAccessStats(): never {
  throw new UsageError('atomically: access statistics (touch, touchMany, accessStats) are not part of an atomic write; call them on the store itself');
}
