/**
 * SQLite full-text search over `memory_search`, in two tiers, with the store's writes kept
 * portable SQL (triggers do the rest):
 *
 * - A user with up to `DEFAULT_RESIDENT_USER_DOCS` documents — most users — is searched from a
 *   resident index in process memory (fulltext-resident.ts, kept in step by
 *   fulltext-resident-sync.ts): same term choice, BM25 and fallback as below, no statement but a
 *   catch-up, and nothing written for it but the `memory_search` row. Measured in-process on
 *   the processMessage bench's mix: SQL time went from ~1.16 to ~0.91 ms a message, the FTS5
 *   query (~200 µs) giving way to a ~30 µs catch-up, indexing from ~135 to ~70 µs.
 * - A larger user is admitted to a contentless FTS5 index (once, by the search that finds it
 *   too large; `memory_search_fts_users` lists them) kept in step by triggers for those users.
 *
 * What follows is the FTS5 tier.
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
import { ResidentIndexes, type ResidentLimits } from './fulltext-resident-sync.js';
import { TermFrequencyMemo, type DocumentsState } from './fulltext-frequencies.js';
import { chooseTerms, fts5Quote, MAX_SCORED_POSTINGS } from './fulltext-terms.js';
import { num, str, type Row } from './rows.js';

const FTS = 'memory_search_fts';
const PUNCTUATION = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';
// The tokenize option is an SQL string holding the tokenizer's arguments, each a quoted string.
const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;
const TOKENIZE = sqlString(`ascii tokenchars ${sqlString(PUNCTUATION)}`);
// "a b" → "<key>a <key>b" (terms are joined by single spaces, never empty).
const prefixed = (row: string) => `CASE WHEN ${row}.tokens = '' THEN '' ELSE ${row}.user_key || replace(${row}.tokens, ' ', ' ' || ${row}.user_key) END`;

const USERS = 'memory_search_fts_users';
const EPOCHS = 'memory_search_epochs';
const STATS = 'memory_search_stats';
// Terms in a row's tokens (joined by single spaces): what FTS5 counts as the document's length.
const termCount = (row: string) => `(CASE WHEN ${row}.tokens = '' THEN 0 ELSE length(${row}.tokens) - length(replace(${row}.tokens, ' ', '')) + 1 END)`;
const isFtsUser = (row: string) => `EXISTS (SELECT 1 FROM ${USERS} WHERE user_id = ${row}.user_id)`;

// Objects of the current layout, all made by `ensure` in one transaction. The triggers keep
// FTS5 in step for the users in USERS only; for the resident indexes, a user's epoch counts
// deletes and STATS the documents and terms of all users — the BM25 statistics FTS5 used when it
// held every user's documents, so a user with a handful of memories still gets a meaningful IDF.
const LAYOUT = `
CREATE TABLE IF NOT EXISTS ${USERS} (user_id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ${EPOCHS} (user_id TEXT PRIMARY KEY, epoch INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ${STATS} (id INTEGER PRIMARY KEY CHECK (id = 1), docs INTEGER NOT NULL, terms INTEGER NOT NULL);
INSERT OR REPLACE INTO ${STATS} (id, docs, terms) SELECT 1, COUNT(*), COALESCE(SUM(${termCount('memory_search')}), 0) FROM memory_search;
CREATE INDEX IF NOT EXISTS memory_search_user_doc ON memory_search (user_id, doc_id);
DROP TRIGGER IF EXISTS memory_search_ai;
DROP TRIGGER IF EXISTS memory_search_ad;
DROP TRIGGER IF EXISTS memory_search_au;
DROP TRIGGER IF EXISTS memory_search_fts_ai;
DROP TRIGGER IF EXISTS memory_search_fts_ad;
DROP TRIGGER IF EXISTS memory_search_fts_au;
DROP TRIGGER IF EXISTS memory_search_epoch_ad;
DROP TRIGGER IF EXISTS memory_search_stats_ai;
DROP TRIGGER IF EXISTS memory_search_stats_au;
CREATE TRIGGER memory_search_fts_ai AFTER INSERT ON memory_search WHEN ${isFtsUser('new')} BEGIN
  INSERT INTO ${FTS} (rowid, tokens) VALUES (new.doc_id, ${prefixed('new')});
END;
CREATE TRIGGER memory_search_fts_ad AFTER DELETE ON memory_search WHEN ${isFtsUser('old')} BEGIN
  DELETE FROM ${FTS} WHERE rowid = old.doc_id;
END;
CREATE TRIGGER memory_search_fts_au AFTER UPDATE ON memory_search WHEN ${isFtsUser('new')} BEGIN
  DELETE FROM ${FTS} WHERE rowid = old.doc_id;
  INSERT INTO ${FTS} (rowid, tokens) VALUES (new.doc_id, ${prefixed('new')});
END;
CREATE TRIGGER memory_search_stats_ai AFTER INSERT ON memory_search BEGIN
  UPDATE ${STATS} SET docs = docs + 1, terms = terms + ${termCount('new')};
END;
CREATE TRIGGER memory_search_stats_au AFTER UPDATE ON memory_search BEGIN
  UPDATE ${STATS} SET terms = terms - ${termCount('old')} + ${termCount('new')};
END;
CREATE TRIGGER memory_search_epoch_ad AFTER DELETE ON memory_search BEGIN
  INSERT OR REPLACE INTO ${EPOCHS} (user_id, epoch) VALUES (old.user_id, COALESCE((SELECT epoch FROM ${EPOCHS} WHERE user_id = old.user_id), 0) + 1);
  UPDATE ${STATS} SET docs = docs - 1, terms = terms - ${termCount('old')};
END;
`;
/** Made with the rest of the layout in one transaction: present, the layout is current. */
const LAYOUT_MARK = 'memory_search_stats_ai';

