/**
 * Shortening items before the packer has to drop them: a long turn becomes its key sentence
 * (the one sharing most query terms), a memory record its lead (`leadOf`), a task title +
 * status + due.
 */
import type { SearchAnalyzer } from '../analyzer.js';

// Sentence ends: Western punctuation followed by space, CJK full stops, and line breaks.
const SENTENCE_END = /(?<=[.!?])\s+|(?<=[。！？!?；;])|\n+/u;
// Clause breaks, for a text that is one long sentence.
const CLAUSE_END = /(?<=[,，、;；:：])\s*/u;

/** Below this weight (see `weightOf`) a text is not worth compressing. */
const MIN_COMPRESS_WEIGHT = 60;
/**
 * A key sentence lighter than this takes its neighbour along ("Yes!", "Thanks, Mel!" say little
 * alone; a sentence of 20 Latin or 8 CJK characters does). 20, not 40: on LoCoMo's tune half a
 * shorter key sentence leaves room for more distinct turns (docs/benchmarks.md).
 */
const MIN_KEY_WEIGHT = 20;

/** Length in "Latin characters": a CJK character carries about as much as 2.5 of them. */
function weightOf(text: string): number {
  // CJK here: U+3000-30FF, U+4E00-9FFF, U+FF00-FFEF (all in the BMP, so code units suffice).
  let cjk = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 0x3000 && c <= 0x30ff) || (c >= 0x4e00 && c <= 0x9fff) || (c >= 0xff00 && c <= 0xffef)) cjk++;
  }
  return text.length + 1.5 * cjk;
}

/**
 * The sentence of `text` that shares most distinct terms with the query (ties: the earlier
 * one; none shared: the first), marked with "…" where text before it was cut; `undefined` when that
 * would not be meaningfully shorter. A single long sentence is cut at clause boundaries instead.
 */
export function keySentence(text: string, queryTerms: ReadonlySet<string>, analyzer: SearchAnalyzer): string | undefined {
  const units = keyUnits(text, analyzer);
  return units && keyAt(units, keyUnitOf(units, queryTerms));
}

/**
 * What `keySentence` needs of a text whatever the query: its sentences (or clauses) and their
 * distinct terms. Worked out once for a text that comes back query after query (a stored turn),
 * `keyUnitOf` then only counts shared terms.
 */
export interface KeyUnits {
  readonly units: readonly string[];
  /** Distinct analyzer terms of each unit. */
  readonly terms: ReadonlyArray<readonly string[]>;
  readonly trimmedLength: number;
}

/** The text's units, or undefined when it is too short or one unit (it never compresses). */
export function keyUnits(text: string, analyzer: SearchAnalyzer): KeyUnits | undefined {
  const trimmed = text.trim();
  if (weightOf(trimmed) < MIN_COMPRESS_WEIGHT) return undefined;
  let units = splitUnits(trimmed, SENTENCE_END);
  if (units.length < 2) units = splitUnits(trimmed, CLAUSE_END);
  if (units.length < 2) return undefined;
  return { units, terms: units.map((u) => distinct(analyzer(u))), trimmedLength: trimmed.length };
}

/** The unit sharing most distinct terms with the query (ties: the earlier one; none shared: the first). */
export function keyUnitOf(k: KeyUnits, queryTerms: ReadonlySet<string>): number {
  let best = 0;
  let bestScore = -1;
  for (let i = 0; i < k.units.length; i++) {
    const score = sharedTerms(k.terms[i]!, queryTerms);
    if (score > bestScore) {
      best = i;
      bestScore = score;
    }
  }
  return best;
}


/** `terms` without repeats (the array itself when it has none: a memoized analyzer's is shared). */
function distinct(terms: readonly string[]): readonly string[] {
  const set = new Set(terms);
  return set.size === terms.length ? terms : [...set];
}

/**
 * The key sentence around unit `best` (see `keySentence`): it, and its neighbours while it weighs
 * too little; undefined when that would not be meaningfully shorter. A cut before it is marked
 * ("… "), one after it is not: the line then reads as a sentence that starts mid-text, and the
 * mark would cost a token on most compact lines (~70 of a 2,000-token history layer).
 */
export function keyAt(k: KeyUnits, best: number): string | undefined {
  const { units } = k;
  let from = best;
  let to = best;
  while (weightOf(span(units, from, to)) < MIN_KEY_WEIGHT && (from > 0 || to < units.length - 1)) {
    if (to < units.length - 1) to++;
    else from--;
  }
  const kept = span(units, from, to);
  if (kept.length > k.trimmedLength * 0.8) return undefined;
  return `${from > 0 ? '… ' : ''}${kept}`;
}

/** Below this weight a record is not worth cutting to its lead (see `leadOf`). */
const MIN_LEAD_WEIGHT = 40;

/**
 * The lead of a record's text: its first sentence (or clause, for one long sentence), with the
 * next ones while it weighs too little; undefined when that would not be meaningfully shorter.
 * A memory says who did what first and how it felt or ended after ("Bart在学校的绘画比赛中获得
 * 优胜奖，感到非常开心。"), so its lead keeps the event. Not chosen by the query: the words a
 * query shares with a memory are as often its feeling ("开心", "felt") as its event. A clause
 * mark left at the end is dropped.
 */
export function leadOf(text: string): string | undefined {
  const trimmed = text.trim();
  if (weightOf(trimmed) < MIN_LEAD_WEIGHT) return undefined;
  let units = splitUnits(trimmed, SENTENCE_END);
  if (units.length < 2) units = splitUnits(trimmed, CLAUSE_END);
  if (units.length < 2) return undefined;
  let to = 0;
  while (weightOf(span(units, 0, to)) < MIN_KEY_WEIGHT && to < units.length - 1) to++;
  if (to === units.length - 1) return undefined;
  const kept = span(units, 0, to).replace(/[,，、;；:：]$/u, '');
  return kept.length > trimmed.length * 0.8 ? undefined : kept;
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

function sharedTerms(unitTerms: readonly string[], queryTerms: ReadonlySet<string>): number {
  if (queryTerms.size === 0) return 0;
  let shared = 0;
  for (const term of unitTerms) if (queryTerms.has(term)) shared++;
  return shared;
}
