/**
 * SQLite full-text search: a contentless FTS5 index over `memory_search`, kept in step by
 * triggers so the store's writes stay portable SQL.
 *
 * - Terms are the store's analyzer terms (terms.ts), joined by spaces; the `ascii` tokenizer,
 *   with every ASCII punctuation mark declared a token character, splits only on whitespace, so
 *   jieba's two-character words such as 周报 are index terms and "c++" stays "c++".
 * - Every indexed term is prefixed with the owner's key (`memory_search.user_key`, fixed length),
 *   so each user has their own postings: a query walks only that user's matches, however many
 *   other users there are. The join also checks `user_id` exactly, so even a key collision
 *   cannot leak a row.
 * - Cost is bounded. BM25 costs ~1.5 µs per posting of its terms (its IDF pass walks every one),
 *   so a query keeps its terms rarest first while their postings stay within
 *   `MAX_SCORED_POSTINGS` (frequencies are counted only up to that cap, ~50 ns a posting). A
 *   common term adds little to BM25 but cost. When every term is common, BM25 is skipped: hits
 *   are the newest documents holding all the terms, then any (see `newestHits`).
 * - Fixed costs count too. A user's index holds few postings, so a query costs mostly its term
 *   lookups: each term is looked up in every segment of the index (~1 µs a segment), once to
 *   count it, once to match it and once more for BM25's IDF. So the terms are counted in one
 *   statement — none at all for a user with too few documents to go over the budget (see
 *   `fewDocuments`) — and the searches of one `searchMany` (same terms, other kinds and limits)
 *   share one ranked match (see `searchMany`), sorted by SQLite rather than FTS5 (see `rankedHits`).
 */
import type { SqlDatabase, SqlExecutor } from '../../store/warm/sql.js';
import type { SearchHit, SearchKind } from '../memory-store.js';
import { kindFilter, splitByKinds, unionKinds } from './fulltext-split.js';
import type { FullTextDialect, FullTextQuery } from './fulltext.js';
import { newestHits } from './fulltext-newest.js';
import { num, str, type Row } from './rows.js';

/** Most postings a query scores (sum of the document frequencies of the terms it keeps). */
export const MAX_SCORED_POSTINGS = 1000;

const FTS = 'memory_search_fts';
const PUNCTUATION = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';
// The tokenize option is an SQL string holding the tokenizer's arguments, each a quoted string.
const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;
const TOKENIZE = sqlString(`ascii tokenchars ${sqlString(PUNCTUATION)}`);
// "a b" → "<key>a <key>b" (terms are joined by single spaces, never empty).
const prefixed = (row: string) => `CASE WHEN ${row}.tokens = '' THEN '' ELSE ${row}.user_key || replace(${row}.tokens, ' ', ' ' || ${row}.user_key) END`;

const CREATE = `
CREATE VIRTUAL TABLE ${FTS} USING fts5 (tokens, content = '', contentless_delete = 1, tokenize = ${TOKENIZE});
CREATE TRIGGER memory_search_ai AFTER INSERT ON memory_search BEGIN
  INSERT INTO ${FTS} (rowid, tokens) VALUES (new.doc_id, ${prefixed('new')});
END;
CREATE TRIGGER memory_search_ad AFTER DELETE ON memory_search BEGIN
  DELETE FROM ${FTS} WHERE rowid = old.doc_id;
END;
CREATE TRIGGER memory_search_au AFTER UPDATE ON memory_search BEGIN
  DELETE FROM ${FTS} WHERE rowid = old.doc_id;
  INSERT INTO ${FTS} (rowid, tokens) VALUES (new.doc_id, ${prefixed('new')});
END;
INSERT INTO ${FTS} (rowid, tokens) SELECT doc_id, ${prefixed('memory_search')} FROM memory_search;
`;

/** An FTS5 string literal: everything inside double quotes is literal, `"` doubled. */
export function fts5Quote(term: string): string {
  return `"${term.replaceAll('"', '""')}"`;
}

/** Which terms a query scores, and whether it must fall back to the newest matches. */
export interface TermChoice {
  terms: string[];
  /** Every term is common: rank only the newest `budget` matching documents. */
  newestOnly: boolean;
}

/**
 * Chooses the terms to score from their document frequencies (capped at `budget + 1`): rarest
 * first while the sum stays within `budget`; absent terms are dropped. When even the rarest is
 * over budget, all present terms are kept and `newestOnly` is set.
 */
export function chooseTerms(frequencies: ReadonlyMap<string, number>, budget = MAX_SCORED_POSTINGS): TermChoice {
  const present = [...frequencies].filter(([, df]) => df > 0).sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
  if (present.length === 0) return { terms: [], newestOnly: false };
  if (present[0]![1] > budget) return { terms: present.map(([t]) => t), newestOnly: true };
  const terms: string[] = [];
  let postings = 0;
  for (const [term, df] of present) {
    if (postings + df > budget) break;
    terms.push(term);
    postings += df;
  }
  return { terms, newestOnly: false };
}


/** The newest-documents fallback (fulltext-newest.ts) over this dialect's index. */
function newestHitsOf(ex: SqlExecutor, q: FullTextQuery, terms: readonly string[], kinds: string, budget: number): Promise<SearchHit[]> {
  return newestHits(terms, { and: ' AND ', or: ' OR ' }, q.limit, (match) =>
    ex.all<Row>(
      `SELECT d.kind AS kind, d.record_id AS record_id
         FROM (SELECT rowid AS doc_id FROM ${FTS} WHERE ${FTS} MATCH ? ORDER BY rowid DESC LIMIT ?) m
         CROSS JOIN memory_search d ON d.doc_id = m.doc_id
        WHERE d.user_id = ?${kinds}
        ORDER BY m.doc_id DESC LIMIT ?`,
      [match, budget, q.userId, ...(q.kinds ?? []), q.limit],
    ),
  );
}

