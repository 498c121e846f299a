/**
 * On-disk framing of one object file:
 *
 *   offset 0  4 bytes  magic "CTXO"
 *          4  1 byte   format version (1)
 *          5  1 byte   codec id (0 none, 1 gzip, 2 brotli; see object-codec.ts)
 *          6  2 bytes  reserved, zero
 *          8  ...      payload: the object's bytes, compressed with that codec
 *   end - 8   8 bytes  uncompressed size, unsigned big-endian
 *
 * The size sits in a trailer rather than the header because a streaming put only knows it at the
 * end and writes strictly append-only (through the atomic writer); `stat` reads both ends without
 * decompressing anything.
 */
import type { FileHandle } from 'node:fs/promises';
import { IntegrityError } from '../../errors.js';
import { codecFromId, codecId } from '../object-codec.js';
import type { ObjectCodecName } from '../object-store.js';

const MAGIC = Buffer.from('CTXO', 'latin1');
const FORMAT_VERSION = 1;
/** Header length, bytes. */
export const HEADER_BYTES = 8;
/** Trailer length, bytes. */
export const TRAILER_BYTES = 8;

/** Where the payload of an object file lies and what it decodes to. */
export interface ObjectFrame {
  codec: ObjectCodecName;
  /** Uncompressed size, bytes. */
  size: number;
  /** First payload byte, offset in the file. */
  payloadStart: number;
  /** One past the last payload byte, offset in the file. */
  payloadEnd: number;
  /** Whole file, bytes. */
  storedSize: number;
}

export function encodeHeader(codec: ObjectCodecName): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header, 0);
  header[4] = FORMAT_VERSION;
  header[5] = codecId(codec);
  return header;
}

export function encodeTrailer(size: number): Buffer {
  const trailer = Buffer.alloc(TRAILER_BYTES);
  trailer.writeBigUInt64BE(BigInt(size));
  return trailer;
}

/** Validates header and trailer; `what` names the object in errors (hash and path). */
export function parseFrame(header: Buffer, trailer: Buffer, storedSize: number, what: string): ObjectFrame {
  if (storedSize < HEADER_BYTES + TRAILER_BYTES) {
    throw new IntegrityError(`${what}: truncated object file (${storedSize} bytes, at least ${HEADER_BYTES + TRAILER_BYTES} expected)`);
  }
  if (!header.subarray(0, 4).equals(MAGIC)) throw new IntegrityError(`${what}: not a ctxvm object file (bad magic)`);
  if (header[4] !== FORMAT_VERSION) {
    throw new IntegrityError(`${what}: object format version ${header[4]} is not supported (expected ${FORMAT_VERSION})`, {
      hint: 'upgrade ctxvm',
    });
  }
  const codec = codecFromId(header[5]!);
  if (codec === undefined) throw new IntegrityError(`${what}: unknown codec id ${header[5]}`, { hint: 'upgrade ctxvm' });
  const size = trailer.readBigUInt64BE();
  if (size > BigInt(Number.MAX_SAFE_INTEGER)) throw new IntegrityError(`${what}: implausible size ${size} in trailer`);
  return { codec, size: Number(size), payloadStart: HEADER_BYTES, payloadEnd: storedSize - TRAILER_BYTES, storedSize };
}

/** Parses the frame of a whole object file held in memory. */
export function parseFrameOf(file: Buffer, what: string): ObjectFrame {
  return parseFrame(file.subarray(0, HEADER_BYTES), file.subarray(Math.max(0, file.length - TRAILER_BYTES)), file.length, what);
}

/** Reads only the header and trailer of an open object file. */
export async function readFrame(handle: FileHandle, what: string): Promise<ObjectFrame & { mtimeMs: number }> {
  const info = await handle.stat();
  const header = Buffer.alloc(HEADER_BYTES);
  const trailer = Buffer.alloc(TRAILER_BYTES);
  if (info.size >= HEADER_BYTES + TRAILER_BYTES) {
    await handle.read(header, 0, HEADER_BYTES, 0);
    await handle.read(trailer, 0, TRAILER_BYTES, info.size - TRAILER_BYTES);
  }
  return { ...parseFrame(header, trailer, info.size, what), mtimeMs: info.mtimeMs };
}
