/**
 * What the dialects' `searchMany` share: one ranked match over the union of the searches' kinds,
 * then each search's hits cut from it. Exact when the match's order is total (or a stable sort):
 * the hits of some kinds, in that order, are what a search of those kinds alone returns.
 */
import type { SearchHit, SearchKind } from '../memory-store.js';
import type { FullTextQuery } from './fulltext.js';
import { placeholders } from './rows.js';

/** ` AND d.kind IN (…)` for `kinds`, or nothing for all kinds. */
export const kindFilter = (kinds: readonly string[] | undefined): string => (kinds ? ` AND d.kind IN (${placeholders(kinds.length)})` : '');

/** The kinds any of `queries` asks for; undefined when one asks for all. */
export const unionKinds = (queries: readonly FullTextQuery[]): SearchKind[] | undefined =>
  queries.some((q) => q.kinds === undefined) ? undefined : [...new Set(queries.flatMap((q) => q.kinds!))];

/** Each query's hits: those of its kinds in `ranked`, in that order, up to its limit. */
export function splitByKinds(ranked: readonly SearchHit[], queries: readonly FullTextQuery[]): SearchHit[][] {
  return queries.map((q) => {
    const mine: SearchHit[] = [];
    for (const h of ranked) {
      if (mine.length >= q.limit) break;
      if (q.kinds === undefined || q.kinds.includes(h.kind)) mine.push({ ...h });
    }
    return mine;
  });
}
