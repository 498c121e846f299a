/**
 * Full-text search of one user's turns and memory records. The query goes through the same
 * analyzer as the indexed text; its distinct tokens are OR-ed and ranked by BM25 (through the
 * full-text dialect). Any text is a valid query: terms are always quoted, never parsed as syntax.
 */
import type { SearchHit, SearchKind, SearchOptions } from '../memory-store.js';
import type { Analyzer, UserScope } from './context.js';
import type { FullTextQuery } from './fulltext.js';
import { analyzeTerms } from './terms.js';

/** Longest query analysed, UTF-16 code units; the rest is ignored. */
export const MAX_QUERY_CHARS = 10_000;
/** Most distinct terms a query uses (the first ones in the text). */
export const MAX_QUERY_TERMS = 64;
/** Default maximum number of hits. */
export const DEFAULT_SEARCH_LIMIT = 50;

const KINDS: ReadonlySet<string> = new Set<SearchKind>(['turn', 'task', 'project', 'decision', 'fact']);

/** The distinct search terms of `query`, at most `MAX_QUERY_TERMS`. */
export function queryTerms(analyzer: Analyzer, query: string): string[] {
  if (typeof query !== 'string' || query.length === 0) return [];
  let text = query;
  if (text.length > MAX_QUERY_CHARS) {
    let end = MAX_QUERY_CHARS;
    // Do not cut a surrogate pair in half.
    const last = text.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff) end -= 1;
    text = text.slice(0, end);
  }
  const terms = new Set<string>();
  // An analyzer may analyse queries its own way (see SearchAnalyzer.query).
  for (const term of analyzeTerms(analyzer.query ?? analyzer, text)) {
    terms.add(term);
    if (terms.size >= MAX_QUERY_TERMS) break;
  }
  return [...terms];
}

/** `UserMemoryStore.search`. */
export async function search(scope: UserScope, query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
  return (await searchMany(scope, query, [options]))[0]!;
}

/** `UserMemoryStore.searchMany`: the query analysed once, term statistics counted once. */
export async function searchMany(scope: UserScope, query: string, searches: readonly SearchOptions[]): Promise<SearchHit[][]> {
  const terms = queryTerms(scope.ctx.analyzer, query);
  const frequencies = new Map<string, number>();
  const { fullText, db } = scope.ctx;
  const queries: Array<FullTextQuery | undefined> = searches.map((options) => {
    const limit = Math.floor(options?.limit ?? DEFAULT_SEARCH_LIMIT);
    const kinds = options?.kinds ? [...new Set(options.kinds.filter((k) => KINDS.has(k)))] : undefined;
    if (!(limit > 0) || (kinds && kinds.length === 0) || terms.length === 0) return undefined;
    return { userId: scope.userId, userKey: scope.userKey, terms, kinds, limit, frequencies };
  });
  const asked = queries.filter((q): q is FullTextQuery => q !== undefined);
  if (asked.length === 0) return queries.map(() => []);
  await scope.ctx.ready();
  // The dialect answers the searches together: term statistics and ranking are shared.
  const answers = await fullText.searchMany(db, asked, scope.ctx.outer !== undefined);
  return queries.map((q) => (q ? answers[asked.indexOf(q)]! : []));
}
