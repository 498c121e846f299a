/**
 * UUIDs derived from another UUID under a seed: `deriveUuidBytes(seed, source)` is the first 16
 * bytes of sha256("ctxvm-derived-uuid/1", seed, source), with the version (4) and variant bits
 * of a random UUID. A branch names its lines this way (seed: the branch's session id, source: the
 * source line's uuid), so each branch still has uuids of its own, unique and random-looking, but
 * what it stores can name them by the source's uuids, which every sibling branch shares and
 * which therefore compress to almost nothing (src/session/trim/id-object.ts). Never change the
 * function: stored objects are decoded with it.
 */
import { createHash } from 'node:crypto';

const TAG = Buffer.from('ctxvm-derived-uuid/1\n', 'latin1');
const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** True for a lowercase, hyphenated UUID (any version). */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_TEXT.test(value);
}

/** 16 bytes of a UUID in its canonical lowercase text form (undefined for anything else). */
export function uuidBytes(text: string): Buffer | undefined {
  if (!isUuid(text)) return undefined;
  return Buffer.from(text.replaceAll('-', ''), 'hex');
}

/** Canonical lowercase text of 16 UUID bytes. */
export function uuidText(bytes: Uint8Array): string {
  const h = Buffer.from(bytes.buffer, bytes.byteOffset, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The UUID derived from `source` under `seed` (16 bytes each), as 16 bytes. */
export function deriveUuidBytes(seed: Uint8Array, source: Uint8Array): Buffer {
  const out = createHash('sha256').update(TAG).update(seed.subarray(0, 16)).update(source.subarray(0, 16)).digest().subarray(0, 16);
  out[6] = (out[6]! & 0x0f) | 0x40;
  out[8] = (out[8]! & 0x3f) | 0x80;
  return out;
}

/**
 * A function giving each source UUID its derived one under `seedUuid` (text forms); a source
 * that is not a canonical UUID gets a random one, as before derivation existed.
 */
export function uuidDeriver(seedUuid: string, fallback: () => string): (source?: string) => string {
  const seed = uuidBytes(seedUuid);
  return (source) => {
    const bytes = seed && source !== undefined ? uuidBytes(source) : undefined;
    return bytes ? uuidText(deriveUuidBytes(seed!, bytes)) : fallback();
  };
}
