/**
 * Write path of the fs object store. A buffered put knows its hash up front, so it skips all work
 * for content that already exists and writes straight to the hash path. A streaming put learns
 * its hash only at the end: it streams through the hasher and the compressor into a staging file,
 * then renames that to the hash path, or discards it if the object appeared meanwhile (dedup
 * without a second write). Either way a reader never sees a partial object, and two writers of
 * the same content (threads or processes) produce interchangeable files.
 */
import { statSync, utimesSync } from 'node:fs';
import { mkdir, open, rename, rm, utimes } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createAtomicWriter, withAtomicWriter, writeFileAtomicSync } from '../../core/atomic-file.js';
import { createSha256, sha256Hex } from '../../core/hash.js';
import { CtxvmError, IntegrityError, UsageError, ioError } from '../../errors.js';
import { compressBuffer, compressBufferSync, createCompressStream, FASTEST_LEVEL, resolveCodec, type CodecSettings } from '../object-codec.js';
import type { ByteSource, ObjectInfo, PutOptions } from '../object-store.js';
import { HEADER_BYTES, TRAILER_BYTES, encodeHeader, encodeTrailer, readFrame } from './objects-fs-format.js';
import { errnoCode, fsyncDirectory, type FsLayout } from './objects-fs-layout.js';
import { describeObject } from './objects-fs-read.js';
import type { OffThreadEncoder } from './objects-fs-encoder.js';

/**
 * Objects smaller than this are stored uncompressed, bytes. A compressed stream has its own
 * header (18 bytes for gzip) and short inputs barely shrink, while file systems round every file
 * up to a 4 KiB block anyway; the thread-pool round trip is not worth it.
 */
export const MIN_COMPRESS_BYTES = 256;

/**
 * A streaming put that ends within this many bytes is handled as a buffered put, bytes: it can
 * then skip compression for small or incompressible data and skip the staging file.
 */
const STREAM_BUFFER_BYTES = 64 * 1024;

const RAW: CodecSettings = { codec: 'none', level: 0 };

/** What the write path needs from its store. */
export interface FsWriteContext {
  layout: FsLayout;
  /** Clock, Unix ms: stamps mtimes, which gc compares with its grace period. */
  now: () => number;
  /** Codec of new objects unless a put overrides it. */
  defaults: CodecSettings;
  /**
   * Paths written without fsync, awaiting `flush()`; undefined when every put is made durable
   * before it returns (the default).
   */
  unsynced?: Set<string>;
  /** True when the store runs on an injected clock (tests): mtimes must be stamped from it. */
  injectedClock: boolean;
  /** Fan-out directories known to exist (saves a mkdir per put). */
  knownDirs: Set<string>;
  /** Hashes and compresses `offThread` puts. */
  encoder: OffThreadEncoder;
}

/** Compressed payload and codec for `bytes` (kept raw when small or incompressible). */
function encodePayload(bytes: Buffer, settings: CodecSettings, compressed: Buffer | undefined): { payload: Buffer; settings: CodecSettings } {
  if (compressed === undefined || compressed.length >= bytes.length) return { payload: bytes, settings: RAW };
  return { payload: compressed, settings };
}

function inlinePayload(ctx: FsWriteContext, bytes: Buffer, put: PutOptions, compressed: Buffer | undefined): { payload: Buffer; settings: CodecSettings } {
  const wanted = settingsFor(ctx, put);
  const compress = wanted.codec !== 'none' && bytes.length >= MIN_COMPRESS_BYTES;
  return encodePayload(bytes, wanted, compress ? (compressed ?? compressBufferSync(bytes, wanted)) : undefined);
}

/**
 * The hash of `bytes` and their payload compressed as `put` asks, both from the store's worker
 * thread (`PutOptions.offThread`); nothing is compressed for what is stored raw anyway.
 */
export async function encodeOffThread(ctx: FsWriteContext, bytes: Buffer, put: PutOptions): Promise<{ hash: string; compressed?: Buffer }> {
  const wanted = settingsFor(ctx, put);
  const settings = wanted.codec !== 'none' && bytes.length >= MIN_COMPRESS_BYTES ? wanted : RAW;
  const { hash, payload } = await ctx.encoder.encode(bytes, settings);
  return { hash, ...(payload ? { compressed: payload } : {}) };
}

