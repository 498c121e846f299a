/**
 * PostgreSQL full-text search over `memory_search`: a stored generated tsvector column (added by
 * `ensure`, computed by the server from `user_key` and `tokens`) with a GIN index, so the store's
 * writes stay the same portable SQL on both backends and no trigger is needed. Stored rather than
 * an expression index so the vector is built once per write, not once per row a query touches,
 * and so the planner has statistics for it (PostgreSQL 12 or newer). It mirrors the SQLite FTS5
 * dialect (fulltext-sqlite.ts):
 *
 * - Exact terms. The vector is built with `array_to_tsvector` from the space-separated terms
 *   (terms.ts), not with `to_tsvector`, whose parser would split "c++" or "node.js" and fold
 *   non-ASCII case: a query term matches exactly the index term it equals, as with FTS5's
 *   whitespace-only `ascii` tokenizer. Queries are tsquery literals, never parsed as syntax.
 * - Per-user postings. Every lexeme is prefixed with the owner's fixed-length key
 *   (`memory_search.user_key`), so a common term of one user costs nothing to another; rows are
 *   still checked by `user_id` exactly.
 * - Bounded cost, same rule as SQLite: document frequencies are counted up to
 *   `MAX_SCORED_POSTINGS + 1`, the rarest terms within that budget are scored (`chooseTerms`),
 *   and a query made only of common terms falls back to the newest matches.
 * - Score: BM25's IDF summed over the query terms a record holds (term frequency and length are
 *   not used: `array_to_tsvector` keeps each term once, without positions). Positive, higher is
 *   better, comparable within one search.
 *
 * PostgreSQL limits lexemes to 2 047 bytes and a tsvector to 1 MB, where FTS5 has no limit, so
 * only the first `MAX_INDEXED_CHARS` characters of a record's terms are indexed and terms longer
 * than `MAX_TERM_CHARS` are left out (a write never fails because of them).
 *
 * Latency (a rebuild searches on every miss of the hot tier):
 * - The GIN index keeps a small pending list (`GIN_PENDING_LIST_KB`, not the server's 4 MB
 *   default): every search scans the whole pending list, and after a bulk load a full one cost
 *   ~3 ms per term lookup against ~0.01 ms once merged. Writers merge it more often instead.
 * - Round trips: the document frequencies of every term not yet counted (and the user's document
 *   count) come from ONE statement, and are shared by the searches of one `searchMany` through
 *   `FullTextQuery.frequencies`, as on SQLite.
 */
import type { SqlDatabase, SqlExecutor, SqlValue } from '../../store/warm/sql.js';
import type { SearchHit, SearchKind } from '../memory-store.js';
import { chooseTerms, MAX_SCORED_POSTINGS } from './fulltext-sqlite.js';
import type { FullTextDialect, FullTextQuery } from './fulltext.js';
import { newestHits } from './fulltext-newest.js';
import { kindFilter, splitByKinds, unionKinds } from './fulltext-split.js';
import { num, str, type Row } from './rows.js';

/** Characters of a record's term string that are indexed (bounds the tsvector under 1 MB). */
export const MAX_INDEXED_CHARS = 30_000;
/** Longest indexed term, characters (4 bytes each at most, plus the 25-byte key: under 2 047 bytes). */
export const MAX_TERM_CHARS = 500;

const INDEX = 'memory_search_terms';
/** Pending-list size of the GIN index, kB (see the module comment). */
export const GIN_PENDING_LIST_KB = 128;
const INDEX_OPTIONS = `gin_pending_list_limit = ${GIN_PENDING_LIST_KB}`;
/** The generated column; every statement names it through this constant. */
const COLUMN = 'terms_vector';
const VECTOR = `d.${COLUMN}`;

/**
 * The generated vector of a `memory_search` row: the first MAX_INDEXED_CHARS characters of its
 * terms, without terms over MAX_TERM_CHARS (and the spaces they leave), each prefixed with the
 * user key; NULL (never matches) when no term is left.
 */
