/**
 * The resident indexes of one store (fulltext-resident.ts), kept in step with `memory_search`
 * whoever writes it — this process, another store handle, another process.
 *
 * - New and changed documents: a document's `doc_id` is the table's largest plus one when it is
 *   written, and again when its terms change (context.ts), and SQLite commits one writer at a
 *   time, so every row committed after an index last read the table has a larger `doc_id` than
 *   any it holds. Catching up is one walk of the (user_id, doc_id) index from the largest it holds.
 * - Deleted documents: a trigger bumps the user's epoch in `memory_search_epochs` (fulltext-sqlite.ts);
 *   an index loaded at another epoch is read again whole. Deletes are rare (a task deleted).
 * - BM25's statistics over all users (`memory_search_stats`) are read with the epoch.
 * - Memory is bounded: a user with more than `maxUserDocs` documents is left to FTS5 (returns
 *   undefined), and past `maxPostings` postings in all the least recently searched users' indexes
 *   are dropped (read again when next searched).
 * - Only committed rows enter the shared indexes: a search inside a transaction, which may see its
 *   own uncommitted writes, gets an index of its own, read whole and thrown away.
 */
import type { SqlExecutor } from '../../store/warm/sql.js';
import { ResidentTextIndex } from './fulltext-resident.js';
import { num, str, type Row } from './rows.js';

/** Limits of the resident indexes. */
export interface ResidentLimits {
  /** A user with more documents is searched through FTS5 (default `DEFAULT_RESIDENT_USER_DOCS`). */
  maxUserDocs?: number;
  /** Postings held in all users' indexes before the least recently searched are dropped (default `DEFAULT_RESIDENT_POSTINGS`). */
  maxPostings?: number;
}

/** Documents of one user an index holds at most (~10 terms each: ~100k postings, ~12 MB). */
export const DEFAULT_RESIDENT_USER_DOCS = 10_000;
/**
 * Postings held across users: ~120 bytes each with their share of the maps and documents
 * (measured: 2.4M postings of 100 users, 284 MB), so ~60 MB at most. A user dropped past it
 * costs one read of their rows when next searched — about what an FTS5 query costs.
 */
export const DEFAULT_RESIDENT_POSTINGS = 500_000;
/** Rows read per catch-up statement. */
const CATCH_UP_ROWS = 2_000;

/** The resident indexes of a store. */
export class ResidentIndexes {
  private readonly maxUserDocs: number;
  private readonly maxPostings: number;
  /** Least recently searched first. */
  private readonly users = new Map<string, ResidentTextIndex>();
  /** Postings held in `users`. */
  private total = 0;
  /** Users found over `maxUserDocs` in this process: FTS5's from then on. */
  private readonly large = new Set<string>();
  /** A catch-up running per user: the next waits for it (two would apply the same rows). */
  private readonly running = new Map<string, Promise<unknown>>();

  constructor(limits: ResidentLimits = {}) {
    this.maxUserDocs = limits.maxUserDocs ?? DEFAULT_RESIDENT_USER_DOCS;
    this.maxPostings = limits.maxPostings ?? DEFAULT_RESIDENT_POSTINGS;
  }

  /** Whether `userId` is known to be FTS5's (no statement). */
  isLarge(userId: string): boolean {
    return this.large.has(userId) || this.maxUserDocs <= 0;
  }

  /**
   * `userId`'s index, caught up with what `ex` sees; undefined when the user has too many
   * documents to hold (search FTS5 instead). `inTransaction`: `ex` is a transaction, whose
   * uncommitted rows must not enter the shared index.
   */
  async indexOf(ex: SqlExecutor, userId: string, inTransaction: boolean): Promise<ResidentTextIndex | undefined> {
    if (this.isLarge(userId)) return undefined;
    if (inTransaction) {
      const own = new ResidentTextIndex();
      return (await this.catchUp(ex, userId, own)) ? own : undefined;
    }
    const before = this.running.get(userId);
    const run = (before ?? Promise.resolve()).catch(() => undefined).then(() => this.syncShared(ex, userId));
    this.running.set(userId, run);
    try {
      return await run;
    } finally {
      if (this.running.get(userId) === run) this.running.delete(userId);
    }
  }

  private async syncShared(ex: SqlExecutor, userId: string): Promise<ResidentTextIndex | undefined> {
    let index = this.users.get(userId);
    if (index) this.users.delete(userId); // re-inserted below: most recently searched last
    index ??= new ResidentTextIndex();
    const held = index.postingCount;
    const fits = await this.catchUp(ex, userId, index).catch((error: unknown) => {
      this.total -= held;
      throw error;
    });
    this.total += index.postingCount - held;
    if (!fits) {
      this.total -= index.postingCount;
      this.large.add(userId);
      return undefined;
    }
    this.users.set(userId, index);
    this.evict(userId);
    return index;
  }

  /** Drops the least recently searched indexes (never `keep`) while over the postings budget. */
  private evict(keep: string): void {
    for (const [userId, index] of this.users) {
      if (this.total <= this.maxPostings) break;
      if (userId === keep) continue;
      this.users.delete(userId);
      this.total -= index.postingCount;
    }
  }

  /**
   * Brings `index` up to what `ex` sees: read again whole if a delete bumped the epoch, else the
   * rows above its largest `doc_id`. False when the user holds more than `maxUserDocs` documents.
   */
  private async catchUp(ex: SqlExecutor, userId: string, index: ResidentTextIndex): Promise<boolean> {
    const head = await ex.get<Row>('SELECT s.docs, s.terms, (SELECT epoch FROM memory_search_epochs WHERE user_id = ?) AS epoch FROM memory_search_stats s', [userId]);
    const epoch = head?.epoch == null ? 0 : num(head.epoch);
    if (epoch !== index.epoch) index.reset(epoch);
    index.table = { docs: num(head?.docs ?? 0), terms: num(head?.terms ?? 0) };
    for (;;) {
      const rows = await ex.all<Row>(
        `SELECT doc_id, kind, record_id, tokens FROM memory_search WHERE user_id = ? AND doc_id > ? ORDER BY doc_id LIMIT ${CATCH_UP_ROWS}`,
        [userId, index.maxDocId],
      );
      for (const r of rows) index.apply({ docId: num(r.doc_id), kind: str(r.kind), recordId: str(r.record_id), tokens: str(r.tokens) });
      if (index.size > this.maxUserDocs) return false;
      if (rows.length < CATCH_UP_ROWS) return true;
    }
  }
}