/**
 * `putBuffer` for `inline` puts of new objects: compression and the atomic write happen on the
 * calling thread, with no thread-pool round trip. Undefined when the object may already exist
 * (the asynchronous path then deduplicates and refreshes it).
 */
function putNewInline(ctx: FsWriteContext, bytes: Buffer, hash: string, put: PutOptions, compressed: Buffer | undefined): ObjectInfo | undefined {
  const path = ctx.layout.objectPath(hash);
  if (statSync(path, { throwIfNoEntry: false })) return undefined;
  const { payload, settings } = inlinePayload(ctx, bytes, put, compressed);
  const dir = dirname(path);
  writeFileAtomicSync(path, [encodeHeader(settings.codec), payload, encodeTrailer(bytes.length)], { sync: !ctx.unsynced, knownDirs: ctx.knownDirs });
  ctx.unsynced?.add(path);
  if (ctx.injectedClock) {
    const stamp = new Date(ctx.now());
    utimesSync(path, stamp, stamp);
  }
  return { hash, size: bytes.length, storedSize: HEADER_BYTES + payload.length + TRAILER_BYTES, existed: false };
}

/**
 * Stores a whole buffer (see `ObjectStore.put`). `compressed`: its payload, compressed already as
 * `put` asks (see `encodeOffThread`); it is then written on the calling thread.
 */
export async function putBuffer(ctx: FsWriteContext, bytes: Buffer, put?: PutOptions, compressed?: Buffer): Promise<ObjectInfo> {
  const hash = put?.knownHash ?? sha256Hex(bytes);
  if (put?.inline || compressed) {
    const stored = putNewInline(ctx, bytes, hash, put ?? {}, compressed);
    if (stored) return stored;
  }
  const existing = await touchExisting(ctx, hash);
  if (existing) return existing;

  let settings = settingsFor(ctx, put);
  let payload = bytes;
  if (settings.codec === 'none' || bytes.length < MIN_COMPRESS_BYTES) {
    settings = RAW;
  } else {
    const compressed = await compressBuffer(bytes, settings);
    // Already-compressed input (images, archives) grows; keep such objects raw.
    if (compressed.length < bytes.length) payload = compressed;
    else settings = RAW;
  }

  const path = ctx.layout.objectPath(hash);
  try {
    await withAtomicWriter(
      path,
      async (writer) => {
        await writer.write(encodeHeader(settings.codec));
        await writer.write(payload);
        await writer.write(encodeTrailer(bytes.length));
      },
      { sync: !ctx.unsynced, mkdirs: !ctx.knownDirs.has(dirname(path)) },
    );
    ctx.knownDirs.add(dirname(path));
    ctx.unsynced?.add(path);
    await stampMtime(ctx, path, true);
  } catch (error) {
    return existingAfterFailure(ctx, hash, error);
  }
  return { hash, size: bytes.length, storedSize: HEADER_BYTES + payload.length + TRAILER_BYTES, existed: false };
}

/** Stores a byte stream (see `ObjectStore.putStream`). */
export async function putStream(ctx: FsWriteContext, source: ByteSource, put?: PutOptions): Promise<ObjectInfo> {
  const iterator = toAsyncIterator(source);
  try {
    const head: Buffer[] = [];
    let headBytes = 0;
    while (headBytes < STREAM_BUFFER_BYTES) {
      const next = await iterator.next();
      if (next.done) return await putBuffer(ctx, Buffer.concat(head, headBytes), put);
      const chunk = toBuffer(next.value);
      head.push(chunk);
      headBytes += chunk.length;
    }
    return await putLargeStream(ctx, head, { [Symbol.asyncIterator]: () => iterator }, put);
  } catch (error) {
    // Release the caller's source (a Readable is destroyed) whatever failed.
    await iterator.return?.().catch(() => {});
    throw error;
  }
}

