/**
 * Captures one file into the object store as a `ManifestFile`, streaming: bytes → sha256 →
 * uuid-lift → line-boundary chunks (text stream) and fixed-size chunks (UUID side stream, which
 * only grows at its end when the session grows). Memory stays bounded by the read block, the
 * chunks in flight and, at worst, one very long line.
 *
 * A session file may be appended to while it is captured: only the bytes present when capture
 * starts are read, and an unterminated last line that is not valid JSON (a line still being
 * written) is left out and reported, so a snapshot is always whole lines.
 */
import { open } from 'node:fs/promises';
import { createSha256 } from '../../core/hash.js';
import { ioError } from '../../errors.js';
import type { ObjectInfo, ObjectStore } from '../../store/object-store.js';
import { ChunkSink } from './chunk-sink.js';
import { LineChunker } from './line-chunker.js';
import type { ManifestFile, SnapshotFileRole } from './manifest.js';
import { UUID_BYTES, UUID_LIFT_ID, UuidLiftEncoder } from './uuid-lift.js';

/** Side-stream chunk size, bytes (4 096 UUIDs). Fixed-size: the side stream only ever grows at its end. */
export const UUID_CHUNK_BYTES = 4096 * UUID_BYTES;
const READ_BLOCK_BYTES = 1 << 20;
const LF = 0x0a;

/** Options of `captureFile`. */
export interface CaptureFileOptions {
  store: ObjectStore;
  /** File to capture. */
  path: string;
  role: SnapshotFileRole;
  /** Path recorded in the manifest, relative to the session folder. */
  relativePath: string;
  /** Called for every object stored (new or deduplicated). */
  onStored?: (info: ObjectInfo) => void;
  /** Called with bytes read so far. */
  onProgress?: (bytes: number) => void;
  /**
   * Leave out an unterminated last line that is not valid JSON (default: true for `.jsonl` files,
   * which agents append to; other files are captured whole).
   */
  dropIncompleteTail?: boolean;
  signal?: AbortSignal;
}

/** A bytes source for `captureBytes`, plus its modification time. */
export interface CaptureSource {
  blocks: AsyncIterable<Buffer>;
  mtimeMs: number;
}

/** Whether an unterminated last line is a complete JSON value (then it is kept). */
function isCompleteLine(bytes: Buffer): boolean {
  const text = bytes.toString('utf8').trim();
  if (text === '') return true;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Captures the bytes of `source` (already limited to what should be read). */
export async function captureBytes(options: Omit<CaptureFileOptions, 'path'>, source: CaptureSource): Promise<ManifestFile> {
  const { store } = options;
  const sinkOptions = options.onStored ? { onStored: options.onStored } : {};
  const text = new ChunkSink(store, sinkOptions);
  const uuids = new ChunkSink(store, sinkOptions);
  const chunker = new LineChunker();
  const encoder = new UuidLiftEncoder();
  const hasher = createSha256();
  let uuidPending = 0;
  let read = 0;

  const feedText = async (bytes: Buffer) => {
    let from = 0;
    for (const cut of chunker.push(bytes)) {
      await text.write(bytes.subarray(from, cut));
      await text.cut();
      from = cut;
    }
    if (from < bytes.length) await text.write(bytes.subarray(from));
  };
  const feedUuids = async (bytes: Buffer) => {
    let from = 0;
    while (from < bytes.length) {
      const take = Math.min(UUID_CHUNK_BYTES - uuidPending, bytes.length - from);
      await uuids.write(bytes.subarray(from, from + take));
      uuidPending += take;
      from += take;
      if (uuidPending === UUID_CHUNK_BYTES) {
        await uuids.cut();
        uuidPending = 0;
      }
    }
  };
  const emit = async (bytes: Buffer) => {
    if (bytes.length === 0) return;
    hasher.update(bytes);
    const lifted = encoder.push(bytes);
    await feedText(lifted.text);
    await feedUuids(lifted.uuids);
  };

  let tail: Buffer[] = [];
  let tailBytes = 0;
  let droppedTailBytes = 0;
  // The bytes after the last newline are held back only when an incomplete last line may be
  // dropped; otherwise (an import) they stream on, so a member without newlines is not held whole.
  const dropIncomplete = options.dropIncompleteTail ?? options.relativePath.endsWith('.jsonl');
  try {
    for await (const block of source.blocks) {
      if (options.signal?.aborted) throw options.signal.reason ?? new Error('aborted');
      read += block.length;
      const nl = block.lastIndexOf(LF);
      if (!dropIncomplete) {
        await emit(block);
      } else if (nl === -1) {
        tail.push(block);
        tailBytes += block.length;
      } else {
        for (const t of tail) await emit(t);
        await emit(block.subarray(0, nl + 1));
        tail = nl + 1 < block.length ? [block.subarray(nl + 1)] : [];
        tailBytes = block.length - nl - 1;
      }
      options.onProgress?.(read);
    }
    if (tailBytes > 0) {
      const last = Buffer.concat(tail, tailBytes);
      if (isCompleteLine(last)) await emit(last);
      else droppedTailBytes = tailBytes;
    }
    const rest = encoder.end();
    await feedText(rest.text);
    await feedUuids(rest.uuids);
    const [textChunks, uuidChunks] = [await text.finish(), await uuids.finish()];
    return {
      role: options.role,
      path: options.relativePath,
      bytes: hasher.bytes,
      sha256: hasher.digestHex(),
      mtimeMs: Math.round(source.mtimeMs),
      encoding: UUID_LIFT_ID,
      text: textChunks,
      uuids: uuidChunks,
      ...(droppedTailBytes > 0 ? { droppedTailBytes } : {}),
    };
  } catch (error) {
    await Promise.all([text.settle(), uuids.settle()]);
    throw error;
  }
}

/** Captures a file: the bytes it has when capture starts. */
export async function captureFile(options: CaptureFileOptions): Promise<ManifestFile> {
  let handle;
  try {
    handle = await open(options.path, 'r');
  } catch (cause) {
    throw ioError('read', options.path, cause);
  }
  try {
    const info = await handle.stat();
    const size = info.size;
    async function* blocks(): AsyncGenerator<Buffer> {
      let position = 0;
      while (position < size) {
        const buffer = Buffer.allocUnsafe(Math.min(READ_BLOCK_BYTES, size - position));
        const { bytesRead } = await handle!.read(buffer, 0, buffer.length, position);
        if (bytesRead === 0) break; // truncated meanwhile: capture what was there
        position += bytesRead;
        yield bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead);
      }
    }
    try {
      return await captureBytes(options, { blocks: blocks(), mtimeMs: info.mtimeMs });
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException)?.syscall) throw ioError('read', options.path, cause);
      throw cause;
    }
  } finally {
    await handle.close();
  }
}
