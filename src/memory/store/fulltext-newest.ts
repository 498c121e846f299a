/**
 * The fallback both full-text dialects use for a query made only of common terms, where scoring
 * every match would walk every posting of every term: the newest documents holding all terms
 * (for up to `MAX_AND_TERMS`), then the newest holding any; scores fall from `FALLBACK_SCORE` in
 * that order, far below any real BM25 score.
 */
import type { SearchHit, SearchKind } from '../memory-store.js';
import { str, type Row } from './rows.js';

/** Score of the best fallback hit. */
const FALLBACK_SCORE = 1e-3;
/** Most terms the "all terms" pass takes: an AND of many common terms rarely matches and costs more. */
const MAX_AND_TERMS = 4;

/** How a dialect writes "all of" and "any of" a list of already quoted terms. */
export interface TermOperators {
  and: string;
  or: string;
}

/**
 * Runs `fetchPass(match)` for the AND pass then the OR pass (each returns rows with `kind` and
 * `record_id`, newest first) and keeps the first `limit` distinct hits.
 */
export async function newestHits(terms: readonly string[], ops: TermOperators, limit: number, fetchPass: (match: string) => Promise<Row[]>): Promise<SearchHit[]> {
  return newestHitsByPass(terms, limit, (all) => fetchPass(terms.join(all ? ops.and : ops.or)));
}

/**
 * `newestHits` for a dialect that matches without a query string: `fetchPass(all)` returns the
 * newest documents holding all of `terms` (`all`) or any of them.
 */
export async function newestHitsByPass(terms: readonly string[], limit: number, fetchPass: (all: boolean) => Promise<Row[]> | Row[]): Promise<SearchHit[]> {
  const seen = new Set<string>();
  const found: Row[] = [];
  const passes = terms.length === 1 ? [false] : terms.length <= MAX_AND_TERMS ? [true, false] : [false];
  for (const all of passes) {
    for (const r of await fetchPass(all)) {
      const id = `${str(r.kind)}\u0000${str(r.record_id)}`;
      if (found.length < limit && !seen.has(id)) {
        seen.add(id);
        found.push(r);
      }
    }
    if (found.length >= limit) break;
  }
  return found.map((r, i) => ({ kind: str(r.kind) as SearchKind, id: str(r.record_id), score: (FALLBACK_SCORE * (found.length - i)) / found.length }));
}
