/**
 * One user's full-text index held in process memory: the documents of `memory_search` (their
 * analyzer terms, split on the single spaces that join them) with postings per term, ranked by
 * the same BM25 as SQLite's FTS5 `bm25()` (k1 = 1.2, b = 0.75, IDF floored at 1e-6) with the
 * statistics FTS5 used when it held every user's documents: N and the average length over the
 * whole table (`table`), document frequencies the user's own (FTS5's terms are keyed per user).
 *
 * It answers a `searchMany` as the FTS5 path of fulltext-sqlite.ts does — the same choice of
 * terms within the postings budget, the same newest-documents fallback when every term is
 * common, the same order of ties (older document first) — without a statement: a search costs
 * a few microseconds per posting of its terms instead of several B-tree lookups per term in every
 * segment of the FTS5 index, and indexing costs no segment write. fulltext-resident-sync.ts keeps
 * it in step with the table.
 */
import type { SearchHit, SearchKind } from '../memory-store.js';
import { newestHitsByPass } from './fulltext-newest.js';
import { splitByKinds, unionKinds } from './fulltext-split.js';
import type { FullTextQuery } from './fulltext.js';
import { chooseTerms, fts5Quote } from './fulltext-terms.js';
import type { Row } from './rows.js';

const K1 = 1.2;
const B = 0.75;
const MIN_IDF = 1e-6;

interface ResidentDoc {
  kind: SearchKind;
  recordId: string;
  /** Terms in the document, duplicates counted (BM25's document length). */
  length: number;
  /** Distinct terms, to take the document out of their postings. */
  terms: string[];
}

/** One row of `memory_search`, as the sync reads it. */
export interface SearchRow {
  docId: number;
  kind: string;
  recordId: string;
  tokens: string;
}

/** A user's documents and postings. */
export class ResidentTextIndex {
  /** Highest `doc_id` applied: rows above it are what the table holds and this does not. */
  maxDocId = 0;
  /** The user's delete epoch this index was loaded at (see fulltext-resident-sync.ts). */
  epoch = 0;
  /** Postings held, all terms (the memory this index costs). */
  postingCount = 0;
  /** Documents and terms of every user in `memory_search`, as last read (BM25's N and average length). */
  table = { docs: 0, terms: 0 };
  private readonly docs = new Map<number, ResidentDoc>();
  private readonly byRecord = new Map<string, number>();
  /** term → doc_id → term frequency; each inner map in ascending doc_id order (docs are added so). */
  private readonly postings = new Map<string, Map<number, number>>();

  /** Empties the index, to be read again whole at `epoch`. */
  reset(epoch: number): void {
    this.docs.clear();
    this.byRecord.clear();
    this.postings.clear();
    this.postingCount = 0;
    this.maxDocId = 0;
    this.epoch = epoch;
  }

  get size(): number {
    return this.docs.size;
  }

  /** Adds a row read from the table; a newer row of a record replaces its older one. */
  apply(row: SearchRow): void {
    if (row.docId <= this.maxDocId) return; // already applied (by a catch-up that raced this one)
    this.maxDocId = row.docId;
    const key = `${row.kind}\u0000${row.recordId}`;
    const old = this.byRecord.get(key);
    if (old !== undefined) this.remove(old);
    const frequencies = new Map<string, number>();
    let length = 0;
    for (const term of row.tokens.split(' ')) {
      if (term.length === 0) continue; // '' (no terms) or a stray double space: no term, as in FTS5
      frequencies.set(term, (frequencies.get(term) ?? 0) + 1);
      length++;
    }
    for (const [term, tf] of frequencies) {
      let list = this.postings.get(term);
      if (list === undefined) this.postings.set(term, (list = new Map()));
      list.set(row.docId, tf);
    }
    this.postingCount += frequencies.size;
    this.docs.set(row.docId, { kind: row.kind as SearchKind, recordId: row.recordId, length, terms: [...frequencies.keys()] });
    this.byRecord.set(key, row.docId);
  }

  private remove(docId: number): void {
    const doc = this.docs.get(docId);
    if (!doc) return;
    for (const term of doc.terms) {
      const list = this.postings.get(term);
      list?.delete(docId);
      if (list?.size === 0) this.postings.delete(term);
    }
    this.postingCount -= doc.terms.length;
    this.docs.delete(docId);
    this.byRecord.delete(`${doc.kind}\u0000${doc.recordId}`);
  }