const sqliteObjectExists = async (ex: SqlExecutor, type: string, name: string) =>
  (await ex.get('SELECT 1 AS one FROM sqlite_master WHERE type = ? AND name = ?', [type, name])) !== undefined;
const layoutIsCurrent = async (ex: SqlExecutor) => (await sqliteObjectExists(ex, 'table', FTS)) && (await sqliteObjectExists(ex, 'trigger', LAYOUT_MARK));

/**
 * Makes the current layout in `tx`. From an empty database: no user in FTS5 yet. From the layout
 * before resident indexes (FTS5 holding every user's documents, unconditional triggers): every
 * user with documents is registered as in FTS5, which holds them. With the FTS5 table gone (dropped
 * by hand): made again and refilled with its registered users' documents.
 */
async function makeLayout(tx: SqlExecutor): Promise<void> {
  if (await layoutIsCurrent(tx)) return; // another process made it since the caller looked
  const has = (type: string, name: string) => sqliteObjectExists(tx, type, name);
  const hadFts = await has('table', FTS);
  const hadUsers = await has('table', USERS);
  if (!hadFts) await tx.exec(`CREATE VIRTUAL TABLE ${FTS} USING fts5 (tokens, content = '', contentless_delete = 1, tokenize = ${TOKENIZE});`);
  await tx.exec(LAYOUT);
  if (hadFts && !hadUsers) await tx.run(`INSERT INTO ${USERS} (user_id) SELECT DISTINCT user_id FROM memory_search`);
  if (!hadFts) await tx.run(`INSERT INTO ${FTS} (rowid, tokens) SELECT doc_id, ${prefixed('memory_search')} FROM memory_search WHERE ${isFtsUser('memory_search')}`);
}

/**
 * Puts `userId`'s documents in FTS5 (once: the triggers keep them in step from then on), in
 * `tx`. Registering and filling happen in one transaction, so no write of the user's falls
 * between them: an earlier one is in the fill, a later one goes through the triggers.
 */
