/**
 * Search terms, the same for indexed text and for queries: the analyzer's tokens, split again on
 * whitespace and control characters, ASCII lower-cased. The full-text index splits only where
 * this does, so a term here is exactly one index term (what makes quoting and statistics exact).
 */
import type { Analyzer } from './context.js';

// JavaScript's \s covers Unicode spaces (U+3000, NBSP, …); control characters separate too.
const SEPARATORS = /[\s\u0000-\u001f\u007f]+/u;
const ASCII_UPPER = /[A-Z]+/g;

/** The search terms of `text`, in order, duplicates kept. */
export function analyzeTerms(analyzer: Analyzer, text: string): string[] {
  const terms: string[] = [];
  for (const token of analyzer(text)) {
    if (typeof token !== 'string') continue;
    for (const part of token.split(SEPARATORS)) {
      if (part.length > 0) terms.push(part.replace(ASCII_UPPER, (s) => s.toLowerCase()));
    }
  }
  return terms;
}

/** The indexed column of `text`: its terms joined by single spaces. */
export const indexTerms = (analyzer: Analyzer, text: string): string => analyzeTerms(analyzer, text).join(' ');
