/**
 * Compact encodings of the session catalog's object references (migration 8):
 *
 * - an object's hash as a BLOB: a SHA-256 in hex becomes its 32 bytes (half the text, and no
 *   second copy of it in an index of text); anything else is kept as a 0x00 byte then its UTF-8,
 *   so the two forms never collide (a hash blob is exactly 32 bytes, a text one starts with 0);
 * - a snapshot's object list as a BLOB of the objects' small integer ids (`catalog_objects.id`),
 *   sorted, each stored as its difference from the previous one in LEB128 (7 bits a byte). A
 *   growing session's snapshots share most objects, so ids are dense and most take one byte:
 *   a list costs about a byte per object instead of a ~230-byte row.
 */
import { IntegrityError } from '../../errors.js';

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** The BLOB form of a hash. */
export function hashToBlob(hash: string): Buffer {
  if (SHA256_HEX.test(hash)) return Buffer.from(hash, 'hex');
  return Buffer.concat([Buffer.from([0]), Buffer.from(hash, 'utf8')]);
}

/** The hash a BLOB from `hashToBlob` holds. */
export function blobToHash(blob: Uint8Array): string {
  const bytes = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
  if (bytes.length === 32) return bytes.toString('hex');
  if (bytes.length > 0 && bytes[0] === 0) return bytes.subarray(1).toString('utf8');
  throw new IntegrityError(`session catalog: an object hash of ${bytes.length} bytes is neither a SHA-256 nor a tagged text`);
}

/** Encodes distinct non-negative integer ids (any order) as a sorted delta-LEB128 list. */
export function encodeIdList(ids: Iterable<number>): Buffer {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  const out: number[] = [];
  let previous = 0;
  for (const id of sorted) {
    if (!Number.isSafeInteger(id) || id < 0) throw new RangeError(`object id ${id} is not a non-negative safe integer`);
    let delta = id - previous;
    previous = id;
    while (delta >= 0x80) {
      out.push((delta % 0x80) | 0x80);
      delta = Math.floor(delta / 0x80);
    }
    out.push(delta);
  }
  return Buffer.from(out);
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
