/**
 * A branch is built in a staging folder under ctxvm's scratch folder (`$CTXVM_HOME/tmp`), never
 * in the agent's folders, and made visible in two steps: the side folder `<id>/` first, then the
 * session file itself, linked into place so it can never replace an existing file. The staging
 * folder's name carries the pid (`staging-<pid>-<random>`), so `ctxvm gc` removes it as soon as
 * that process is gone; a process killed at any point leaves nothing in the agent's folder but,
 * between the two steps, a complete `<id>/` folder with no session file, which the agent ignores.
 *
 * Scratch and target on one file system (the usual case, both under $HOME): committing is a link
 * and a rename. On two (EXDEV), the staged files are first copied into a hidden landing folder
 * inside the target folder (`.ctxvm-branch-<id>.<pid>`, not a `.jsonl` name, so the agent lists
 * nothing), made durable, and committed from there the same way; the landing folder is removed
 * on success and on any failure, and `gc` removes one a killed process left.
 */
import { copyFile, cp, link, mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fsyncDirectory, syncPaths } from '../../core/atomic-file.js';
import { CtxvmError, ioError } from '../../errors.js';

/** Prefix of landing folders in the target folder (`.ctxvm-branch-<id>.<pid>`; also older versions' staging). */
export const STAGING_PREFIX = '.ctxvm-branch-';

/** Prefix of staging folders under the scratch folder (`staging-<pid>-<random>`, the scratch naming gc reads). */
export const SCRATCH_STAGING_PREFIX = 'staging';

export interface Staging {
  dir: string;
  /** The branch's session id (names the landing folder of a cross-file-system commit). */
  readonly id: string;
  /** The staged session file (not a `.jsonl` name, so no agent ever lists it). */
  file(name: string): string;
  /** The staged side folder, renamed to `<id>/` on commit. */
  readonly sideDir: string;
  remove(): Promise<void>;
}

/** The two calls a commit makes visible with; injectable so the cross-file-system path can be tested anywhere. */
export interface CommitFs {
  link(existing: string, created: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
}

const NODE_COMMIT_FS: CommitFs = { link, rename };

/** Creates the staging folder of branch `id` under `scratchDir` (`$CTXVM_HOME/tmp`). */
export async function createStaging(scratchDir: string, id: string): Promise<Staging> {
  let dir: string;
  try {
    await mkdir(scratchDir, { recursive: true });
    dir = await mkdtemp(join(scratchDir, `${SCRATCH_STAGING_PREFIX}-${process.pid}-`));
  } catch (cause) {
    throw ioError('create the staging folder in', scratchDir, cause);
  }
  return {
    dir,
    id,
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

const isCrossDevice = (error: unknown): boolean => (error as NodeJS.ErrnoException | undefined)?.code === 'EXDEV';
const refused = (path: string, cause?: unknown) =>
  new CtxvmError('E_EXISTS', `${path} already exists; nothing was written`, { hint: 'pick another session id', ...(cause ? { cause } : {}) });

/**
 * Puts `file` at `target` and `sideDir` (when `sideTarget` is given) at `sideTarget`, never
 * replacing anything. EXDEV is thrown as it is (the caller copies and tries again); anything else
 * undoes the side rename first.
 */
async function place(fs: CommitFs, file: string, target: string, sideDir: string, sideTarget: string | undefined): Promise<void> {
  if (await exists(target)) throw refused(target);
  let movedSide = false;
  if (sideTarget) {
    if (await exists(sideTarget)) throw refused(sideTarget);
    await fs.rename(sideDir, sideTarget);
    movedSide = true;
  }
  try {
    try {
      // link() fails on an existing target: no race can make the branch replace a session
      await fs.link(file, target);
    } catch (cause) {
      const code = (cause as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw refused(target, cause);
      if (code === 'EXDEV') throw cause;
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw ioError('write', target, cause);
      // no hard links on this file system: checked above, rename is the best left
      await fs.rename(file, target);
    }
  } catch (error) {
    if (movedSide) await fs.rename(sideTarget!, sideDir).catch(() => undefined);
    throw error;
  }
}

/**
 * Makes the staged branch visible: durable first, then `<sideTarget>` (when given and the staged
 * side folder has files), then `target`. Refuses (E_EXISTS) to replace anything. Across file
 * systems, goes through a hidden landing folder in `targetDir` (see the module comment).
 */
export async function commitStaging(
  staging: Staging,
  stagedFile: string,
  target: string,
  sideTarget: string | undefined,
  targetDir: string,
  fs: CommitFs = NODE_COMMIT_FS,
): Promise<void> {
  await mkdir(targetDir, { recursive: true });
  const sideFiles = sideTarget ? await filesBelow(staging.sideDir) : [];
  const side = sideFiles.length > 0 ? sideTarget : undefined;
  await syncPaths([stagedFile, ...sideFiles], staging.dir);
  try {
    await place(fs, stagedFile, target, staging.sideDir, side);
  } catch (error) {
    if (!isCrossDevice(error)) throw error;
    await commitAcrossFileSystems(fs, staging, stagedFile, target, side, targetDir);
  }
  await fsyncDirectory(targetDir);
}

async function commitAcrossFileSystems(fs: CommitFs, staging: Staging, stagedFile: string, target: string, sideTarget: string | undefined, targetDir: string): Promise<void> {
  // refuse before copying anything: the copy may be large
  if (await exists(target)) throw refused(target);
  if (sideTarget && (await exists(sideTarget))) throw refused(sideTarget);
  const landing = join(targetDir, `${STAGING_PREFIX}${staging.id}.${process.pid}`);
  try {
    await rm(landing, { recursive: true, force: true });
    await mkdir(landing);
    const file = join(landing, basename(stagedFile));
    const sideDir = join(landing, 'side');
    await copyFile(stagedFile, file);
    if (sideTarget) await cp(staging.sideDir, sideDir, { recursive: true });
    await syncPaths([file, ...(sideTarget ? await filesBelow(sideDir) : [])], landing);
    await place(fs, file, target, sideDir, sideTarget);
  } catch (error) {
    if (CtxvmError.is(error)) throw error;
    throw ioError('copy the branch into', targetDir, error);
  } finally {
    await rm(landing, { recursive: true, force: true });
  }
}

/**
 * Removes staging folders left in `dir` by branch processes that are gone (`isAlive` says so of
 * the pid in the name), or, without that check, untouched for `olderThanMs` (default 10 minutes).
 * `dir` is an agent's folder: landing folders of cross-file-system commits, and staging folders
 * of older ctxvm versions, which staged there. Returns how many were removed.
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
