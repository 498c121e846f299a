/**
 * Structural JSON scanning over bytes: where each key's value starts and ends, without building
 * the value. Strings are skipped quote to quote with `indexOf` (memchr speed), so a line of
 * megabytes is walked in microseconds and nothing is allocated for the parts nobody reads.
 *
 * The scanner checks structure (brackets, quotes, separators, literals, the characters of numbers)
 * but not what JSON.parse checks inside strings (control characters, escapes) or the exact number
 * grammar; callers that need a value parse its slice.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** Deepest nesting the scanner follows (deeper input is reported as malformed). */
export const MAX_SCAN_DEPTH = 512;

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Index of the first non-whitespace byte at or after `i` (or `end`). */
export function skipSpace(b: Uint8Array, i: number, end: number): number {
  while (i < end && isSpace(b[i])) i++;
  return i;
}

/** With `i` at an opening quote: the index just past the closing quote, or -1 when unterminated. */
export function skipString(b: Buffer, i: number, end: number): number {
  let from = i + 1;
  for (;;) {
    const q = b.indexOf(QUOTE, from);
    if (q === -1 || q >= end) return -1;
    let k = q - 1;
    while (b[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** True when `b[start, end)` looks like a JSON number or is a JSON literal (numbers are checked loosely). */
function isScalar(b: Buffer, start: number, end: number): boolean {
  const n = end - start;
  const c = b[start];
  if (c === 0x74) return n === 4 && b[start + 1] === 0x72 && b[start + 2] === 0x75 && b[start + 3] === 0x65; // true
  if (c === 0x6e) return n === 4 && b[start + 1] === 0x75 && b[start + 2] === 0x6c && b[start + 3] === 0x6c; // null
  if (c === 0x66) return n === 5 && b[start + 1] === 0x61 && b[start + 2] === 0x6c && b[start + 3] === 0x73 && b[start + 4] === 0x65; // false
  if (n === 0 || !(c === 0x2d || (c! >= 0x30 && c! <= 0x39))) return false;
  for (let i = start + 1; i < end; i++) {
    const d = b[i]!;
    if (!((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d)) return false;
  }
  return true;
}

/** With `i` at the first byte of a value: the index just past it, or -1 when it is malformed. */
export function skipValue(b: Buffer, i: number, end: number): number {
  const c = b[i];
  if (c === QUOTE) return skipString(b, i, end);
  if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
    // Brackets are matched by kind; separators inside are checked only loosely (a full check is
    // JSON.parse's job on the slices that are read).
    const stack: number[] = [];
    while (i < end) {
      const d = b[i]!;
      if (d === QUOTE) {
        i = skipString(b, i, end);
        if (i < 0) return -1;
        continue;
      }
      if (d === OPEN_OBJECT || d === OPEN_ARRAY) {
        if (stack.length >= MAX_SCAN_DEPTH) return -1;
        stack.push(d === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY);
      } else if (d === CLOSE_OBJECT || d === CLOSE_ARRAY) {
        if (stack.pop() !== d) return -1;
        if (stack.length === 0) return i + 1;
      } else if (d !== COMMA && d !== COLON && !isSpace(d)) {
        // a number or literal: check it as a whole
        let e = i + 1;
        while (e < end) {
          const x = b[e]!;
          if (x === COMMA || x === CLOSE_OBJECT || x === CLOSE_ARRAY || x === COLON || x === QUOTE || isSpace(x)) break;
          e++;
        }
        if (!isScalar(b, i, e)) return -1;
        i = e;
        continue;
      }
      i++;
    }
    return -1;
  }
  let e = i;
  while (e < end) {
    const x = b[e]!;
    if (x === COMMA || x === CLOSE_OBJECT || x === CLOSE_ARRAY || isSpace(x)) break;
    e++;
  }
  return isScalar(b, i, e) ? e : -1;
}

/** One member of a scanned object: byte ranges of its key (without quotes) and of its value. */
export interface ScannedMember {
  keyStart: number;
  keyEnd: number;
  valueStart: number;
  valueEnd: number;
}

/**
 * Calls `visit` for every member of the object at `b[start, end)` (which must start, after
 * whitespace, with `{`). Returns the index just past the object, or -1 when it is malformed
 * (members visited before the error were still reported). `visit` returning false stops early
 * (the result is then 0).
 */
export function scanObject(b: Buffer, start: number, end: number, visit: (m: ScannedMember) => boolean | void): number {
  let i = skipSpace(b, start, end);
  if (b[i] !== OPEN_OBJECT) return -1;
  i = skipSpace(b, i + 1, end);
  if (b[i] === CLOSE_OBJECT) return i + 1;
  const m: ScannedMember = { keyStart: 0, keyEnd: 0, valueStart: 0, valueEnd: 0 };
  for (;;) {
    if (b[i] !== QUOTE) return -1;
    const keyEnd = skipString(b, i, end);
    if (keyEnd < 0) return -1;
    m.keyStart = i + 1;
    m.keyEnd = keyEnd - 1;
    i = skipSpace(b, keyEnd, end);
    if (b[i] !== COLON) return -1;
    i = skipSpace(b, i + 1, end);
    const valueEnd = skipValue(b, i, end);
    if (valueEnd < 0) return -1;
    m.valueStart = i;
    m.valueEnd = valueEnd;
    if (visit(m) === false) return 0;
    i = skipSpace(b, valueEnd, end);
    if (b[i] === COMMA) {
      i = skipSpace(b, i + 1, end);
      continue;
    }
    if (b[i] === CLOSE_OBJECT) return i + 1;
    return -1;
  }
}

/**
 * Calls `visit` with the byte range of every element of the array at `b[start, end)`. Returns the
 * index just past the array, or -1 when it is malformed.
 */
export function scanArray(b: Buffer, start: number, end: number, visit: (valueStart: number, valueEnd: number) => void): number {
  let i = skipSpace(b, start, end);
  if (b[i] !== OPEN_ARRAY) return -1;
  i = skipSpace(b, i + 1, end);
  if (b[i] === CLOSE_ARRAY) return i + 1;
  for (;;) {
    const valueEnd = skipValue(b, i, end);
    if (valueEnd < 0) return -1;
    visit(i, valueEnd);
    i = skipSpace(b, valueEnd, end);
    if (b[i] === COMMA) {
      i = skipSpace(b, i + 1, end);
      continue;
    }
    if (b[i] === CLOSE_ARRAY) return i + 1;
    return -1;
  }
}

/** True when the key of `m` is `name` (an ASCII name; a key written with escapes is decoded first). */
export function keyIs(b: Buffer, m: ScannedMember, name: string): boolean {
  const n = m.keyEnd - m.keyStart;
  if (n === name.length) {
    let k = 0;
    while (k < n && b[m.keyStart + k] === name.charCodeAt(k)) k++;
    if (k === n) return true;
  }
  if (n <= name.length) return false;
  for (let k = m.keyStart; k < m.keyEnd; k++) if (b[k] === BACKSLASH) return keyText(b, m) === name;
  return false;
}

/** The key of `m` as a string (decoded when it holds escapes). */
export function keyText(b: Buffer, m: ScannedMember): string {
  const raw = b.indexOf(BACKSLASH, m.keyStart);
  if (raw === -1 || raw >= m.keyEnd) return b.toString('utf8', m.keyStart, m.keyEnd);
  return JSON.parse(b.toString('utf8', m.keyStart - 1, m.keyEnd + 1)) as string;
}

/** Parses the value at `b[start, end)` with JSON.parse (so it is fully checked). */
export function parseSlice(b: Buffer, start: number, end: number): unknown {
  return JSON.parse(b.toString('utf8', start, end));
}

/** The string value at `b[start, end)` (quotes included in the range), decoded. */
export function stringSlice(b: Buffer, start: number, end: number): string {
  return decodeStringBody(b, start + 1, end - 1);
}

/**
 * The JSON string whose text between the quotes is `b[start, end)`, decoded as JSON.parse does
 * (a SyntaxError where it would throw); plain text — no escape, no control character — is taken
 * as it is, without JSON.parse.
 */
export function decodeStringBody(b: Buffer, start: number, end: number): string {
  for (let k = start; k < end; k++) {
    const c = b[k]!;
    if (c < 0x20 || c === BACKSLASH) return JSON.parse(`"${b.toString('utf8', start, end)}"`) as string;
  }
  return b.toString('utf8', start, end);
}

/** The value at `b[start, end)`: a string decoded directly, anything else through JSON.parse. */
export function valueSlice(b: Buffer, start: number, end: number): unknown {
  return b[start] === QUOTE ? stringSlice(b, start, end) : parseSlice(b, start, end);
}
