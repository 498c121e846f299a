/**
 * Compression codecs for stored objects, over node:zlib only.
 *
 * Default: brotli quality 1. Measured with `node bench/object-store.bench.mjs` on 52.5 MB of
 * synthetic Claude Code JSONL (gen-claude-session.mjs --target-mb 50), Node 20.20, a 2-CPU AMD
 * EPYC VM shared with other jobs (load 4-6 throughout, so speeds are pessimistic and noisy):
 * input MB/s as the range over four runs of best-of-3/5, and the stored/original ratio.
 *
 *   codec     whole file (1 call)    each line (6471 calls)   each line >= 4 KiB (2183 calls,
 *                                                             what the trimmer pages out)
 *   gzip-1     37-81 MB/s  0.358      27-53 MB/s  0.419        40-55 MB/s  0.398
 *   gzip-6     23-35 MB/s  0.330      21-41 MB/s  0.400        23-38 MB/s  0.377
 *   brotli-1  194-284 MB/s 0.243      75-147 MB/s 0.359       118-177 MB/s 0.326
 *   brotli-4   35-69 MB/s  0.181      20-34 MB/s  0.332        19-59 MB/s  0.301
 *
 * brotli-1 is the only codec that reaches the 150 MB/s the trimmer's hot path asks for (whole
 * files always, page-sized payloads in the quieter runs; per-call setup drags it down on small
 * lines, which the trimmer keeps inline and the store keeps raw under 256 bytes anyway), and it
 * compresses better than gzip at either level. brotli-4 and gzip-6 are 3-6x slower for a few
 * points of ratio. Level 1 is the default level of both codecs for the same reason.
 *
 * Compression is not what limits a durable put, though: fsync is (see the bench's second table).
 */
import { promisify } from 'node:util';
import {
  brotliCompress,
  brotliCompressSync,
  brotliDecompress,
  constants,
  createBrotliCompress,
  createBrotliDecompress,
  createGunzip,
  createGzip,
  gunzip,
  gzip,
  gzipSync,
  type BrotliOptions,
  type ZlibOptions,
} from 'node:zlib';
import type { Transform } from 'node:stream';
import { UsageError } from '../errors.js';
import type { ObjectCodecName } from './object-store.js';

/** Codec of new objects when none is configured. */
export const DEFAULT_CODEC: ObjectCodecName = 'brotli';

/** Default level per codec: gzip level 1 (1..9), brotli quality 1 (0..11). */
export const DEFAULT_LEVEL: Readonly<Record<ObjectCodecName, number>> = { none: 0, gzip: 1, brotli: 1 };

/** The fastest level per codec (`PutOptions.effort: 'fast'`): brotli 0 (~20% faster than 1, ~7% larger). */
export const FASTEST_LEVEL: Readonly<Record<ObjectCodecName, number>> = { none: 0, gzip: 1, brotli: 0 };

const LEVEL_RANGE: Readonly<Record<ObjectCodecName, readonly [number, number]>> = {
  none: [0, 0],
  gzip: [1, 9],
  brotli: [0, 11],
};

/** One-byte codec ids written into object headers. Never renumber: stored files depend on them. */
const CODEC_IDS: Readonly<Record<ObjectCodecName, number>> = { none: 0, gzip: 1, brotli: 2 };
const CODEC_BY_ID: ReadonlyMap<number, ObjectCodecName> = new Map(
  Object.entries(CODEC_IDS).map(([name, id]) => [id, name as ObjectCodecName]),
);

/** A codec with its level resolved and validated. */
export interface CodecSettings {
  codec: ObjectCodecName;
  /** gzip level (1..9) or brotli quality (0..11); 0 for 'none'. */
  level: number;
}

/** Validates a codec name and level, filling in the codec's default level. */
export function resolveCodec(codec: ObjectCodecName = DEFAULT_CODEC, level?: number): CodecSettings {
  const range = LEVEL_RANGE[codec as ObjectCodecName] as readonly [number, number] | undefined;
  if (!range) throw new UsageError(`unknown codec ${JSON.stringify(codec)}: expected 'gzip', 'brotli' or 'none'`);
  if (level === undefined || codec === 'none') return { codec, level: DEFAULT_LEVEL[codec] };
  if (!Number.isInteger(level) || level < range[0] || level > range[1]) {
    throw new UsageError(`invalid ${codec} level ${level}: expected an integer from ${range[0]} to ${range[1]}`);
  }
  return { codec, level };
}