async function admitToFts(tx: SqlExecutor, userId: string): Promise<void> {
  const { changes } = await tx.run(`INSERT INTO ${USERS} (user_id) VALUES (?) ON CONFLICT (user_id) DO NOTHING`, [userId]);
  if (changes > 0) await tx.run(`INSERT INTO ${FTS} (rowid, tokens) SELECT doc_id, ${prefixed('memory_search')} FROM memory_search WHERE user_id = ?`, [userId]);
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
 * neither `q.frequencies` nor the counts `kept()` gives (of the user's documents as they stand,
 * see fulltext-frequencies.ts; asked for only when `q.frequencies` lacks a term, since finding
 * where the documents stand is a statement too) holds are counted in one statement, one column
 * per term, and added to both.
 */
async function termFrequencies(ex: SqlExecutor, q: FullTextQuery, budget: number, kept?: () => Promise<Map<string, number>>): Promise<Map<string, number>> {
  const df = new Map<string, number>();
  const uncounted: string[] = [];
  for (const term of q.terms) {
    const keyed = fts5Quote(q.userKey + term);
    const n = q.frequencies?.get(keyed);
    if (n === undefined) uncounted.push(keyed);
    df.set(keyed, n ?? 0);
  }
  if (uncounted.length === 0) return df;
  const counts = await kept?.();
  const missing: string[] = [];
  for (const keyed of uncounted) {
    const n = counts?.get(keyed);
    if (n === undefined) missing.push(keyed);
    else df.set(keyed, n);
  }
  if (missing.length > 0) {
    // A literal LIMIT: SQLite plans a known one better than a bound parameter.
    const columns = missing.map((_, i) => `(SELECT COUNT(*) FROM (SELECT 1 FROM ${FTS} WHERE ${FTS} MATCH ? LIMIT ${budget + 1})) AS n${i}`);
    const row = await ex.get<Row>(`SELECT ${columns.join(', ')}`, missing);
    for (const [i, keyed] of missing.entries()) {
      const n = num(row?.[`n${i}`]);
      df.set(keyed, n);
      q.frequencies?.set(keyed, n);
      counts?.set(keyed, n);
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
 * FTS5's answer to searches sharing one user and one set of terms (`FullTextDialect.searchMany`): the terms are
 * counted once and, when BM25 ranks them, matched and ranked once for all the searches' kinds;
 * each search's hits are then, in that order, the hits of its own kinds, up to its limit.
 */
async function searchFts(ex: SqlExecutor, queries: readonly FullTextQuery[], memo: TermFrequencyMemo | undefined): Promise<SearchHit[][]> {
  const budget = MAX_SCORED_POSTINGS;
  const first = queries[0];
  if (!first) return [];
  const choice = (await fewDocuments(ex, first, budget))
    ? { terms: first.terms.map((t) => fts5Quote(first.userKey + t)), newestOnly: false }
    : chooseTerms(await termFrequencies(ex, first, budget, memo && (async () => memo.countsFor(first.userId, await documentsState(ex, first.userId)))), budget);
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

/** The user's delete epoch and largest `doc_id`: two index lookups. */
async function documentsState(ex: SqlExecutor, userId: string): Promise<DocumentsState> {
  const row = await ex.get<Row>(`SELECT (SELECT epoch FROM ${EPOCHS} WHERE user_id = ?) AS epoch, (SELECT MAX(doc_id) FROM memory_search WHERE user_id = ?) AS max_doc`, [userId, userId]);
  return { epoch: num(row?.epoch), maxDocId: num(row?.max_doc) };
}

/** Options of the SQLite dialect. */
export interface SqliteFullTextOptions {
  /** Limits of the resident indexes (fulltext-resident-sync.ts); `maxUserDocs: 0` searches every user through FTS5. */
  resident?: ResidentLimits;
}

/**
 * Creates the SQLite dialect: each user's documents searched from a resident index in process
 * memory (fulltext-resident.ts) while they are few enough to hold, through FTS5 once they are
 * not — the users FTS5 holds are admitted to it the first time a search finds them too large,
 * so FTS5 costs nothing to write for the others.
 */
export function createSqliteFullText(options: SqliteFullTextOptions = {}): FullTextDialect {
  const resident = new ResidentIndexes(options.resident);
  const frequencies = new TermFrequencyMemo();
  let database: SqlDatabase | undefined;
  /** Users this process knows FTS5 holds. */
  const admitted = new Set<string>();

  /** Makes sure FTS5 holds `userId`'s documents: in `ex` when it is a transaction, else in one of its own. */
  const admit = async (ex: SqlExecutor, userId: string, inTransaction: boolean) => {
    if (admitted.has(userId)) return;
    if (inTransaction || !database) await admitToFts(ex, userId);
    else await database.transaction((tx) => admitToFts(tx, userId));
    // a transaction's admission counts only once it commits
    if (!inTransaction) admitted.add(userId);
  };

  const searchMany = async (ex: SqlExecutor, queries: readonly FullTextQuery[], inTransaction = false): Promise<SearchHit[][]> => {
    const first = queries[0];
    if (!first) return [];
    const index = await resident.indexOf(ex, first.userId, inTransaction);
    if (index) return index.searchMany(queries, MAX_SCORED_POSTINGS);
    await admit(ex, first.userId, inTransaction);
    // (inside a transaction the documents may be its own, uncommitted: nothing is kept of them)
    return searchFts(ex, queries, inTransaction ? undefined : frequencies);
  };

  return {
    name: 'sqlite-fts5',

    async ensure(db: SqlDatabase) {
      database ??= db;
      if (await layoutIsCurrent(db)) return;
      await db.transaction((tx) => makeLayout(tx));
    },

    searchMany,
    search: async (ex, q, inTransaction) => (await searchMany(ex, [q], inTransaction))[0]!,
  };
}

export { chooseTerms, fts5Quote, MAX_SCORED_POSTINGS } from './fulltext-terms.js';
