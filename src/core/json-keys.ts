/**
 * Known JSON object keys matched on their bytes: a walker over raw JSON decodes a key only when it
 * is not one it expects (decoding a short string costs more than the rest of its walk).
 */

/** Finds a known key by the bytes between its quotes; undefined when it is not one of them. */
export type KeyTable = (b: Uint8Array, start: number, end: number) => string | undefined;

function keyCode(b: Uint8Array, start: number, end: number): number {
  return ((end - start) << 16) | (b[start]! << 8) | b[end - 1]!;
}

/** A table of `keys` (plain ASCII names; a key written with escapes is never matched). */
export function createKeyTable(keys: Iterable<string>): KeyTable {
  const table = new Map<number, { bytes: Buffer; key: string }[]>();
  for (const key of new Set(keys)) {
    const bytes = Buffer.from(key, 'latin1');
    if (bytes.length === 0) continue;
    const code = keyCode(bytes, 0, bytes.length);
    table.set(code, [...(table.get(code) ?? []), { bytes, key }]);
  }
  return (b, start, end) => {
    if (end <= start) return undefined;
    const candidates = table.get(keyCode(b, start, end));
    if (!candidates) return undefined;
    const n = end - start;
    for (const c of candidates) {
      let k = 0;
      while (k < n && b[start + k] === c.bytes[k]) k++;
      if (k === n) return c.key;
    }
    return undefined;
  };
}
