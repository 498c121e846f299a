/**
 * A set of small non-negative integers as bytes: sorted, each stored as its difference from the
 * previous one in LEB128 (7 bits a byte, high bit set on all but the last byte of a number).
 * Dense ids (the objects of one session, the hashes of one reference file) take a byte each.
 */
import { IntegrityError } from '../errors.js';

/** Encodes distinct non-negative integer ids (any order) as a sorted delta-LEB128 list. */
export function encodeIdList(ids: Iterable<number>): Buffer {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  const out: number[] = [];
  let previous = 0;
  for (const id of sorted) {
    if (!Number.isSafeInteger(id) || id < 0) throw new RangeError(`object id ${id} is not a non-negative safe integer`);
    pushVarint(out, id - previous);
    previous = id;
  }
  return Buffer.from(out);
}

/** Appends one non-negative integer to `out` in LEB128 (the form every number of a list takes). */
export function pushVarint(out: number[], n: number): void {
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
}

/** Decodes a list from `encodeIdList`: the ids, ascending. `what` names the list in errors. */
export function decodeIdList(blob: Uint8Array | null | undefined, what: string): number[] {
  if (!blob || blob.byteLength === 0) return [];
  const ids: number[] = [];
  let previous = 0;
  let delta = 0;
  let scale = 1;
  for (let i = 0; i < blob.byteLength; i++) {
    const byte = blob[i]!;
    delta += (byte & 0x7f) * scale;
    if (byte & 0x80) {
      scale *= 0x80;
      if (scale > 2 ** 56) throw new IntegrityError(`${what}: damaged object list (a varint longer than 8 bytes at byte ${i})`);
      continue;
    }
    previous += delta;
    ids.push(previous);
    delta = 0;
    scale = 1;
  }
  if (scale !== 1) throw new IntegrityError(`${what}: damaged object list (it ends inside a varint)`);
  return ids;
}
