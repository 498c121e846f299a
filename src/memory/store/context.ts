/**
 * What every part of the SQL memory store shares: the database, the analyzer, the clock and the
 * full-text dialect, plus `write()`, the one way to change a user's memory. A write runs in one
 * transaction that also records history, keeps the search rows in step, and bumps the user's
 * version, so a reader never sees a change without its version bump or the other way round.
 */
import { createHash } from 'node:crypto';
import { UsageError } from '../../errors.js';
import type { SqlDatabase, SqlExecutor, SqlValue } from '../../store/warm/sql.js';
import type { SearchKind } from '../memory-store.js';
import type { MemoryKind } from '../model.js';
import type { FullTextDialect } from './fulltext.js';
import { num, type Row } from './rows.js';
import { indexTerms } from './terms.js';

/** Turns text into search tokens; used for both indexing and queries. */
export type Analyzer = ((text: string) => string[]) & { query?: (text: string) => string[] };

/** The store's shared parts. */
export interface StoreContext {
  readonly db: SqlDatabase;
  readonly analyzer: Analyzer;
  /** Clock, Unix ms. */
  readonly now: () => number;
  readonly fullText: FullTextDialect;
  /** Resolves once the full-text index exists (built on first use). */
  ready(): Promise<void>;
  /** The store's own context, when this one is bound to a transaction (`atomically`). */
  readonly outer?: StoreContext;
  /**
   * Set on a context bound to a transaction (`atomically`): runs `callback` once that
   * transaction has committed, never if it rolls back.
   */
  readonly afterCommit?: (callback: () => void) => void;
}

/** A user's records version before and after a committed write (equal when no record changed). */
export interface RecordsVersions {
  before: number;
  after: number;
}

/** One user's door into the shared parts. */
export interface UserScope {
  readonly ctx: StoreContext;
  readonly userId: string;
  /** Index key of the user (see `userKeyOf`). */
  readonly userKey: string;
  /** Time stamped on writes through this scope, Unix ms (default: `ctx.now()` at each write). */
  readonly atMs?: number;
}

/** Throws a UsageError unless `userId` is a non-empty string without NUL (PostgreSQL text cannot hold one). */
export function assertUserId(userId: unknown): asserts userId is string {
  if (typeof userId !== 'string' || userId.length === 0 || userId.includes('\u0000')) {
    throw new UsageError(`invalid userId ${userId === undefined ? 'undefined' : JSON.stringify(userId) ?? String(userId)}: expected a non-empty string without NUL characters`, {
      hint: 'every memory operation belongs to one user; pass --user or userId',
    });
  }
}

const userKeys = new Map<string, string>();

/** The full-text key of a user: one index term, whatever characters the user id has. */
export function userKeyOf(userId: string): string {
  // every `forUser` asks (about ten times a message): remembered for the users seen lately
  let key = userKeys.get(userId);
  if (key === undefined) {
    key = `u${createHash('sha256').update(userId, 'utf8').digest('hex').slice(0, 24)}`;
    if (userKeys.size >= 10_000) userKeys.clear();
    userKeys.set(userId, key);
  }
  return key;
}

/** A write in progress: a transaction bound to one user. */
export interface WriteScope {
  readonly tx: SqlExecutor;
  readonly userId: string;
  /** The time of this write, Unix ms (one reading of the clock per write). */
  readonly atMs: number;
  /** The next creation ordinal of this user (orders records created in the same millisecond). */
  nextSeq(): number;
  /** Records that something changed, so the version is bumped on commit. */
  changed(): void;
  /** Appends one history entry and marks the write as a change. */
  history(kind: MemoryKind, recordId: string, field: string, oldValue: unknown, newValue: unknown, turnId: string | null | undefined): Promise<void>;
  /**
   * Sets the searchable text of a record (replacing any earlier text). `tokens`, when given, is
   * `indexTerms(analyzer, text)` computed before the transaction (keeps the lock short).
   */
  index(kind: SearchKind, recordId: string, text: string, tokens?: string): Promise<void>;
  /** Removes a record from search. */
  unindex(kind: SearchKind, recordId: string): Promise<void>;
  /**
   * Runs `callback` once this write has committed (with the enclosing unit, in `atomically`),
   * with the user's records versions before and after it: what the store remembers of its own
   * writes (open-tasks.ts) can follow them instead of being read again.
   */
  afterCommit(callback: (records: RecordsVersions) => void): void;
}

const json = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

