/**
 * o200k_base's pre-tokenizer (gpt-tokenizer's O200K_TOKEN_SPLIT_REGEX) over ASCII, by hand. The
 * regex, all Unicode property classes, costs ~60 ns a character, most of an exact count; over
 * ASCII its seven alternatives reduce to a few character classes, scanned here at a few ns a
 * character. A piece is taken from here only when every character that decided it is ASCII; at
 * any other, the caller asks the regex for the piece at that position (every position starts a
 * match: any character is a letter, a digit, a space or "the rest"). `ascii-pieces.test.ts`
 * checks both give the same pieces.
 *
 * The alternatives, first that matches wins:
 *   1. [^\r\n\p{L}\p{N}]? [\p{Lu}…]* [\p{Ll}…]+ contraction?   an optional prefix, then a word
 *   2. [^\r\n\p{L}\p{N}]? [\p{Lu}…]+ [\p{Ll}…]* contraction?   (capitals only)
 *   3. \p{N}{1,3}
 *   4. " "? [^\s\p{L}\p{N}]+ [\r\n/]*                         punctuation
 *   5. \s* [\r\n]+                                           up to the last line break
 *   6. \s+(?!\S)                                             spaces but the one before a word
 *   7. \s+
 */

const UPPER = 1;
const LOWER = 2;
const DIGIT = 4;
const SPACE = 8;
/** \r or \n (also SPACE). */
const NEWLINE = 16;
/** Neither letter, digit nor space. */
const OTHER = 32;
/** Not ASCII: its class is the regex's to say. */
const UNKNOWN = 64;
/** Past the end of the text. */
const END = 0;
const LETTER = UPPER | LOWER;

const CLASS = (() => {
  const table = new Uint8Array(128).fill(OTHER);
  for (let c = 0x41; c <= 0x5a; c++) table[c] = UPPER;
  for (let c = 0x61; c <= 0x7a; c++) table[c] = LOWER;
  for (let c = 0x30; c <= 0x39; c++) table[c] = DIGIT;
  for (const c of [0x09, 0x0b, 0x0c, 0x20]) table[c] = SPACE;
  table[0x0a] = SPACE | NEWLINE;
  table[0x0d] = SPACE | NEWLINE;
  return table;
})();

const APOSTROPHE = 0x27;
const SLASH = 0x2f;
const BLANK = 0x20;

function kindAt(text: string, i: number): number {
  if (i >= text.length) return END;
  const code = text.charCodeAt(i);
  return code < 128 ? CLASS[code]! : UNKNOWN;
}

/** Where a word ending at `end` ends with its contraction ('s 't 're 've 'm 'll 'd, any case). */
function withContraction(text: string, end: number): number {
  if (text.charCodeAt(end) !== APOSTROPHE) return end;
  const a = text.charCodeAt(end + 1) | 0x20; // lower case (non-letters never match below)
  if (a === 0x73 || a === 0x74 || a === 0x6d || a === 0x64) return end + 2; // s t m d
  const b = text.charCodeAt(end + 2) | 0x20;
  if ((a === 0x6c && b === 0x6c) || ((a === 0x76 || a === 0x72) && b === 0x65)) return end + 3; // ll ve re
  return end;
}

/**
 * The end of the pre-tokenizer piece that starts at `start` (< text.length), or -1 when a
 * character that decides it is not ASCII.
 */
export function asciiPieceEnd(text: string, start: number): number {
  const c = kindAt(text, start);
  if (c & UNKNOWN) return -1;
  let k: number;
  // 1 and 2: a word, after one prefix character that is no letter, digit or line break
  const prefixed = (c & (LETTER | DIGIT | NEWLINE)) === 0;
  if (prefixed || c & LETTER) {
    let j = prefixed ? start + 1 : start;
    const from = j;
    while ((k = kindAt(text, j)) & UPPER) j++;
    if (k & UNKNOWN) return -1;
    const capitalsEnd = j;
    while ((k = kindAt(text, j)) & LOWER) j++;
    if (k & UNKNOWN) return -1;
    if (j > capitalsEnd) return withContraction(text, j);
    if (capitalsEnd > from) return withContraction(text, capitalsEnd);
  }
  // 3: up to three digits
  if (c & DIGIT) {
    let j = start + 1;
    while (j < start + 3 && (k = kindAt(text, j)) & DIGIT) j++;
    if (j < start + 3 && kindAt(text, j) & UNKNOWN) return -1;
    return j;
  }
  // 4: punctuation, after one optional blank, then any line breaks and slashes
  let j = text.charCodeAt(start) === BLANK ? start + 1 : start;
  k = kindAt(text, j);
  if (k & UNKNOWN) return -1;
  if (k & OTHER) {
    while ((k = kindAt(text, j)) & OTHER) j++;
    if (k & UNKNOWN) return -1;
    while (kindAt(text, j) & NEWLINE || text.charCodeAt(j) === SLASH) j++;
    return j;
  }
  // c is a space: 5, 6 or 7
  j = start;
  let lastNewline = -1;
  while ((k = kindAt(text, j)) & SPACE) {
    if (k & NEWLINE) lastNewline = j;
    j++;
  }
  if (k & UNKNOWN) return -1;
  if (lastNewline >= 0) return lastNewline + 1;
  if (k === END) return j;
  return j - 1 > start ? j - 1 : j;
}

/**
 * The end of the piece that starts at `at` (< text.length): by hand over ASCII, else from `regex`
 * (o200k's pre-tokenizer, global: its lastIndex is moved). -1 if the regex starts none there,
 * which no text does: every character is a letter, a digit, a space or one of "the rest".
 */
export function o200kPieceEnd(text: string, at: number, regex: RegExp): number {
  const end = asciiPieceEnd(text, at);
  if (end >= 0) return end;
  regex.lastIndex = at;
  const match = regex.exec(text);
  return match !== null && match.index === at ? regex.lastIndex : -1;
}
