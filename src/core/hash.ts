/**
 * SHA-256 helpers. Content addresses in ctxvm are lowercase hex SHA-256 digests of the
 * uncompressed bytes; `isSha256Hex` is the gate every path built from a hash goes through.
 */
import { createHash, type Hash } from 'node:crypto';
import { UsageError } from '../errors.js';

/** Length of a SHA-256 hex digest, in characters. */
export const SHA256_HEX_LENGTH = 64;

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Lowercase hex SHA-256 of `data` (a string is hashed as its UTF-8 bytes). */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** An incremental SHA-256: feed chunks with `update`, read the digest once with `digestHex`. */
export interface Sha256Hasher {
  /** Adds bytes (a string is hashed as its UTF-8 bytes). Returns the hasher for chaining. */
  update(chunk: string | Uint8Array): Sha256Hasher;
  /** Total bytes fed so far. */
  readonly bytes: number;
  /** Lowercase hex digest; the hasher cannot be updated afterwards. */
  digestHex(): string;
}

/** Creates an incremental SHA-256 hasher that also counts the bytes it has seen. */
export function createSha256(): Sha256Hasher {
  const hash: Hash = createHash('sha256');
  let bytes = 0;
  const hasher: Sha256Hasher = {
    update(chunk) {
      bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk, 'utf8') : chunk.byteLength;
      hash.update(chunk);
      return hasher;
    },
    get bytes() {
      return bytes;
    },
    digestHex() {
      return hash.digest('hex');
    },
  };
  return hasher;
}

/** True when `value` is a lowercase 64-character hex string (uppercase is rejected, not folded). */
export function isSha256Hex(value: unknown): value is string {
  return typeof value === 'string' && SHA256_HEX.test(value);
}

/** Throws a `UsageError` naming `value` unless it is a lowercase SHA-256 hex digest. */
export function assertSha256Hex(value: unknown, what = 'hash'): asserts value is string {
  if (isSha256Hex(value)) return;
  const shown = typeof value === 'string' ? JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value) : typeof value;
  throw new UsageError(`invalid ${what} ${shown}: expected 64 lowercase hex characters (a sha256 digest)`);
}
