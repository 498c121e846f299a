/**
 * A skimming JSON reader for indexing huge lines: it builds the value like JSON.parse, but a
 * string longer than `maxStringBytes` is not decoded — it becomes a `SkippedString` holding its
 * byte range — and the search for a string's end jumps from quote to quote (memchr speed). Index
 * passes use it on lines of megabytes where only the small fields matter.
 *
 * It checks structure but not the inside of skipped strings; a line it accepts that JSON.parse
 * would reject is caught when that line is actually parsed or written.
 */

/** A string value that was not decoded: bytes [start, end) of the line, without the quotes. */
export class SkippedString {
  constructor(
    readonly start: number,
    readonly end: number,
  ) {}
  get byteLength(): number {
    return this.end - this.start;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Parses `bytes` as one JSON value, skipping long strings. Throws SyntaxError on bad structure. */
export function skimJson(bytes: Buffer, maxStringBytes = 4096): unknown {
  const n = bytes.length;
  let i = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at byte ${i}`);
  };
  const ws = () => {
    while (i < n) {
      const c = bytes[i]!;
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
      else break;
    }
  };
  const str = (): string | SkippedString => {
    const start = i + 1;
    let from = start;
    let escaped = false;
    let end: number;
    for (;;) {
      const q = bytes.indexOf(QUOTE, from);
      if (q === -1) return fail('unterminated string');
      let k = q - 1;
      while (k >= start && bytes[k] === BACKSLASH) k--;
      if ((q - 1 - k) % 2 === 0) {
        end = q;
        break;
      }
      escaped = true;
      from = q + 1;
    }
    i = end + 1;
    if (end - start > maxStringBytes) return new SkippedString(start, end);
    for (let k = start; k < end; k++) {
      const c = bytes[k]!;
      if (c < 0x20) return fail('control character in string');
      if (c === BACKSLASH) escaped = true;
    }
    return escaped ? (JSON.parse(bytes.toString('utf8', start - 1, end + 1)) as string) : bytes.toString('utf8', start, end);
  };
  const literal = (word: string, value: unknown) => {
    for (let k = 0; k < word.length; k++) if (bytes[i + k] !== word.charCodeAt(k)) fail(`unexpected token`);
    i += word.length;
    return value;
  };
  const num = () => {
    const start = i;
    while (i < n) {
      const c = bytes[i]!;
      if ((c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45) i++;
      else break;
    }
    const text = bytes.toString('latin1', start, i);
    if (!/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text)) fail('bad number');
    return Number(text);
  };
  const value = (depth: number): unknown => {
    if (depth > 512) fail('nesting too deep');
    ws();
    const c = bytes[i];
    if (c === 0x7b) {
      i++;
      const obj: Record<string, unknown> = {};
      ws();
      if (bytes[i] === 0x7d) {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        if (bytes[i] !== QUOTE) fail('expected a key');
        const key = str();
        if (typeof key !== 'string') fail('key too long');
        ws();
        if (bytes[i] !== 0x3a) fail('expected ":"');
        i++;
        const v = value(depth + 1);
        // as JSON.parse does: "__proto__" is an own property, never the prototype
        if (key === '__proto__') Object.defineProperty(obj, key, { value: v, enumerable: true, writable: true, configurable: true });
        else obj[key as string] = v;
        ws();
        if (bytes[i] === 0x2c) {
          i++;
          continue;
        }
        if (bytes[i] === 0x7d) {
          i++;
          return obj;
        }
        fail('expected "," or "}"');
      }
    }
    if (c === 0x5b) {
      i++;
      const arr: unknown[] = [];
      ws();
      if (bytes[i] === 0x5d) {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value(depth + 1));
        ws();
        if (bytes[i] === 0x2c) {
          i++;
          continue;
        }
        if (bytes[i] === 0x5d) {
          i++;
          return arr;
        }
        fail('expected "," or "]"');
      }
    }
    if (c === QUOTE) return str();
    if (c === 0x74) return literal('true', true);
    if (c === 0x66) return literal('false', false);
    if (c === 0x6e) return literal('null', null);
    if (c !== undefined && (c === 0x2d || (c >= 0x30 && c <= 0x39))) return num();
    return fail('unexpected token');
  };
  const result = value(0);
  ws();
  if (i !== n) fail('unexpected data after the value');
  return result;
}

/** Length of a string value as the index sees it: characters, or bytes when it was skipped. */
export function skimmedLength(value: unknown): number {
  return typeof value === 'string' ? value.length : value instanceof SkippedString ? value.byteLength : 0;
}
