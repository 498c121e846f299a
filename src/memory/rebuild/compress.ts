/**
 * Shortening items before the packer has to drop them: a long turn or fact becomes its key
 * sentence (the one sharing most query terms), a task becomes title + status + due.
 */
import type { SearchAnalyzer } from '../analyzer.js';

// Sentence ends: Western punctuation followed by space, CJK full stops, and line breaks.
const SENTENCE_END = /(?<=[.!?])\s+|(?<=[。！？!?；;])|\n+/u;
// Clause breaks, for a text that is one long sentence.
const CLAUSE_END = /(?<=[,，、;；:：])\s*/u;

/** Below this many characters a text is not worth compressing. */
const MIN_COMPRESS_CHARS = 60;

/**
 * The sentence of `text` that shares most distinct terms with the query (ties: the earlier
 * one; none shared: the first), marked with "…" where text was cut; `undefined` when that
 * would not be meaningfully shorter. A single long sentence is cut at clause boundaries instead.
 */
export function keySentence(text: string, queryTerms: ReadonlySet<string>, analyzer: SearchAnalyzer): string | undefined {
  const trimmed = text.trim();
  if (trimmed.length < MIN_COMPRESS_CHARS) return undefined;
  let units = splitUnits(trimmed, SENTENCE_END);
  if (units.length < 2) units = splitUnits(trimmed, CLAUSE_END);
  if (units.length < 2) return undefined;
  let best = 0;
  let bestScore = -1;
  for (let i = 0; i < units.length; i++) {
    const score = sharedTerms(units[i]!, queryTerms, analyzer);
    if (score > bestScore) {
      best = i;
      bestScore = score;
    }
  }
  // A very short key sentence ("Yes!") says little on its own: take its neighbour too.
  let from = best;
  let to = best;
  while (span(units, from, to).length < 40 && (from > 0 || to < units.length - 1)) {
    if (to < units.length - 1) to++;
    else from--;
  }
  const kept = span(units, from, to);
  if (kept.length > trimmed.length * 0.8) return undefined;
  return `${from > 0 ? '… ' : ''}${kept}${to < units.length - 1 ? ' …' : ''}`;
}

function splitUnits(text: string, boundary: RegExp): string[] {
  return text
    .split(boundary)
    .map((u) => u.trim())
    .filter((u) => u.length > 0);
}

function span(units: readonly string[], from: number, to: number): string {
  let out = '';
  for (let i = from; i <= to; i++) {
    const u = units[i]!;
    // CJK sentences join without a space; Latin ones with one.
    out += out === '' || /[\u3000-\u30ff\u4e00-\u9fff\uff00-\uffef]$/u.test(out) ? u : ` ${u}`;
  }
  return out;
}

function sharedTerms(unit: string, queryTerms: ReadonlySet<string>, analyzer: SearchAnalyzer): number {
  if (queryTerms.size === 0) return 0;
  const seen = new Set<string>();
  for (const term of analyzer(unit)) if (queryTerms.has(term)) seen.add(term);
  return seen.size;
}
