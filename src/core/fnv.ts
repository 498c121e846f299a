/**
 * 32-bit FNV-1a: a fast, non-cryptographic hash for hash tables and content-defined cut points.
 * The two forms agree where a string holds one char per byte ("binary strings").
 */

/** FNV-1a of `bytes[start, end)`. */
export function fnv1a(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

/** FNV-1a of the UTF-16 units `text[start, end)`. */
export function fnv1aOfChars(text: string, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** A hash's high bits folded into its low ones, for tables indexed by a mask of the low bits. */
export function foldHigh(h: number): number {
  return (h ^ (h >>> 15)) >>> 0;
}
