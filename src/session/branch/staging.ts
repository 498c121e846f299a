/**
 * A branch is built in a hidden staging folder inside the folder it will live in (same file
 * system, so committing is a rename), and made visible in two steps: the side folder
 * `<id>/` first, then the session file itself, linked into place so it can never replace an
 * existing file. The agent lists `*.jsonl` files only, so until the last step it sees nothing; a
 * process killed at any point leaves at most the hidden staging folder (and, between the two
 * steps, a complete `<id>/` folder with no session file, which the agent ignores).
 */
import { link, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fsyncDirectory, syncPaths } from '../../core/atomic-file.js';
import { CtxvmError, ioError } from '../../errors.js';

/** Prefix of staging folders (`.ctxvm-branch-<id>.<pid>`). */
export const STAGING_PREFIX = '.ctxvm-branch-';

export interface Staging {
  dir: string;
  /** The staged session file (not a `.jsonl` name, so no agent ever lists it). */
  file(name: string): string;
  /** The staged side folder, renamed to `<id>/` on commit. */
  readonly sideDir: string;
  remove(): Promise<void>;
}

export async function createStaging(targetDir: string, id: string): Promise<Staging> {
  await mkdir(targetDir, { recursive: true });
  const dir = join(targetDir, `${STAGING_PREFIX}${id}.${process.pid}`);
  try {
    await mkdir(dir);
  } catch (cause) {
    throw ioError('create the staging folder', dir, cause);
  }
  return {
    dir,
    file: (name) => join(dir, name),
    sideDir: join(dir, 'side'),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}


/** Every regular file below `dir`. */
async function filesBelow(dir: string): Promise<string[]> {
  const out: string[] = [];
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesBelow(p)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/**
 * Makes the staged branch visible: durable first, then `<sideTarget>` (when given and the staged
 * side folder has files), then `target`. Refuses (E_EXISTS) to replace anything.
 */
export async function commitStaging(staging: Staging, stagedFile: string, target: string, sideTarget: string | undefined, targetDir: string): Promise<void> {
  const sideFiles = sideTarget ? await filesBelow(staging.sideDir) : [];
  await syncPaths([stagedFile, ...sideFiles], targetDir);
  if (await exists(target)) throw new CtxvmError('E_EXISTS', `${target} already exists; nothing was written`, { hint: 'pick another session id' });
  let movedSide = false;
  if (sideTarget && sideFiles.length > 0) {
    if (await exists(sideTarget)) throw new CtxvmError('E_EXISTS', `${sideTarget} already exists; nothing was written`, { hint: 'pick another session id' });
    await rename(staging.sideDir, sideTarget);
    movedSide = true;
  }
  try {
    try {
      // link() fails on an existing target: no race can make the branch replace a session
      await link(stagedFile, target);
    } catch (cause) {
      const code = (cause as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw new CtxvmError('E_EXISTS', `${target} already exists; nothing was written`, { cause });
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV' && code !== 'ENOSYS') throw ioError('write', target, cause);
      // no hard links on this file system: checked above, rename is the best left
      await rename(stagedFile, target);
    }
  } catch (error) {
    if (movedSide) await rename(sideTarget!, staging.sideDir).catch(() => undefined);
    throw error;
  }
  await fsyncDirectory(targetDir);
}

/**
 * Removes staging folders left in `dir` by branch processes that are gone (`isAlive` says so of
 * the pid in the name), or, without that check, untouched for `olderThanMs` (default 10 minutes).
 * Returns how many were removed.
 */
export async function cleanupStaleBranchStaging(dir: string, olderThanMs = 10 * 60_000, nowMs = Date.now(), isAlive?: (pid: number) => boolean): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    if (!name.startsWith(STAGING_PREFIX)) continue;
    const path = join(dir, name);
    try {
      const info = await stat(path);
      const pid = Number(/\.(\d+)$/.exec(name)?.[1] ?? NaN);
      const gone = isAlive !== undefined && Number.isInteger(pid) ? !isAlive(pid) : nowMs - info.mtimeMs >= olderThanMs;
      if (info.isDirectory() && gone) {
        await rm(path, { recursive: true, force: true });
        removed++;
      }
    } catch {
      // raced with another cleaner
    }
  }
  return removed;
}
