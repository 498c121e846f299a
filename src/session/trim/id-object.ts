/**
 * The id object of a trim: the UUIDs lifted out of its paged-out lines (lift.ts), 16 bytes each,
 * addressed by annotations as byte ranges of that list.
 *
 * Stored plain (format 1: the list itself, always a multiple of 16 bytes), or — when the trim is
 * of a branch whose line uuids were derived from its source's (src/core/derived-uuid.ts) — in
 * format 2, which names each derived uuid by the source uuid it came from:
 *
 *   "CTXIDS2"  16-byte seed  u32 count  ceil(count/8) flag bytes  count × 16 bytes  [one 0 byte]
 *
 * An entry whose flag bit (bit i % 8 of flag byte i / 8) is set holds the source uuid; it decodes
 * to `deriveUuidBytes(seed, source)`. The others hold the uuid itself. The final 0 byte is there
 * only when the total would be a multiple of 16, so a format-2 object is never mistaken for a
 * plain list. Why: a branch's own uuids are random bytes, incompressible and different in every
 * sibling branch, so they were most of the bytes that ten trimmed branches of one session added
 * to the store; named by the source's uuids they are the same bytes in every sibling.
 */
import { deriveUuidBytes } from '../../core/derived-uuid.js';
import { IntegrityError } from '../../errors.js';
import { UUID_BYTES } from '../dag/uuid-lift.js';

const MAGIC = Buffer.from('CTXIDS2', 'latin1');
const HEADER = MAGIC.length + 16 + 4;

/** How a branch's uuids relate to its source's: the seed and the inverse of the branch's id map. */
export interface IdSource {
  /** The seed the branch's uuids were derived under (its session id), 16 bytes. */
  seed: Buffer;
  /** The source uuid (16 bytes) a branch uuid (16 bytes) was made from, if any. */
  sourceOf(uuid: Buffer): Buffer | undefined;
}

/** Encodes a plain id list: format 2 when `source` names at least one entry, else the list as it is. */
export function encodeIdObject(list: Buffer, source: IdSource | undefined): Buffer {
  if (!source || list.length === 0 || list.length % UUID_BYTES !== 0) return list;
  const count = list.length / UUID_BYTES;
  const flagBytes = Math.ceil(count / 8);
  const size = HEADER + flagBytes + list.length;
  const out = Buffer.alloc(size % 16 === 0 ? size + 1 : size);
  MAGIC.copy(out, 0);
  source.seed.copy(out, MAGIC.length, 0, 16);
  out.writeUInt32BE(count, MAGIC.length + 16);
  const entries = HEADER + flagBytes;
  let named = 0;
  for (let i = 0; i < count; i++) {
    const uuid = list.subarray(i * UUID_BYTES, (i + 1) * UUID_BYTES);
    const from = source.sourceOf(uuid);
    // only what decodes back to the very same bytes is named by its source
    if (from && deriveUuidBytes(source.seed, from).equals(uuid)) {
      out[HEADER + (i >> 3)]! |= 1 << (i & 7);
      from.copy(out, entries + i * UUID_BYTES, 0, UUID_BYTES);
      named++;
    } else uuid.copy(out, entries + i * UUID_BYTES);
  }
  return named > 0 ? out : list;
}

/** The plain id list an id object holds (format 1 as it is, format 2 decoded). */
export function decodeIdObject(stored: Buffer, hash: string): Buffer {
  if (stored.length % UUID_BYTES === 0) return stored;
  const bad = (why: string) => new IntegrityError(`id object ${hash}: ${why}`);
  if (stored.length < HEADER || !stored.subarray(0, MAGIC.length).equals(MAGIC)) throw bad('neither a list of 16-byte uuids nor format 2');
  const seed = stored.subarray(MAGIC.length, MAGIC.length + 16);
  const count = stored.readUInt32BE(MAGIC.length + 16);
  const flagBytes = Math.ceil(count / 8);
  const size = HEADER + flagBytes + count * UUID_BYTES;
  if (stored.length !== (size % 16 === 0 ? size + 1 : size)) throw bad(`${stored.length} bytes do not fit ${count} entries`);
  const entries = HEADER + flagBytes;
  const out = Buffer.allocUnsafe(count * UUID_BYTES);
  for (let i = 0; i < count; i++) {
    const entry = stored.subarray(entries + i * UUID_BYTES, entries + (i + 1) * UUID_BYTES);
    const derived = (stored[HEADER + (i >> 3)]! >> (i & 7)) & 1;
    (derived ? deriveUuidBytes(seed, entry) : entry).copy(out, i * UUID_BYTES);
  }
  return out;
}
