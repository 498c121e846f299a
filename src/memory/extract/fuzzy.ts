/**
 * Fuzzy matching of task names, for Chinese and English alike: "周报" ↔ "写周报",
 * "把周报发给我" ↔ "写周报", "the report" ↔ "finish the quarterly report".
 *
 * Both names are reduced to content units: Han characters minus function characters (把, 的,
 * 给, 我, …) and Latin words minus stop words, lower-cased and NFKC-normalised. The score mixes
 * the overlap coefficient of character bigrams within each Han run (order), the overlap
 * coefficient of the units themselves (content), and Dice on bigrams (so a short query does not
 * match every long name that happens to contain it equally well). Scores are 0..1.
 */
import { isFunctionWords, pastTenseBase } from './lexicons.js';

/** A candidate's score. */
export interface FuzzyMatch<T> {
  item: T;
  /** 0..1 */
  score: number;
}

const HAN_RUN = /\p{Script=Han}+/gu;
const LATIN_WORD = /[\p{L}\p{N}]+/gu;
// Characters that carry grammar, not content, in a task name.
const ZH_FUNCTION_CHARS = new Set([...'把将给的了地得我你他她它们这那个一要去来和与跟及并等吧呢啊吗呀哦么在是着过']);
const EN_STOP_WORDS = new Set(
  'a an the to of for on in at by with and or my our your his her their its this that these those it is are be do does did done i me we you task todo item please about from up'.split(' '),
);
// English words are also compared by their first five letters, so "reports" meets "report"
// and "reviewing" meets "review".
const STEM_LENGTH = 5;

/** Similarity of two task names, 0..1; 1 for identical content. */
export function similarity(a: string, b: string): number {
  return similarityOf(units(a), units(b));
}

function similarityOf(ua: Units, ub: Units): number {
  if (ua.units.length === 0 || ub.units.length === 0) return 0;
  // A change request is matched against every open task (rankMatches): most share no unit, and
  // then no bigram either (a bigram is two units), so every term below is 0.
  const sharedUnits = intersection(ua.units, ub.units);
  if (sharedUnits === 0) return 0;
  const content = sharedUnits / Math.min(ua.units.length, ub.units.length);
  const bigrams = ua.bigrams.length > 0 && ub.bigrams.length > 0;
  const sharedBigrams = bigrams ? intersection(ua.bigrams, ub.bigrams) : 0;
  const order = bigrams ? sharedBigrams / Math.min(ua.bigrams.length, ub.bigrams.length) : content;
  const dice = bigrams ? (2 * sharedBigrams) / (ua.bigrams.length + ub.bigrams.length) : (2 * sharedUnits) / (ua.units.length + ub.units.length);
  return round(0.4 * content + 0.35 * order + 0.25 * dice);
}

/** Candidates scored against `query`, best first, keeping those at or above `minScore` (default 0.35). */
export function rankMatches<T>(query: string, items: readonly T[], nameOf: (item: T) => string, minScore = 0.35): FuzzyMatch<T>[] {
  const scored: FuzzyMatch<T>[] = [];
  const uq = units(query); // once, not once per candidate
  for (const item of items) {
    const score = similarityOf(uq, units(nameOf(item)));
    if (score >= minScore) scored.push({ item, score });
  }
  // Stable: equal scores keep the caller's order (most recent first).
  return scored.sort((x, y) => y.score - x.score);
}

interface Units {
  units: string[];
  bigrams: string[];
}

// The names matched against are the user's task titles, the same ones message after message:
// their units are remembered (a bounded memo; results are never mutated).
const unitMemo = new Map<string, Units>();
const UNIT_MEMO_SIZE = 4096;

function units(text: string): Units {
  if (text.length > 200) return unitsOf(text);
  let u = unitMemo.get(text);
  if (u === undefined) {
    if (unitMemo.size >= UNIT_MEMO_SIZE) unitMemo.clear();
    unitMemo.set(text, (u = unitsOf(text)));
  }
  return u;
}

function unitsOf(text: string): Units {
  const normalized = text.normalize('NFKC').toLowerCase();
  const out: string[] = [];
  const bigrams: string[] = [];
  for (const match of normalized.matchAll(HAN_RUN)) {
    const chars = [...match[0]].filter((c) => !ZH_FUNCTION_CHARS.has(c));
    out.push(...chars);
    for (let i = 0; i + 1 < chars.length; i += 1) bigrams.push(chars[i]! + chars[i + 1]!);
  }
  const latin = normalized.replace(HAN_RUN, ' ');
  for (const match of latin.matchAll(LATIN_WORD)) {
    // Past forms meet their verb ("sent" ↔ "send"); function words of the lexicon carry no content.
    const word = pastTenseBase(match[0]) ?? match[0];
    if (!EN_STOP_WORDS.has(word) && !isFunctionWords(word)) out.push(word.length > STEM_LENGTH ? word.slice(0, STEM_LENGTH) : word);
  }
  return { units: out, bigrams };
}

/** Longest pair of lists intersected by comparing every item with every other. */
const SHORT_LISTS = 16;

/** |A ∩ B| over multisets. */
function intersection(a: readonly string[], b: readonly string[]): number {
  // Task names are a few units: a scan of `a` per item of `b` (each item of `a` used once) is
  // cheaper than a Map per pair of names, and a change request meets every open task's name.
  if (a.length <= SHORT_LISTS && b.length <= SHORT_LISTS) {
    let used = 0; // bit i: a[i] already matched
    let shared = 0;
    for (const y of b) {
      for (let i = 0; i < a.length; i++) {
        if ((used & (1 << i)) === 0 && a[i] === y) {
          used |= 1 << i;
          shared += 1;
          break;
        }
      }
    }
    return shared;
  }
  const counts = new Map<string, number>();
  for (const x of a) counts.set(x, (counts.get(x) ?? 0) + 1);
  let shared = 0;
  for (const y of b) {
    const n = counts.get(y) ?? 0;
    if (n > 0) {
      shared += 1;
      counts.set(y, n - 1);
    }
  }
  return shared;
}

const round = (x: number) => Math.round(x * 1000) / 1000;
