/**
 * Document frequencies of FTS5 users' terms (as fulltext-sqlite.ts counts them: capped at the
 * postings budget plus one), kept per user while the user's documents are the ones they were
 * counted over: the same delete epoch (a delete bumps it, see the FTS5 layout's triggers) and the
 * same largest `doc_id` (an added or changed document takes a larger one, context.ts). Counting
 * a common term walks up to the budget's postings in every segment of the index, most of a
 * search's statements at 100k memories; the searches made between two writes of a user (the
 * questions refresh-ahead rebuilds after a write, previews, rebuilds of several questions)
 * count each term once. Belongs to one full-text dialect, that is one store.
 */

/** Where a user's documents stand: what the counts are valid for. */
export interface DocumentsState {
  /** The user's delete epoch (0 before any delete). */
  epoch: number;
  /** The user's largest `doc_id` (0 without documents). */
  maxDocId: number;
}

/** Users whose counts are kept (all forgotten when full). */
const MAX_USERS = 1000;
/** Terms kept per user (the user's counts forgotten when full). */
const MAX_TERMS = 4096;

export class TermFrequencyMemo {
  private readonly users = new Map<string, DocumentsState & { counts: Map<string, number> }>();

  /** The counts kept for `userId`'s documents as they stand now (`state`): emptied when they moved. */
  countsFor(userId: string, state: DocumentsState): Map<string, number> {
    let kept = this.users.get(userId);
    if (!kept || kept.epoch !== state.epoch || kept.maxDocId !== state.maxDocId) {
      if (!kept && this.users.size >= MAX_USERS) this.users.clear();
      kept = { ...state, counts: new Map() };
      this.users.set(userId, kept);
    }
    if (kept.counts.size >= MAX_TERMS) kept.counts.clear();
    return kept.counts;
  }
}