/** The header byte for `codec`. */
export function codecId(codec: ObjectCodecName): number {
  return CODEC_IDS[codec];
}

/** The codec for a header byte, or undefined for an id this version does not know. */
export function codecFromId(id: number): ObjectCodecName | undefined {
  return CODEC_BY_ID.get(id);
}

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);
const brotliCompressAsync = promisify(brotliCompress);
const brotliDecompressAsync = promisify(brotliDecompress);

/**
 * Output chunk size for a one-call (de)compression of `bytes`, bytes: half the input (at most
 * 1 MiB), so compressed text (a third of its size at brotli-1) comes back in one piece, without
 * the concatenation of several. zlib's default (16 KiB) costs a main-thread round trip per 16 KiB
 * of output — a third more CPU than the compression itself; larger chunks only allocate more.
 */
function chunkSizeFor(bytes: number): number {
  return Math.min(1024 * 1024, Math.max(16 * 1024, Math.ceil(bytes / 2)));
}

function brotliOptions(quality: number, sizeHint?: number): BrotliOptions {
  const params: Record<number, number> = { [constants.BROTLI_PARAM_QUALITY]: quality };
  if (sizeHint === undefined) return { params };
  params[constants.BROTLI_PARAM_SIZE_HINT] = sizeHint;
  return { params, chunkSize: chunkSizeFor(sizeHint) };
}

function gzipOptions(level: number): ZlibOptions {
  return { level };
}

/** Compresses a whole buffer on the libuv thread pool (the event loop stays free). */
export async function compressBuffer(data: Uint8Array, settings: CodecSettings): Promise<Buffer> {
  switch (settings.codec) {
    case 'none':
      return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    case 'gzip':
      return gzipAsync(data, { ...gzipOptions(settings.level), chunkSize: chunkSizeFor(data.byteLength) });
    case 'brotli':
      return brotliCompressAsync(data, brotliOptions(settings.level, data.byteLength));
  }
}

/** Compresses a whole buffer on the calling thread (see `PutOptions.inline`). */
export function compressBufferSync(data: Uint8Array, settings: CodecSettings): Buffer {
  switch (settings.codec) {
    case 'none':
      return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    case 'gzip':
      return gzipSync(data, { ...gzipOptions(settings.level), chunkSize: chunkSizeFor(data.byteLength) });
    case 'brotli':
      return brotliCompressSync(data, brotliOptions(settings.level, data.byteLength));
  }
}

/**
 * Decompresses a whole buffer; throws the raw zlib error on malformed input, and a RangeError
 * when the output would exceed `maxOutputBytes` (a corrupt or hostile object cannot balloon).
 */
export async function decompressBuffer(data: Buffer, codec: ObjectCodecName, maxOutputBytes?: number): Promise<Buffer> {
  // the size is known: one output chunk just large enough, so nothing is concatenated
  const limit = maxOutputBytes === undefined ? {} : { maxOutputLength: Math.max(1, maxOutputBytes), chunkSize: Math.min(8 * 1024 * 1024, Math.max(16 * 1024, maxOutputBytes + 64)) };
  switch (codec) {
    case 'none':
      return data;
    case 'gzip':
      return gunzipAsync(data, limit);
    case 'brotli':
      return brotliDecompressAsync(data, limit);
  }
}

/** A compressing transform, or undefined for 'none' (pass bytes through untouched). */
export function createCompressStream(settings: CodecSettings): Transform | undefined {
  switch (settings.codec) {
    case 'none':
      return undefined;
    case 'gzip':
      return createGzip(gzipOptions(settings.level));
    case 'brotli':
      return createBrotliCompress(brotliOptions(settings.level));
  }
}

/** A decompressing transform, or undefined for 'none'. */
export function createDecompressStream(codec: ObjectCodecName): Transform | undefined {
  switch (codec) {
    case 'none':
      return undefined;
    case 'gzip':
      return createGunzip();
    case 'brotli':
      return createBrotliDecompress();
  }
}
