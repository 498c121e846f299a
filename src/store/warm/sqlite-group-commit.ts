/**
 * Group commit for the SQLite driver: transactions asked for while another one runs are queued,
 * and the queue runs in ONE SQLite transaction, each `fn` under its own savepoint, so a failing
 * `fn` undoes only its own writes. One COMMIT then makes the whole group durable, and only then
 * does each transaction's promise resolve — an acknowledged write is as durable as before, but a
 * busy server pays one commit (WAL append, one new full-text segment) per group, not per write.
 *
 * Fairness: a group takes in transactions that arrive while it runs only up to `maxGroup`
 * transactions and `maxGroupMs` after it began, so a steady stream cannot keep readers (who wait
 * for a running group) out for long. If SQLite itself abandons the transaction (a failure that
 * rolls back everything, e.g. I/O), the transactions of the group that had succeeded so far run
 * again in a new group, as the `SqlDatabase.transaction` contract allows.
 */

/** The parts of a better-sqlite3 database the queue uses. */
export interface GroupCommitDatabase {
  readonly inTransaction: boolean;
  exec(sql: string): void;
}

/** Options of `createGroupCommit`. */
export interface GroupCommitOptions {
  db: GroupCommitDatabase;
  /** Maps a SQLite failure (BEGIN, SAVEPOINT, COMMIT) to the error the callers see. */
  wrap: (cause: unknown) => unknown;
  /** Most transactions in one group (default 64). */
  maxGroup?: number;
  /** A group takes in newcomers for at most this long after it began, ms (default 5). */
  maxGroupMs?: number;
}

/** A queue of transactions over one connection. */
export interface GroupCommit {
  /**
   * Runs `fn(executor)` in the next group; resolves with its result once the group commits.
   * `refusal` is checked when its turn comes: an error returned there rejects it unrun.
   */
  run<X, T>(fn: (tx: X) => Promise<T>, executor: X, refusal: () => unknown): Promise<T>;
  /** A group is running (calls outside a transaction must wait). */
  readonly active: boolean;
  /** Settles once nothing is queued or running (never rejects). */
  idle(): Promise<void>;
}

interface Pending {
  fn: (tx: unknown) => Promise<unknown>;
  executor: unknown;
  refusal: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

const SAVEPOINT = 'ctxvm_group_item';

/** Creates the transaction queue of one connection. */
export function createGroupCommit(options: GroupCommitOptions): GroupCommit {
  const { db, wrap } = options;
  const maxGroup = options.maxGroup ?? 64;
  const maxGroupMs = options.maxGroupMs ?? 5;
  const pending: Pending[] = [];
  let active = false;
  let draining: Promise<void> | undefined;

  async function runGroup(): Promise<void> {
    const items = pending.splice(0, maxGroup);
    const done: Array<{ item: Pending; value: unknown }> = [];
    const started = performance.now();
    let next = 0; // items before `next` have run (or were refused)
    let current: Pending | undefined; // ran, not yet released into the group
    active = true;
    try {
      // IMMEDIATE takes the write lock up front: no deadlock upgrading a read lock later.
      db.exec('BEGIN IMMEDIATE');
      for (;;) {
        if (next === items.length) {
          if (pending.length === 0 || items.length >= maxGroup || performance.now() - started >= maxGroupMs) break;
          items.push(...pending.splice(0, maxGroup - items.length));
        }
        const item = items[next]!;
        const refused = item.refusal();
        if (refused) {
          next++;
          item.reject(refused);
          continue;
        }
        db.exec(`SAVEPOINT ${SAVEPOINT}`);
        next++;
        let value: unknown;
        try {
          value = await item.fn(item.executor);
        } catch (error) {
          item.reject(error);
          if (db.inTransaction) {
            db.exec(`ROLLBACK TO ${SAVEPOINT}`);
            db.exec(`RELEASE ${SAVEPOINT}`);
            continue;
          }
          // SQLite rolled the whole transaction back: what succeeded so far, and what has not
          // run yet, goes first into the next group (each round drops the item that failed).
          pending.unshift(...done.map((d) => d.item), ...items.slice(next));
          return;
        }
        current = item;
        db.exec(`RELEASE ${SAVEPOINT}`);
        current = undefined;
        done.push({ item, value });
      }
      db.exec('COMMIT');
      for (const d of done) d.item.resolve(d.value);
    } catch (cause) {
      // BEGIN, SAVEPOINT, RELEASE or COMMIT failed: nothing of the group is committed, and every
      // transaction in it fails, as one would on its own.
      if (db.inTransaction) {
        try {
          db.exec('ROLLBACK');
        } catch {
          // the connection reports the rollback failure on its next statement
        }
      }
      const error = wrap(cause);
      current?.reject(error);
      for (const d of done) d.item.reject(error);
      for (const item of items.slice(next)) item.reject(error);
    } finally {
      active = false;
    }
  }

  function drain(): void {
    if (draining) return;
    // The loop awaits at least once, so `draining` is assigned before its `finally` runs.
    draining = (async () => {
      try {
        while (pending.length > 0) await runGroup();
      } finally {
        draining = undefined;
      }
    })();
  }

  return {
    run<X, T>(fn: (tx: X) => Promise<T>, executor: X, refusal: () => unknown): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        pending.push({ fn: fn as (tx: unknown) => Promise<unknown>, executor, refusal, resolve: resolve as (value: unknown) => void, reject });
        drain();
      });
    },
    get active() {
      return active;
    },
    async idle() {
      while (draining) await draining;
    },
  };
}
