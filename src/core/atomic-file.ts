/**
 * Atomic file writes: data goes to a temp file beside the target, is fsynced, then renamed over
 * the target, and the directory is fsynced. A reader (or an agent) never sees a partial file; a
 * crash leaves at most a stray `.<name>.<random>.tmp` that `cleanupStaleTempFiles` removes.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writevSync } from 'node:fs';
import { open, rename, rm, mkdir, readdir, stat, type FileHandle } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname, basename, join } from 'node:path';
import { ioError } from '../errors.js';

const TEMP_SUFFIX = '.tmp';

// unique per process (pid) and per write (counter); the random part guards against pid reuse
const TEMP_TAG = `${process.pid.toString(36)}-${randomBytes(3).toString('hex')}`;
let tempCounter = 0;

/** Name of the temp file used while writing `target`. */
function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.${TEMP_TAG}-${(tempCounter++).toString(36)}${TEMP_SUFFIX}`);
}

/** fsync a directory so a rename into it survives a crash; file systems that refuse are tolerated. */
export async function fsyncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Some file systems refuse to fsync a directory; the rename is still atomic there.
  } finally {
    await handle?.close();
  }
}

export interface AtomicWriteOptions {
  /** File mode for the new file (default 0o644). */
  mode?: number;
  /** Create missing parent directories (default true). */
  mkdirs?: boolean;
  /**
   * fsync the file and its directory before returning (default true). Bulk writers turn it off
   * and make a batch durable at once (see `syncPaths`); the rename is atomic either way.
   */
  sync?: boolean;
}

/** An open atomic write. Nothing is visible at the target path until `commit()` resolves. */
export interface AtomicWriter {
  readonly target: string;
  readonly tempPath: string;
  /** Bytes written so far. */
  readonly bytesWritten: number;
  write(chunk: string | Uint8Array): Promise<void>;
  /** Writes buffered data to the temp file (so it can be read back before committing). */
  flush(): Promise<void>;
  /** fsync, rename into place, fsync the directory. */
  commit(): Promise<void>;
  /** Remove the temp file; the target is untouched. Safe to call more than once. */
  abort(): Promise<void>;
}

/** Opens an atomic writer for `target`. Writes are buffered into ~1 MiB blocks. */
export async function createAtomicWriter(target: string, options: AtomicWriteOptions = {}): Promise<AtomicWriter> {
  if (options.mkdirs !== false) await mkdir(dirname(target), { recursive: true });
  const tempPath = tempPathFor(target);
  let handle: FileHandle;
  try {
    handle = await open(tempPath, 'wx', options.mode ?? 0o644);
  } catch (cause) {
    throw ioError('create a temp file', tempPath, cause);
  }
  const BLOCK = 1 << 20;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let bytesWritten = 0;
  let closed = false;

  const flush = async () => {
    if (pendingBytes === 0) return;
    // one gathered write, without first copying the pieces into one buffer
    let parts = pending;
    let left = pendingBytes;
    pending = [];
    pendingBytes = 0;
    while (left > 0) {
      const { bytesWritten: n } = parts.length === 1 ? await handle.write(parts[0]!, 0, parts[0]!.length) : await handle.writev(parts);
      left -= n;
      if (left === 0) break;
      // a short write: go on from the first byte not written
      let skip = n;
      while (skip >= parts[0]!.length) skip -= parts.shift()!.length;
      parts = [parts[0]!.subarray(skip), ...parts.slice(1)];
    }
  };

  const writer: AtomicWriter = {
    target,
    tempPath,
    get bytesWritten() {
      return bytesWritten;
    },
    async write(chunk) {
      if (closed) throw new Error(`atomic writer for ${target} is already closed`);
      const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      bytesWritten += buf.length;
      if (buf.length >= BLOCK) {
        await flush();
        pending.push(buf);
        pendingBytes += buf.length;
        await flush();
        return;
      }
      pending.push(buf);
      pendingBytes += buf.length;
      if (pendingBytes >= BLOCK) await flush();
    },
    async flush() {
      if (closed) throw new Error(`atomic writer for ${target} is already closed`);
      await flush();
    },
    async commit() {
      if (closed) throw new Error(`atomic writer for ${target} is already closed`);
      closed = true;
      try {
        await flush();
        if (options.sync !== false) await handle.sync();
        await handle.close();
        await rename(tempPath, target);
      } catch (cause) {
        await handle.close().catch(() => {});
        await rm(tempPath, { force: true });
        throw ioError('write', target, cause);
      }
      if (options.sync !== false) await fsyncDirectory(dirname(target));
    },
    async abort() {
      if (!closed) {
        closed = true;
        await handle.close().catch(() => {});
      }
      await rm(tempPath, { force: true });
    },
  };
  return writer;
}

/**
 * Makes files written with `sync: false` durable: one `syncfs` of their file system via
 * `sync -f` where coreutils has it, else an fsync of each file and directory.
 */
export async function syncPaths(files: Iterable<string>, anyPathOnTheFileSystem: string): Promise<void> {
  const list = [...new Set(files)];
  if (list.length === 0) return;
  const { execFile } = await import('node:child_process');
  const viaSyncfs = await new Promise<boolean>((resolveSync) => {
    execFile('sync', ['-f', anyPathOnTheFileSystem], (error) => resolveSync(!error));
  });
  if (viaSyncfs) return;
  const dirs = new Set(list.map((f) => dirname(f)));
  const targets = [...list, ...dirs];
  for (let i = 0; i < targets.length; i += 16) {
    await Promise.all(
      targets.slice(i, i + 16).map(async (path) => {
        let handle: FileHandle | undefined;
        try {
          handle = await open(path, 'r');
          await handle.sync();
        } catch {
          // removed meanwhile (gc, dedup) or a directory the file system will not fsync
        } finally {
          await handle?.close();
        }
      }),
    );
  }
}

/** Writes `data` to `target` atomically (temp file, fsync, rename). */
export async function writeFileAtomic(target: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const writer = await createAtomicWriter(target, options);
  try {
    await writer.write(data);
  } catch (cause) {
    await writer.abort();
    throw cause;
  }
  await writer.commit();
}

/**
 * Creates `dir` (and missing parents) on the calling thread, one `mkdir` per missing level;
 * directories in `known` are taken to exist and the ones made are added to it.
 */
export function ensureDirSync(dir: string, known?: Set<string>): void {
  if (known?.has(dir)) return;
  try {
    mkdirSync(dir);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && dirname(dir) !== dir) {
      ensureDirSync(dirname(dir), known);
      mkdirSync(dir);
    } else if (code !== 'EEXIST') throw cause;
  }
  known?.add(dir);
}

/**
 * `writeFileAtomic` on the calling thread, for many small files in a row (no thread-pool round
 * trip per step): `parts` are written in order to a temp file that is then renamed over `target`.
 */
export function writeFileAtomicSync(target: string, parts: readonly Uint8Array[], options: AtomicWriteOptions & { knownDirs?: Set<string> } = {}): void {
  const tempPath = tempPathFor(target);
  try {
    if (options.mkdirs !== false) ensureDirSync(dirname(target), options.knownDirs);
    const fd = openSync(tempPath, 'wx', options.mode ?? 0o644);
    try {
      let left = parts.reduce((n, p) => n + p.byteLength, 0);
      let pending = [...parts];
      while (left > 0) {
        let n = writevSync(fd, pending);
        left -= n;
        // a short write: go on from the first byte not written
        while (left > 0 && n >= pending[0]!.byteLength) n -= pending.shift()!.byteLength;
        if (left > 0 && n > 0) pending = [pending[0]!.subarray(n), ...pending.slice(1)];
      }
      if (options.sync !== false) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tempPath, target);
  } catch (cause) {
    rmSync(tempPath, { force: true });
    throw ioError('write', target, cause);
  }
  if (options.sync !== false) {
    // the rename survives a crash once the directory is synced; some file systems refuse
    try {
      const fd = openSync(dirname(target), 'r');
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    } catch {
      // tolerated, as in fsyncDirectory
    }
  }
}

/**
 * Runs `produce` against an atomic writer and commits only if it resolves; any throw aborts and
 * leaves the target untouched.
 */
export async function withAtomicWriter<T>(
  target: string,
  produce: (writer: AtomicWriter) => Promise<T>,
  options: AtomicWriteOptions = {},
): Promise<T> {
  const writer = await createAtomicWriter(target, options);
  let result: T;
  try {
    result = await produce(writer);
  } catch (cause) {
    await writer.abort();
    throw cause;
  }
  await writer.commit();
  return result;
}

/** Removes temp files left in `dir` by writers that crashed more than `olderThanMs` ago. */
export async function cleanupStaleTempFiles(dir: string, olderThanMs = 60_000, nowMs = Date.now()): Promise<number> {
  let removed = 0;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    if (!name.startsWith('.') || !name.endsWith(TEMP_SUFFIX)) continue;
    const path = join(dir, name);
    try {
      const info = await stat(path);
      if (nowMs - info.mtimeMs >= olderThanMs) {
        await rm(path, { force: true });
        removed++;
      }
    } catch {
      // raced with another cleaner
    }
  }
  return removed;
}
