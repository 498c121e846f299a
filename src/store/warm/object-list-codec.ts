/**
 * Compact encodings of the session catalog's object references (migration 9):
 *
 * - an object's hash as a BLOB: a SHA-256 in hex becomes its 32 bytes (half the text, and no
 *   second copy of it in an index of text); anything else is kept as a 0x00 byte then its UTF-8,
 *   so the two forms never collide (a hash blob is exactly 32 bytes, a text one starts with 0);
 * - a snapshot's object list as a BLOB of the objects' small integer ids (`catalog_objects.id`),
 *   sorted, each stored as its difference from the previous one (src/core/id-list.ts). A growing
 *   session's snapshots share most objects, so ids are dense and most take one byte: a list
 *   costs about a byte per object instead of a ~230-byte row.
 */
import { IntegrityError } from '../../errors.js';

export { decodeIdList, encodeIdList } from '../../core/id-list.js';

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
