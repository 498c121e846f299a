/**
 * Spelled-out English numbers to digits, for the date resolver only: chrono reads "5 pm" and
 * "in 50 minutes" but not "five p. m." or "in fifty minutes", which is how speech front ends
 * (and many people) write them. Every edit is recorded, so a phrase found in the normalised
 * text maps back to the words the user wrote.
 *
 * Conversions: "five p. m." → "5 pm"; "seven thirty am" and "six oh five" → "7:30 am", "6:05";
 * clock readings said in hundreds before am/pm ("seven hundred and thirty am", "one thousand two
 * hundred p. m.") → "7:30 am", "12:00 pm"; "twenty five" → "25"; ordinals next to a month
 * ("march twenty second", "the fifth of may") → "22nd", "5th". Ordinals elsewhere stay words,
 * because "the second one" is a reference, not a date.
 */

/** Text after normalisation, with a way back to the original offsets. */
export interface NormalizedText {
  text: string;
  /** Maps a [start, end) range of `text` (UTF-16 code units) to the original text's range. */
  toOriginal(start: number, end: number): [number, number];
}

interface Piece {
  outStart: number;
  origStart: number;
  origEnd: number;
  /** Replaced pieces map only as a whole. */
  verbatim: boolean;
  length: number;
}

const UNITS: Readonly<Record<string, number>> = {
  zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9,
  ten: 10, eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16,
  seventeen: 17, eighteen: 18, nineteen: 19,
};
const TENS: Readonly<Record<string, number>> = { twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90 };
const ORDINALS: Readonly<Record<string, number>> = {
  first: 1, second: 2, third: 3, fourth: 4, fifth: 5, sixth: 6, seventh: 7, eighth: 8, ninth: 9, tenth: 10,
  eleventh: 11, twelfth: 12, twelveth: 12, thirteenth: 13, fourteenth: 14, fifteenth: 15, sixteenth: 16,
  seventeenth: 17, eighteenth: 18, nineteenth: 19, twentieth: 20, thirtieth: 30,
};
const MONTHS = /^(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)$/;
const TOKEN = /[ap]\.\s?m\.?(?![a-z])|[a-z]+(?:'[a-z]+)?/gi;
const MERIDIEM = /^[ap]\.\s?m\.?$|^[ap]m$/i;

interface Token {
  word: string;
  start: number;
  end: number;
}

const isNumberWord = (w: string) => w in UNITS || w in TENS || w in ORDINALS || w === 'hundred' || w === 'thousand';

/** Rewrites spelled-out numbers and "a. m."/"p. m." in `text`; see the module comment. */
export function normalizeEnglishNumbers(text: string): NormalizedText {
  const tokens: Token[] = [];
  for (const m of text.matchAll(TOKEN)) tokens.push({ word: m[0].toLowerCase(), start: m.index, end: m.index + m[0].length });
  const edits: Array<{ start: number; end: number; replacement: string }> = [];
  for (let i = 0; i < tokens.length; ) {
    const token = tokens[i]!;
    if (MERIDIEM.test(token.word)) {
      edits.push({ start: token.start, end: token.end, replacement: token.word.startsWith('a') ? 'am' : 'pm' });
      i += 1;
      continue;
    }
    if (!isNumberWord(token.word)) {
      i += 1;
      continue;
    }
    const run = readRun(tokens, i);
    const replacement = convertRun(run.words, tokens[i - 1]?.word, tokens[run.next], tokens[run.next + 1]);
    if (replacement !== undefined) edits.push({ start: token.start, end: tokens[run.next - 1]!.end, replacement });
    i = run.next;
  }
  return applyEdits(text, edits);
}

/** The longest run of number words from `i`, with "and" inside and "oh" before a unit. */
function readRun(tokens: readonly Token[], i: number): { words: string[]; next: number } {
  const words: string[] = [];
  let j = i;
  while (j < tokens.length) {
    const w = tokens[j]!.word;
    const adjacent = j === i || onlySpaceBetween(tokens[j - 1]!, tokens[j]!);
    if (!adjacent) break;
    if (isNumberWord(w)) {
      words.push(w);
      j += 1;
      // An ordinal ends a number ("twenty second").
      if (w in ORDINALS) break;
      continue;
    }
    const following = tokens[j + 1]?.word ?? '';
    if (w === 'and' && words.length > 0 && /hundred|thousand/.test(words.at(-1)!) && isNumberWord(following)) {
      j += 1;
      continue;
    }
    if (w === 'oh' && words.length === 1 && following in UNITS && UNITS[following]! < 10) {
      words.push('oh');
      j += 1;
      continue;
    }
    break;
  }
  return { words, next: j };
}

const onlySpaceBetween = (a: Token, b: Token) => b.start - a.end <= 2;

function convertRun(words: string[], previous: string | undefined, next: Token | undefined, afterNext: Token | undefined): string | undefined {
  const meridiem = next !== undefined && MERIDIEM.test(next.word);
  const last = words.at(-1)!;
  if (last in ORDINALS) {
    const nearMonth = (previous !== undefined && MONTHS.test(previous)) || (next?.word === 'of' && afterNext !== undefined && MONTHS.test(afterNext.word));
    // "second" and "first" alone are references ("the second one") unless next to a month.
    if (!nearMonth) return undefined;
    const value = cardinal(words.slice(0, -1)) + ORDINALS[last]!;
    return `${value}${ordinalSuffix(value)}`;
  }
  const clock = clockReading(words, meridiem);
  if (clock !== undefined) return clock;
  const value = cardinal(words);
  return Number.isFinite(value) ? String(value) : undefined;
}

/** "seven thirty", "six oh five", "seven hundred and thirty" (before am/pm) as H:MM. */
function clockReading(words: string[], meridiem: boolean): string | undefined {
  const first = words[0]!;
  const hour = UNITS[first];
  if (hour !== undefined && hour >= 1 && hour <= 12 && words.length >= 2 && !words.includes('hundred') && !words.includes('thousand')) {
    const rest = words.slice(1).filter((w) => w !== 'oh');
    const minute = cardinal(rest);
    const minuteShape = words[1] === 'oh' ? minute < 10 : rest[0]! in TENS || (UNITS[rest[0]!] ?? 0) >= 10;
    if (minuteShape && Number.isFinite(minute) && minute < 60) return `${hour}:${String(minute).padStart(2, '0')}`;
  }
  if (meridiem && (words.includes('hundred') || words.includes('thousand'))) {
    const value = cardinal(words);
    const h = Math.floor(value / 100);
    const m = value % 100;
    if (h >= 1 && h <= 24 && m < 60) return `${h}:${String(m).padStart(2, '0')}`;
  }
  return undefined;
}

/** Value of cardinal number words; NaN when they do not form one number. */
function cardinal(words: readonly string[]): number {
  if (words.length === 0) return 0;
  let total = 0;
  let current = 0;
  let lastKind: 'unit' | 'ten' | 'scale' | undefined;
  for (const w of words) {
    if (w in TENS) {
      if (lastKind === 'unit' || lastKind === 'ten') return Number.NaN;
      current += TENS[w]!;
      lastKind = 'ten';
    } else if (w in UNITS) {
      if (lastKind === 'unit' || (lastKind === 'ten' && UNITS[w]! >= 10)) return Number.NaN;
      current += UNITS[w]!;
      lastKind = 'unit';
    } else if (w === 'hundred') {
      current = (current || 1) * 100;
      lastKind = 'scale';
    } else if (w === 'thousand') {
      total += (current || 1) * 1000;
      current = 0;
      lastKind = 'scale';
    } else {
      return Number.NaN;
    }
  }
  return total + current;
}

function ordinalSuffix(n: number): string {
  if (n % 100 >= 11 && n % 100 <= 13) return 'th';
  return ['th', 'st', 'nd', 'rd'][n % 10] ?? 'th';
}

function applyEdits(text: string, edits: ReadonlyArray<{ start: number; end: number; replacement: string }>): NormalizedText {
  if (edits.length === 0) return { text, toOriginal: (start, end) => [start, end] };
  const pieces: Piece[] = [];
  let out = '';
  let cursor = 0;
  const push = (chunk: string, origStart: number, origEnd: number, verbatim: boolean) => {
    if (chunk.length === 0) return;
    pieces.push({ outStart: out.length, origStart, origEnd, verbatim, length: chunk.length });
    out += chunk;
  };
  for (const edit of edits) {
    push(text.slice(cursor, edit.start), cursor, edit.start, true);
    push(edit.replacement, edit.start, edit.end, false);
    cursor = edit.end;
  }
  push(text.slice(cursor), cursor, text.length, true);
  const locate = (pos: number, isEnd: boolean): number => {
    for (const p of pieces) {
      const inside = isEnd ? pos > p.outStart && pos <= p.outStart + p.length : pos >= p.outStart && pos < p.outStart + p.length;
      if (!inside) continue;
      if (p.verbatim) return p.origStart + (pos - p.outStart);
      return isEnd ? p.origEnd : p.origStart;
    }
    return isEnd ? text.length : 0;
  };
  return { text: out, toOriginal: (start, end) => [locate(start, false), locate(end, true)] };
}