/**
 * Runs `fn` in one transaction of `ctx.db`, then the callbacks it handed to `later`, once that
 * transaction has committed: at once, or, when `ctx` is bound to a unit (`atomically`) whose
 * transaction this one only joined, when the unit commits. Only the attempt that commits counts
 * (PostgreSQL may run `fn` again after a serialization failure); on a rollback none runs.
 */
export async function transactionThen<T>(ctx: StoreContext, fn: (tx: SqlExecutor, later: (callback: () => void) => void) => Promise<T>): Promise<T> {
  let committed: ReadonlyArray<() => void> | undefined;
  const result = await ctx.db.transaction(async (tx) => {
    const callbacks: Array<() => void> = [];
    const result = await fn(tx, (callback) => void callbacks.push(callback));
    committed = callbacks;
    return result;
  });
  const callbacks = committed;
  if (callbacks && callbacks.length > 0) {
    const run = () => {
      for (const callback of callbacks) callback();
    };
    if (ctx.afterCommit) ctx.afterCommit(run);
    else run();
  }
  return result;
}

/**
 * Runs `fn` in one transaction for `scope`'s user and bumps the user's version when `fn` marked
 * a change (directly or through `history`/`index`).
 */
export async function write<T>(scope: UserScope, fn: (w: WriteScope) => Promise<T>): Promise<T> {
  const { ctx, userId, userKey } = scope;
  await ctx.ready();
  const atMs = scope.atMs ?? ctx.now();
  return transactionThen(ctx, async (tx, later) => {
    // This attempt's versions, known once `fn` is done (callbacks run only after the commit).
    let records: RecordsVersions | undefined;
    const row = await tx.get<Row>('SELECT version, next_seq, records_version FROM memory_versions WHERE user_id = ?', [userId]);
    const version = num(row?.version);
    const recordsVersion = num(row?.records_version);
    let seq = row ? num(row.next_seq) : 1;
    let dirty = false;
    // Whether a memory record changed (anything but appended turns): bumps records_version too.
    let recordsDirty = false;
    const w: WriteScope = {
      tx,
      userId,
      atMs,
      nextSeq: () => seq++,
      changed: () => void (dirty = recordsDirty = true),
      async history(kind, recordId, field, oldValue, newValue, turnId) {
        dirty = recordsDirty = true;
        await tx.run(
          `INSERT INTO memory_history (seq, user_id, kind, record_id, field, old_value, new_value, turn_id, at_ms)
           VALUES ((SELECT COALESCE(MAX(seq), 0) + 1 FROM memory_history), ?, ?, ?, ?, ?, ?, ?, ?)`,
          [userId, kind, recordId, field, json(oldValue), json(newValue), turnId ?? null, atMs],
        );
      },
      async index(kind, recordId, text, tokens) {
        // A changed document takes a new doc_id too, above every committed one: that is how
        // SQLite's resident indexes find it (fulltext-resident-sync.ts).
        dirty = true;
        if (kind !== 'turn') recordsDirty = true;
        await tx.run(
          `INSERT INTO memory_search (doc_id, user_id, user_key, kind, record_id, tokens)
           VALUES ((SELECT COALESCE(MAX(doc_id), 0) + 1 FROM memory_search), ?, ?, ?, ?, ?)
           ON CONFLICT (user_id, kind, record_id) DO UPDATE SET tokens = excluded.tokens, doc_id = excluded.doc_id`,
          [userId, userKey, kind, recordId, tokens ?? indexTerms(ctx.analyzer, text)],
        );
      },
      async unindex(kind, recordId) {
        dirty = true;
        if (kind !== 'turn') recordsDirty = true;
        await tx.run('DELETE FROM memory_search WHERE user_id = ? AND kind = ? AND record_id = ?', [userId, kind, recordId]);
      },
      afterCommit: (callback) => later(() => callback(records!)),
    };
    const result = await fn(w);
    if (dirty) {
      const values: SqlValue[] = [userId, version + 1, seq, recordsDirty ? recordsVersion + 1 : recordsVersion];
      await tx.run(
        `INSERT INTO memory_versions (user_id, version, next_seq, records_version) VALUES (?, ?, ?, ?)
         ON CONFLICT (user_id) DO UPDATE SET version = excluded.version, next_seq = excluded.next_seq, records_version = excluded.records_version`,
        values,
      );
    }
    records = { before: recordsVersion, after: dirty && recordsDirty ? recordsVersion + 1 : recordsVersion };
    return result;
  });
}