/**
 * Document frequencies of `q.terms` (keyed as quoted in a MATCH, capped at `budget + 1`); the ones
 * `q.frequencies` lacks are counted in one statement, one column per term, and added to it.
 */
async function termFrequencies(ex: SqlExecutor, q: FullTextQuery, budget: number): Promise<Map<string, number>> {
  const df = new Map<string, number>();
  const missing: string[] = [];
  for (const term of q.terms) {
    const keyed = fts5Quote(q.userKey + term);
    const n = q.frequencies?.get(keyed);
    if (n === undefined) missing.push(keyed);
    df.set(keyed, n ?? 0);
  }
  if (missing.length > 0) {
    // A literal LIMIT: SQLite plans a known one better than a bound parameter.
    const counts = missing.map((_, i) => `(SELECT COUNT(*) FROM (SELECT 1 FROM ${FTS} WHERE ${FTS} MATCH ? LIMIT ${budget + 1})) AS n${i}`);
    const row = await ex.get<Row>(`SELECT ${counts.join(', ')}`, missing);
    for (const [i, keyed] of missing.entries()) {
      const n = num(row?.[`n${i}`]);
      df.set(keyed, n);
      q.frequencies?.set(keyed, n);
    }
  }
  return df;
}

/**
 * Whether `q.userId` has so few documents that the terms need not be counted: a term's frequency
 * is at most the user's document count, so with `documents * terms <= budget` every present term
 * is kept (and an absent one matches nothing in the OR). Counting the user's documents up to that
 * bound is one short walk of an index on `memory_search`; counting the terms is several lookups
 * per term in every segment of the full-text index. A new or light user — most users — takes this
 * path; a user with a long history counts.
 */
async function fewDocuments(ex: SqlExecutor, q: FullTextQuery, budget: number): Promise<boolean> {
  const most = Math.floor(budget / q.terms.length);
  if (most < 1) return false;
  // A literal LIMIT, as in termFrequencies (one statement per distinct bound, at most MAX_QUERY_TERMS).
  const row = await ex.get<Row>(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM memory_search WHERE user_id = ? LIMIT ${most + 1})`, [q.userId]);
  return num(row?.n) <= most;
}

/**
 * The matches of `match` among `q.userId`'s documents of `kinds`, best BM25 first, all of them (a
 * query keeps its terms' postings within the budget, so there are at most that many).
 *
 * Sorted by SQLite on `bm25()`, not by FTS5 on its `rank` column: for `ORDER BY rank` FTS5
 * prepares a statement of its own on every query, to sort the matches before the join reads
 * them (measured: a quarter of the query's cost on a bench index of 18 segments). The order is the
 * same: both sorts are SQLite's merge sort, stable, over the same values in the same (rowid)
 * order, and the stable sort of the rows a filter keeps is the filter of the stable sort. No
 * LIMIT for the same reason: SQLite keeps the best N of a LIMIT in another structure, whose ties
 * need not fall the same way; callers cut the list instead.
 */
async function rankedHits(ex: SqlExecutor, q: FullTextQuery, match: string, kinds: readonly string[] | undefined): Promise<SearchHit[]> {
  // CROSS JOIN keeps the FTS table outermost: SQLite must not drive the join from user_id.
  const hits = await ex.all<Row>(
    `SELECT d.kind AS kind, d.record_id AS record_id, bm25(${FTS}) AS score
       FROM ${FTS} f CROSS JOIN memory_search d ON d.doc_id = f.rowid
      WHERE ${FTS} MATCH ? AND d.user_id = ?${kindFilter(kinds)}
      ORDER BY score`,
    [match, q.userId, ...(kinds ?? [])],
  );
  // FTS5's bm25() is negative, lower is better; hits report it negated.
  return hits.map((r) => ({ kind: str(r.kind) as SearchKind, id: str(r.record_id), score: -num(r.score) }));
}

/**
 * Searches sharing one user and one set of terms (`FullTextDialect.searchMany`): the terms are
 * counted once and, when BM25 ranks them, matched and ranked once for all the searches' kinds;
 * each search's hits are then, in that order, the hits of its own kinds, up to its limit.
 */
async function searchMany(ex: SqlExecutor, queries: readonly FullTextQuery[]): Promise<SearchHit[][]> {
  const budget = MAX_SCORED_POSTINGS;
  const first = queries[0];
  if (!first) return [];
  const choice = (await fewDocuments(ex, first, budget))
    ? { terms: first.terms.map((t) => fts5Quote(first.userKey + t)), newestOnly: false }
    : chooseTerms(await termFrequencies(ex, first, budget), budget);
  if (choice.terms.length === 0) return queries.map(() => []);
  if (choice.newestOnly) {
    const out: SearchHit[][] = [];
    for (const q of queries) out.push(await newestHitsOf(ex, q, choice.terms, kindFilter(q.kinds), budget));
    return out;
  }
  const kinds = unionKinds(queries);
  const all = await rankedHits(ex, first, choice.terms.join(' OR '), kinds);
  return splitByKinds(all, queries);
}

/** Creates the SQLite FTS5 dialect. */
export function createSqliteFullText(): FullTextDialect {
  return {
    name: 'sqlite-fts5',

    async ensure(db: SqlDatabase) {
      const exists = async (ex: SqlExecutor) => (await ex.get("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", [FTS])) !== undefined;
      if (await exists(db)) return;
      await db.transaction(async (tx) => {
        // Another process may have built it since the check above.
        if (!(await exists(tx))) await tx.exec(CREATE);
      });
    },

    search: async (ex, q) => (await searchMany(ex, [q]))[0]!,
    searchMany,
  };
}