function vectorExpression(): string {
  const cut = `left(tokens, ${MAX_INDEXED_CHARS})`;
  // PostgreSQL regexes repeat at most 255 times, hence two bounded runs for "501 or more".
  const half = Math.floor(MAX_TERM_CHARS / 2);
  // E'…' so the backslashes mean the same whatever standard_conforming_strings says.
  const short = `regexp_replace(${cut}, E'\\\\S{${half}}\\\\S{${MAX_TERM_CHARS - half}}\\\\S+', '', 'g')`;
  const squeezed = `btrim(regexp_replace(${short}, ' {2,}', ' ', 'g'), ' ')`;
  const keyed = `CASE WHEN ${squeezed} = '' THEN NULL ELSE user_key || replace(${squeezed}, ' ', ' ' || user_key) END`;
  return `array_to_tsvector(string_to_array(${keyed}, ' '))`;
}

/** Serialises index creation across processes (per schema; released at commit). 0x63747866 is "ctxf". */
const LOCK = `SELECT pg_advisory_xact_lock(${0x63747866}, hashtext(COALESCE(current_schema(), '')))`;

/** A tsquery literal matching exactly `lexeme` (quotes doubled, backslashes escaped). */
export function tsqueryLiteral(lexeme: string): string {
  return `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/** BM25's inverse document frequency of a term held by `df` of `n` documents. */
export function bm25Idf(n: number, df: number): number {
  return Math.log(1 + (Math.max(n, df) - df + 0.5) / (df + 0.5));
}

/** Documents counted for IDF's N (a user's count beyond this changes IDF little). */
const MAX_COUNTED_DOCS = 100_000;

/** Creates the PostgreSQL tsvector dialect. */
export function createPostgresFullText(): FullTextDialect {
  return {
    name: 'postgres-tsvector',

    async ensure(db: SqlDatabase) {
      // The index, and whether it has our pending-list size (an index built by an older version has not).
      const state = async (ex: SqlExecutor) => {
        const row = await ex.get<Row>('SELECT array_to_string(c.reloptions, \',\') AS o FROM pg_class c WHERE c.oid = to_regclass(?::text)', [INDEX]);
        return row === undefined ? 'missing' : str(row.o).includes(INDEX_OPTIONS.replaceAll(' ', '')) ? 'ready' : 'old';
      };
      if ((await state(db)) === 'ready') return;
      // IF NOT EXISTS is not atomic on PostgreSQL: under the lock the second process sees both.
      // The index comes last, so its presence means the column is there too.
      await db.transaction(async (tx) => {
        await tx.get(LOCK);
        await tx.exec(`
          ALTER TABLE memory_search ADD COLUMN IF NOT EXISTS ${COLUMN} tsvector GENERATED ALWAYS AS (${vectorExpression()}) STORED;
          CREATE INDEX IF NOT EXISTS ${INDEX} ON memory_search USING GIN (${COLUMN}) WITH (${INDEX_OPTIONS});
          ALTER INDEX ${INDEX} SET (${INDEX_OPTIONS});`);
      });
    },

    search: async (ex, q) => (await searchMany(ex, [q]))[0]!,
    searchMany,
  };
}

/**
 * Searches sharing one user and one set of terms: the terms are counted once and, when BM25 ranks
 * them, matched and scored once for all the searches' kinds; each search's hits are then, in that
 * order, the hits of its own kinds up to its limit. The order (score, then newest document) is
 * total, so a filtered list is exactly what the search alone would return; there are at most the
 * postings budget of matches (the chosen terms' counts are capped by it), so no LIMIT is needed.
 */
async function searchMany(ex: SqlExecutor, queries: readonly FullTextQuery[]): Promise<SearchHit[][]> {
  const first = queries[0];
  if (!first) return [];
  const budget = MAX_SCORED_POSTINGS;
  const literals = indexedLiterals(first);
  const counted = await countTerms(ex, first, literals, budget);
  const df = new Map(literals.map((literal) => [literal, counted.get(literal)!] as const));
  const choice = chooseTerms(df, budget);
  if (choice.terms.length === 0) return queries.map(() => []);
  if (choice.newestOnly) return Promise.all(queries.map((q) => newestHitsOf(ex, q, choice.terms, kindFilter(q.kinds), budget)));
  const kinds = unionKinds(queries);
  const n = counted.get(DOCS_KEY)!;
  const score = choice.terms.map(() => `CASE WHEN ${VECTOR} @@ ?::tsquery THEN ?::float8 ELSE 0 END`).join(' + ');
  const scoreParams: SqlValue[] = choice.terms.flatMap((t) => [t, bm25Idf(n, df.get(t)!)]);
  const rows = await ex.all<Row>(
    `SELECT d.kind AS kind, d.record_id AS record_id, ${score} AS score
       FROM memory_search d
      WHERE ${VECTOR} @@ ?::tsquery AND d.user_id = ?${kindFilter(kinds)}
      ORDER BY score DESC, d.doc_id DESC`,
    [...scoreParams, choice.terms.join(' | '), first.userId, ...(kinds ?? [])],
  );
  const all = rows.map((r) => ({ kind: str(r.kind) as SearchKind, id: str(r.record_id), score: num(r.score) }));
  return splitByKinds(all, queries);
}

/** The tsquery literals of the query's terms that can be in the index (longer ones never are). */
function indexedLiterals(q: FullTextQuery): string[] {
  return q.terms.filter((term) => [...term].length <= MAX_TERM_CHARS).map((term) => tsqueryLiteral(q.userKey + term));
}

/** Key of the user's document count (N of IDF) in `FullTextQuery.frequencies`; no tsquery literal looks like it. */
const DOCS_KEY = '\u0000documents';

/**
 * Document frequencies of `literals` (capped at `budget + 1`) and the user's document count
 * (`DOCS_KEY`, capped at MAX_COUNTED_DOCS): what `q.frequencies` does not hold yet comes from one
 * statement, and is added to it.
 */
async function countTerms(ex: SqlExecutor, q: FullTextQuery, literals: readonly string[], budget: number): Promise<Map<string, number>> {
  const known = q.frequencies ?? new Map<string, number>();
  const missing = [...new Set(literals)].filter((l) => !known.has(l));
  const needDocs = !known.has(DOCS_KEY);
  if (missing.length > 0 || needDocs) {
    // One row per term (a correlated count, walked through the GIN index), then the document count.
    const parts: string[] = [];
    const params: SqlValue[] = [];
    if (missing.length > 0) {
      parts.push(
        `SELECT t.q AS term, (SELECT COUNT(*) FROM (SELECT 1 FROM memory_search d WHERE ${VECTOR} @@ t.q::tsquery LIMIT ?) capped) AS n
           FROM (VALUES ${missing.map(() => '(?::text)').join(', ')}) AS t(q)`,
      );
      params.push(budget + 1, ...missing);
    }
    if (needDocs) {
      parts.push('SELECT NULL AS term, (SELECT COUNT(*) FROM (SELECT 1 FROM memory_search WHERE user_id = ? LIMIT ?) c) AS n');
      params.push(q.userId, MAX_COUNTED_DOCS);
    }
    for (const r of await ex.all<Row>(parts.join(' UNION ALL '), params)) known.set(r.term === null ? DOCS_KEY : str(r.term), num(r.n));
  }
  return known;
}

/** The newest-documents fallback (fulltext-newest.ts) over this dialect's index. */
function newestHitsOf(ex: SqlExecutor, q: FullTextQuery, terms: readonly string[], kinds: string, budget: number): Promise<SearchHit[]> {
  return newestHits(terms, { and: ' & ', or: ' | ' }, q.limit, (match) =>
    ex.all<Row>(
      `SELECT d.kind AS kind, d.record_id AS record_id
         FROM (SELECT d.doc_id FROM memory_search d WHERE ${VECTOR} @@ ?::tsquery ORDER BY d.doc_id DESC LIMIT ?) m
         JOIN memory_search d ON d.doc_id = m.doc_id
        WHERE d.user_id = ?${kinds}
        ORDER BY m.doc_id DESC LIMIT ?`,
      [match, budget, q.userId, ...(q.kinds ?? []), q.limit],
    ),
  );
}
