/**
 * Record ids chosen by the store: a kind prefix and a ULID-shaped body (48-bit time, 80 random
 * bits, Crockford base 32), so ids are unique across users and processes, sort roughly by
 * creation time, and say what they name in logs ("task_01J…").
 */
import { idRandomBytes } from '../../core/id-random.js';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Prefixes of generated ids, by record kind. */
export const ID_PREFIX = { task: 'task_', project: 'proj_', decision: 'dec_', fact: 'fact_' } as const;

/** A new id for a record created at `atMs` (Unix ms; clamped to 0..2^48-1). */
export function newRecordId(kind: keyof typeof ID_PREFIX, atMs: number): string {
  let time = Math.min(Math.max(0, Math.floor(Number.isFinite(atMs) ? atMs : 0)), 2 ** 48 - 1);
  let head = '';
  for (let i = 0; i < 10; i++) {
    head = CROCKFORD[time % 32]! + head;
    time = Math.floor(time / 32);
  }
  // 80 random bits: 16 characters of 5 bits each, taken from 10 random bytes.
  const bytes = idRandomBytes(10);
  let bits = 0n;
  for (const b of bytes) bits = (bits << 8n) | BigInt(b);
  let tail = '';
  for (let i = 0; i < 16; i++) {
    tail = CROCKFORD[Number(bits & 31n)]! + tail;
    bits >>= 5n;
  }
  return ID_PREFIX[kind] + head + tail;
}