  /** Documents holding `term`. */
  frequency(term: string): number {
    return this.postings.get(term)?.size ?? 0;
  }

  /**
   * The searches of one `searchMany` (same user and terms), as the FTS5 path answers them with a
   * postings budget of `budget`.
   */
  async searchMany(queries: readonly FullTextQuery[], budget: number): Promise<SearchHit[][]> {
    const first = queries[0];
    if (!first) return [];
    const terms = this.chosenTerms(first, budget);
    if (terms.scored.length === 0) return queries.map(() => []);
    if (terms.newestOnly) {
      const out: SearchHit[][] = [];
      for (const q of queries) out.push(await this.newestHits(terms.scored, q, budget));
      return out;
    }
    const kinds = unionKinds(queries);
    return splitByKinds(this.ranked(terms.scored, kinds), queries);
  }

  /**
   * The terms scored, in the order FTS5 would sum them: the query's order when the user has too few
   * documents to go over the budget (fulltext-sqlite.ts's `fewDocuments`), else `chooseTerms`'s.
   */
  private chosenTerms(q: FullTextQuery, budget: number): { scored: string[]; newestOnly: boolean } {
    const most = Math.floor(budget / q.terms.length);
    if (most >= 1 && this.docs.size <= most) return { scored: q.terms.filter((t) => this.postings.has(t)), newestOnly: false };
    // chooseTerms breaks ties of frequency on the quoted, keyed term, as the FTS5 path does
    const byKeyed = new Map<string, string>();
    const frequencies = new Map<string, number>();
    for (const term of q.terms) {
      const keyed = fts5Quote(q.userKey + term);
      byKeyed.set(keyed, term);
      frequencies.set(keyed, Math.min(this.frequency(term), budget + 1));
    }
    const choice = chooseTerms(frequencies, budget);
    return { scored: choice.terms.map((k) => byKeyed.get(k)!), newestOnly: choice.newestOnly };
  }

  /** Every document holding a term of `terms` (of `kinds`), best BM25 first, older first on ties. */
  private ranked(terms: readonly string[], kinds: readonly SearchKind[] | undefined): SearchHit[] {
    const n = Math.max(1, this.table.docs);
    const avgLength = this.table.terms / n;
    const scores = new Map<number, number>();
    for (const term of terms) {
      const list = this.postings.get(term)!;
      const hits = list.size;
      let idf = Math.log((n - hits + 0.5) / (hits + 0.5));
      if (idf <= 0) idf = MIN_IDF;
      for (const [docId, tf] of list) {
        const length = this.docs.get(docId)!.length;
        const part = idf * ((tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * length) / avgLength)));
        scores.set(docId, (scores.get(docId) ?? 0) + part);
      }
    }
    const ranked: Array<{ docId: number; score: number }> = [];
    for (const [docId, score] of scores) {
      if (kinds === undefined || kinds.includes(this.docs.get(docId)!.kind)) ranked.push({ docId, score });
    }
    ranked.sort((a, b) => b.score - a.score || a.docId - b.docId);
    return ranked.map(({ docId, score }) => {
      const doc = this.docs.get(docId)!;
      return { kind: doc.kind, id: doc.recordId, score };
    });
  }

  /** The newest-documents fallback (fulltext-newest.ts), as the FTS5 path runs it. */
  private newestHits(terms: readonly string[], q: FullTextQuery, budget: number): Promise<SearchHit[]> {
    return newestHitsByPass(terms, q.limit, (all) => {
      const lists = terms.map((t) => this.postings.get(t)!);
      const matched = new Set<number>();
      if (all) {
        const [shortest, ...rest] = [...lists].sort((a, b) => a.size - b.size);
        for (const docId of shortest!.keys()) if (rest.every((l) => l.has(docId))) matched.add(docId);
      } else {
        for (const list of lists) for (const docId of list.keys()) matched.add(docId);
      }
      // the newest `budget` matches of any kind, then those of the query's kinds, up to its limit
      const newest = [...matched].sort((a, b) => b - a).slice(0, budget);
      const rows: Row[] = [];
      for (const docId of newest) {
        const doc = this.docs.get(docId)!;
        if (q.kinds === undefined || q.kinds.includes(doc.kind)) rows.push({ kind: doc.kind, record_id: doc.recordId });
        if (rows.length >= q.limit) break;
      }
      return rows;
    });
  }
}