async function putLargeStream(ctx: FsWriteContext, head: Buffer[], rest: AsyncIterable<unknown>, put?: PutOptions): Promise<ObjectInfo> {
  const settings = settingsFor(ctx, put);
  const hasher = createSha256();
  async function* plain(): AsyncGenerator<Buffer> {
    for (const chunk of head) {
      hasher.update(chunk);
      yield chunk;
    }
    for await (const chunk of rest) {
      const bytes = toBuffer(chunk);
      hasher.update(bytes);
      yield bytes;
    }
  }

  const writer = await createAtomicWriter(ctx.layout.stagingTarget(), { sync: !ctx.unsynced });
  try {
    await writer.write(encodeHeader(settings.codec));
    const compress = createCompressStream(settings);
    if (compress) {
      await pipeline(plain, compress, async (compressed: AsyncIterable<Buffer>) => {
        for await (const chunk of compressed) await writer.write(chunk);
      });
    } else {
      for await (const chunk of plain()) await writer.write(chunk);
    }
    await writer.write(encodeTrailer(hasher.bytes));
    await writer.commit();
  } catch (error) {
    // The source's own errors and the writer's ioErrors pass on unchanged.
    await writer.abort();
    throw error;
  }
  return publishStaged(ctx, writer.target, hasher.digestHex(), hasher.bytes, writer.bytesWritten);
}

/** Moves a committed staging file to its hash path, or discards it if the object exists. */
async function publishStaged(ctx: FsWriteContext, staged: string, hash: string, size: number, storedSize: number): Promise<ObjectInfo> {
  const { layout } = ctx;
  try {
    const existing = await touchExisting(ctx, hash);
    if (existing) return existing;
    const path = layout.objectPath(hash);
    await stampMtime(ctx, staged, true);
    await mkdir(layout.objectDir(hash), { recursive: true });
    try {
      await rename(staged, path);
    } catch (cause) {
      return await existingAfterFailure(ctx, hash, ioError('publish a staged object', path, cause));
    }
    if (ctx.unsynced) ctx.unsynced.add(path);
    else await fsyncDirectory(layout.objectDir(hash));
    return { hash, size, storedSize, existed: false };
  } finally {
    await rm(staged, { force: true });
  }
}

/**
 * If the object exists, refreshes its mtime (restarting its gc grace period, which is what makes a
 * deduplicated put as safe as a new one) and returns its info; otherwise undefined.
 */
async function touchExisting(ctx: FsWriteContext, hash: string): Promise<ObjectInfo | undefined> {
  const path = ctx.layout.objectPath(hash);
  try {
    await stampMtime(ctx, path);
    const handle = await open(path, 'r');
    try {
      const frame = await readFrame(handle, describeObject(ctx.layout, hash));
      return { hash, size: frame.size, storedSize: frame.storedSize, existed: true };
    } finally {
      await handle.close();
    }
  } catch (cause) {
    // Absent, or moved aside by a concurrent gc: the caller writes a fresh copy. A file with a
    // broken frame is replaced by that fresh copy too, so re-putting content repairs it.
    if (errnoCode(cause) === 'ENOENT' || IntegrityError.is(cause)) return undefined;
    throw CtxvmError.is(cause) ? cause : ioError('refresh an existing object', path, cause);
  }
}

/** After a failed write: if another writer published the same hash meanwhile, that is success. */
async function existingAfterFailure(ctx: FsWriteContext, hash: string, error: unknown): Promise<ObjectInfo> {
  const existing = await touchExisting(ctx, hash).catch(() => undefined);
  if (existing) return existing;
  throw error;
}

function settingsFor(ctx: FsWriteContext, put?: PutOptions): CodecSettings {
  const codec = put?.codec ?? ctx.defaults.codec;
  if (put?.effort === 'fast') return resolveCodec(codec, FASTEST_LEVEL[codec]);
  return codec === ctx.defaults.codec ? ctx.defaults : resolveCodec(codec);
}

async function stampMtime(ctx: FsWriteContext, path: string, fresh = false): Promise<void> {
  // a file just written already has mtime = now when the store runs on the real clock
  if (fresh && !ctx.injectedClock) return;
  const stamp = new Date(ctx.now());
  await utimes(path, stamp, stamp);
}

/** Bytes of a caller's chunk: strings are UTF-8, views are wrapped without copying. */
export function toBuffer(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  throw new UsageError(`expected bytes (Uint8Array or string), got ${chunk === null ? 'null' : typeof chunk}`);
}

function toAsyncIterator(source: ByteSource): AsyncIterator<unknown> {
  const iterable = source as Partial<AsyncIterable<unknown>> | null | undefined;
  const iterate = iterable?.[Symbol.asyncIterator];
  if (typeof iterate !== 'function') {
    throw new UsageError('putStream expects an async iterable of byte chunks or a readable stream');
  }
  return iterate.call(iterable);
}
