/**
 * What both SQLite full-text paths (FTS5 and the resident index) share to choose a query's terms:
 * the postings budget, and FTS5's quoting of a term (the key chooseTerms breaks ties on).
 */

/** Most postings a query scores (sum of the document frequencies of the terms it keeps). */
export const MAX_SCORED_POSTINGS = 1000;

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
