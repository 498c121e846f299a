/**
 * Where JSON text stops being JSON. `JSON.parse` says why but not always where (V8 omits the
 * position for some errors), so a small scanner finds the offset of the first error; the caller
 * turns it into a line and column a person can go to.
 */

/** Offset (UTF-16 index) of the first character that makes `text` invalid JSON, or -1 when valid. */
export function firstJsonErrorOffset(text: string): number {
  const n = text.length;
  let i = 0;
  const ws = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const string = (): boolean => {
    i++; // opening quote
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return true;
      }
      if (c < 0x20) return false;
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
            i++;
            return false;
          }
          i += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) {
          i++;
          return false;
        }
        i += 2;
        continue;
      }
      i++;
    }
    return false;
  };
  const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  const value = (depth: number): boolean => {
    if (depth > 10_000) return false;
    ws();
    const c = text[i];
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      ws();
      if (text[i] === close) {
        i++;
        return true;
      }
      for (;;) {
        ws();
        if (c === '{') {
          if (text[i] !== '"' || !string()) return false;
          ws();
          if (text[i] !== ':') return false;
          i++;
        }
        if (!value(depth + 1)) return false;
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === close) {
          i++;
          return true;
        }
        return false;
      }
    }
    if (c === '"') return string();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (!m || m[0] === '-') return false;
      i += m[0].length;
      return true;
    }
    for (const lit of ['true', 'false', 'null']) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return true;
      }
    }
    return false;
  };
  if (!value(0)) return Math.min(i, n);
  ws();
  return i < n ? i : -1;
}

/** 1-based line and column of `offset` in `text`, and its byte offset in UTF-8. */
export function positionOf(text: string, offset: number): { line: number; column: number; byteOffset: number } {
  let line = 1;
  let lineStart = 0;
  for (let k = 0; k < offset; k++) {
    if (text.charCodeAt(k) === 0x0a) {
      line++;
      lineStart = k + 1;
    }
  }
  return { line, column: offset - lineStart + 1, byteOffset: Buffer.byteLength(text.slice(0, lineStart), 'utf8') };
}
