/**
 * Where `-o` writes. An atomic write renames a temp file over the target, which would replace a
 * character device (as root, `-o /dev/null` would break the system), a FIFO, or a link to
 * standard output with a regular file; so `-o` names a regular file, a path that does not exist
 * yet, or `-` for standard output, and anything else is refused before any work is done. A
 * symbolic link to a regular file is written through: the file it names is replaced, the link
 * stays.
 */
import { createReadStream } from 'node:fs';
import { lstat, mkdir, mkdtemp, realpath, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { UsageError, ioError } from '../errors.js';

/** A checked `-o` value: standard output, or the path of a regular file to write atomically. */
export type OutputTarget = { kind: 'stdout' } | { kind: 'file'; path: string };

function kindOf(info: { isDirectory(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isFIFO(): boolean; isSocket(): boolean }): string {
  if (info.isDirectory()) return 'a directory';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isSocket()) return 'a socket';
  return 'not a regular file';
}

const code = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code;

/** Checks an `-o` value (relative to `cwd`); `allowStdout` accepts `-`. */
export async function resolveOutputTarget(cwd: string, value: string, options: { allowStdout?: boolean } = {}): Promise<OutputTarget> {
  if (value === '-') {
    if (options.allowStdout === false) throw new UsageError('-o -: this command cannot write to standard output', { hint: 'pass a file path' });
    return { kind: 'stdout' };
  }
  const path = resolve(cwd, value);
  const hint = 'pass the path of a regular file (or - for standard output)';
  let link;
  try {
    link = await lstat(path);
  } catch (error) {
    if (code(error) === 'ENOENT' || code(error) === 'ENOTDIR') return { kind: 'file', path };
    throw ioError('inspect', path, error);
  }
  if (link.isFile()) return { kind: 'file', path };
  if (!link.isSymbolicLink()) throw new UsageError(`-o ${value}: is ${kindOf(link)}; -o writes only regular files, nothing was written`, { hint });
  let target;
  try {
    target = await stat(path);
  } catch (error) {
    if (code(error) === 'ENOENT' || code(error) === 'ELOOP') {
      throw new UsageError(`-o ${value}: is a symbolic link to nothing (${code(error) === 'ELOOP' ? 'a loop' : 'dangling'}); -o writes only regular files, nothing was written`, { hint });
    }
    throw ioError('inspect', path, error);
  }
  if (!target.isFile()) throw new UsageError(`-o ${value}: is a symbolic link to ${kindOf(target)}; -o writes only regular files, nothing was written`, { hint });
  return { kind: 'file', path: await realpath(path) };
}

/**
 * Runs `write` on a file path for `target`: the target's own path, or for standard output a
 * scratch file in `scratchDir` that is copied to `stdout` once `write` succeeded (so a refused
 * write prints nothing) and removed either way.
 */
export async function writeToTarget<T>(target: OutputTarget, scratchDir: string, stdout: NodeJS.WritableStream, write: (path: string) => Promise<T>): Promise<T> {
  if (target.kind === 'file') return write(target.path);
  await mkdir(scratchDir, { recursive: true });
  const dir = await mkdtemp(join(scratchDir, 'stdout-'));
  try {
    const file = join(dir, 'output');
    const result = await write(file);
    for await (const chunk of createReadStream(file)) {
      if (!stdout.write(chunk as Buffer)) await new Promise<void>((done) => stdout.once('drain', done));
    }
    return result;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
