/**
 * The full-text dialect: the only part of the memory store whose SQL differs between backends.
 * The store writes the analyzer's tokens of every searchable record into the portable
 * `memory_search` table (schema.ts); a dialect builds its own index over that table and answers
 * queries with it. SQLite: per-user indexes in process memory, FTS5 for users too large to hold
 * (fulltext-sqlite.ts).
 * PostgreSQL: a GIN index over `to_tsvector('simple', tokens)` (fulltext-postgres.ts), same inputs.
 */
import { CtxvmError } from '../../errors.js';
import type { SqlDatabase, SqlDialect, SqlExecutor } from '../../store/warm/sql.js';
import type { SearchHit, SearchKind } from '../memory-store.js';
import { createPostgresFullText } from './fulltext-postgres.js';
import { createSqliteFullText, type SqliteFullTextOptions } from './fulltext-sqlite.js';

/** One search, already analysed: the store never passes raw query text to a dialect. */
export interface FullTextQuery {
  /** Owner of the records searched; every statement filters by it. */
  userId: string;
  /** The user's index key (`userKeyOf(userId)`), also stored in `memory_search.user_key`. */
  userKey: string;
  /** Distinct, non-empty analyzer tokens; OR-ed. */
  terms: readonly string[];
  /** Only these kinds (undefined: all). Never empty. */
  kinds: readonly SearchKind[] | undefined;
  /** Maximum hits, >= 1. */
  limit: number;
  /**
   * Document frequencies already counted for these terms (keyed as the dialect keys them), read
   * and filled by the dialect, so several searches of one query count them once. Optional.
   */
  frequencies?: Map<string, number>;
}

/** What a backend must provide for full-text search. */
export interface FullTextDialect {
  /** Backend name, e.g. "sqlite-fts5". */
  readonly name: string;
  /** Creates the index over `memory_search` when missing and fills it; idempotent, safe across processes. */
  ensure(db: SqlDatabase): Promise<void>;
  /**
   * Hits best first; `score` > 0, higher is better. `inTransaction`: `ex` is a transaction (it may
   * see its own uncommitted writes, which a dialect must not keep beyond it).
   */
  search(ex: SqlExecutor, query: FullTextQuery, inTransaction?: boolean): Promise<SearchHit[]>;
  /**
   * The searches of one `searchMany` (same user, terms and `frequencies`; other kinds and
   * limits), each answered as `search` would, with what they share worked out once.
   */
  searchMany(ex: SqlExecutor, queries: readonly FullTextQuery[], inTransaction?: boolean): Promise<SearchHit[][]>;
}

/** The full-text dialect for a SQL dialect. */
export function fullTextDialectFor(dialect: SqlDialect, options: SqliteFullTextOptions = {}): FullTextDialect {
  if (dialect === 'sqlite') return createSqliteFullText(options);
  if (dialect === 'postgres') return createPostgresFullText();
  throw new CtxvmError('E_UNSUPPORTED', `full-text search is not available for the ${dialect} warm store in this build`);
}
