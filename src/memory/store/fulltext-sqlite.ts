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
 */
import type { SqlDatabase, SqlExecutor } from '../../store/warm/sql.js';
import type { SearchHit, SearchKind } from '../memory-store.js';
import type { FullTextDialect, FullTextQuery } from './fulltext.js';
import { newestHits } from './fulltext-newest.js';
import { num, placeholders, str, type Row } from './rows.js';

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

    async search(ex: SqlExecutor, q: FullTextQuery): Promise<SearchHit[]> {
      const budget = MAX_SCORED_POSTINGS;
      const df = new Map<string, number>();
      for (const term of q.terms) {
        const keyed = fts5Quote(q.userKey + term);
        let n = q.frequencies?.get(keyed);
        if (n === undefined) {
          // A literal LIMIT: SQLite plans a known one better than a bound parameter.
          const row = await ex.get<Row>(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${FTS} WHERE ${FTS} MATCH ? LIMIT ${budget + 1}) capped`, [keyed]);
          n = num(row?.n);
          q.frequencies?.set(keyed, n);
        }
        df.set(keyed, n);
      }
      const choice = chooseTerms(df, budget);
      if (choice.terms.length === 0) return [];
      const kinds = q.kinds ? ` AND d.kind IN (${placeholders(q.kinds.length)})` : '';
      if (choice.newestOnly) return newestHitsOf(ex, q, choice.terms, kinds, budget);
      // CROSS JOIN keeps the FTS table outermost: SQLite must not drive the join from user_id.
      const hits = await ex.all<Row>(
        `SELECT d.kind AS kind, d.record_id AS record_id, f.rank AS rank
           FROM ${FTS} f CROSS JOIN memory_search d ON d.doc_id = f.rowid
          WHERE ${FTS} MATCH ? AND d.user_id = ?${kinds}
          ORDER BY f.rank LIMIT ?`,
        [choice.terms.join(' OR '), q.userId, ...(q.kinds ?? []), q.limit],
      );
      // FTS5's bm25() is negative, lower is better; hits report it negated.
      return hits.map((r) => ({ kind: str(r.kind) as SearchKind, id: str(r.record_id), score: -num(r.rank) }));
    },
  };
}
