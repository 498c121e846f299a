/**
 * Read path of the fs object store. Every read checks what it decoded against the address: a
 * whole-buffer read before returning, a stream at its end (and it stops as soon as the output
 * outgrows the recorded size, so a corrupt file cannot balloon). Decoding failures are
 * `IntegrityError`s naming the hash and the file; file-system failures are `ioError`s.
 */
import { access, open, type FileHandle } from 'node:fs/promises';
import { pipeline, type Readable } from 'node:stream';
import { createSha256, sha256Hex } from '../../core/hash.js';
import { CtxvmError, IntegrityError, NotFoundError, ioError } from '../../errors.js';
import { createDecompressStream, decompressBuffer } from '../object-codec.js';
import type { ObjectStat } from '../object-store.js';
import { parseFrameOf, readFrame } from './objects-fs-format.js';
import { findInTrash } from './objects-fs-gc.js';
import { errnoCode, type FsLayout } from './objects-fs-layout.js';
import { countMarkers } from './objects-fs-refs.js';

/** "object <hash> (<path>)", how errors name an object. */
export function describeObject(layout: FsLayout, hash: string): string {
  return `object ${hash} (${layout.objectPath(hash)})`;
}

function objectNotFound(layout: FsLayout, hash: string): NotFoundError {
  return new NotFoundError(`object ${hash} not found in ${layout.root}`);
}

/** True when the object file is at its hash path (not counting one a gc holds in the trash). */
export async function existsAtPath(layout: FsLayout, hash: string): Promise<boolean> {
  const path = layout.objectPath(hash);
  try {
    await access(path);
    return true;
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return false;
    throw ioError('check an object', path, cause);
  }
}

/**
 * Opens an object for reading, or returns undefined if absent. An object a gc is deciding about
 * is read from the trash: its bytes are immutable and an open descriptor survives the unlink.
 */
async function openObject(layout: FsLayout, hash: string): Promise<FileHandle | undefined> {
  const path = layout.objectPath(hash);
  try {
    return await open(path, 'r');
  } catch (cause) {
    if (errnoCode(cause) !== 'ENOENT') throw ioError('open an object', path, cause);
  }
  const trash = await findInTrash(layout, hash);
  if (trash === undefined) return undefined;
  try {
    return await open(trash, 'r');
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return undefined;
    throw ioError('open an object', trash, cause);
  }
}

/** The whole object, verified (see `ObjectStore.get`). */
export async function readObject(layout: FsLayout, hash: string): Promise<Buffer> {
  const what = describeObject(layout, hash);
  const handle = await openObject(layout, hash);
  if (handle === undefined) throw objectNotFound(layout, hash);
  let file: Buffer;
  try {
    file = await handle.readFile();
  } catch (cause) {
    throw ioError('read an object', layout.objectPath(hash), cause);
  } finally {
    await handle.close();
  }
  const frame = parseFrameOf(file, what);
  let data: Buffer;
  try {
    data = await decompressBuffer(file.subarray(frame.payloadStart, frame.payloadEnd), frame.codec, frame.size);
  } catch (cause) {
    throw new IntegrityError(`${what}: corrupt ${frame.codec} data (${(cause as Error).message})`, { cause });
  }
  checkDecoded(what, hash, frame.size, data.length, sha256Hex(data));
  return data;
}

/** The object's bytes as chunks, verified at the end (see `ObjectStore.getStream`). */
export async function* readObjectChunks(layout: FsLayout, hash: string): AsyncGenerator<Buffer> {
  const what = describeObject(layout, hash);
  const handle = await openObject(layout, hash);
  if (handle === undefined) throw objectNotFound(layout, hash);
  try {
    const frame = await readFrame(handle, what);
    const hasher = createSha256();
    if (frame.payloadEnd > frame.payloadStart) {
      const raw = handle.createReadStream({ start: frame.payloadStart, end: frame.payloadEnd - 1, autoClose: false });
      const decompress = createDecompressStream(frame.codec);
      // pipeline destroys both streams on any error, which ends the iteration below with it.
      const decoded: Readable = decompress ? pipeline(raw, decompress, () => {}) : raw;
      try {
        for await (const chunk of decoded as AsyncIterable<Buffer>) {
          hasher.update(chunk);
          if (hasher.bytes > frame.size) throw new IntegrityError(`${what}: decodes to more than the ${frame.size} bytes recorded`);
          yield chunk;
        }
      } catch (error) {
        if (CtxvmError.is(error)) throw error;
        if ((error as NodeJS.ErrnoException).syscall) throw ioError('read an object', layout.objectPath(hash), error);
        throw new IntegrityError(`${what}: corrupt ${frame.codec} data (${(error as Error).message})`, { cause: error });
      } finally {
        raw.destroy();
        decompress?.destroy();
      }
    } else if (frame.codec !== 'none') {
      throw new IntegrityError(`${what}: empty ${frame.codec} payload`);
    }
    checkDecoded(what, hash, frame.size, hasher.bytes, hasher.digestHex());
  } finally {
    await handle.close();
  }
}

/** Metadata from the header and trailer only (see `ObjectStore.stat`). */
export async function statObject(layout: FsLayout, hash: string): Promise<ObjectStat | undefined> {
  const handle = await openObject(layout, hash);
  if (handle === undefined) return undefined;
  try {
    const frame = await readFrame(handle, describeObject(layout, hash));
    return {
      hash,
      size: frame.size,
      storedSize: frame.storedSize,
      codec: frame.codec,
      // put stamps the mtime with the store clock; ms precision survives the round trip
      createdAtMs: Math.round(frame.mtimeMs),
      refCount: await countMarkers(layout, hash),
    };
  } finally {
    await handle.close();
  }
}

function checkDecoded(what: string, hash: string, expectedSize: number, size: number, actualHash: string): void {
  if (size !== expectedSize) throw new IntegrityError(`${what}: decodes to ${size} bytes, ${expectedSize} recorded`);
  if (actualHash !== hash) throw new IntegrityError(`${what}: content hashes to ${actualHash}`);
}
