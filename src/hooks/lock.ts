/**
 * A lock file per session, so two hook runs (PreCompact then SessionEnd, or two Claude Code
 * windows) never work on one transcript at once. Created with O_EXCL; it records the holder's pid
 * and start time, and a lock whose holder is gone (or older than `staleMs`) is taken over.
 */
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface LockHandle {
  path: string;
  release(): Promise<void>;
}

export interface LockOptions {
  /** A lock older than this is considered abandoned, ms (default 30 minutes). */
  staleMs?: number;
  /** Clock, Unix ms (default Date.now). */
  now?: () => number;
  /** Our pid (default process.pid). */
  pid?: number;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock at `path`, or resolves to undefined when a live holder has it. */
export async function tryLock(path: string, options: LockOptions = {}): Promise<LockHandle | undefined> {
  const now = options.now ?? Date.now;
  const pid = options.pid ?? process.pid;
  await mkdir(dirname(path), { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const h = await open(path, 'wx', 0o600);
      await h.writeFile(JSON.stringify({ pid, startedAtMs: now() }));
      await h.close();
      let released = false;
      return {
        path,
        release: async () => {
          if (released) return;
          released = true;
          await rm(path, { force: true });
        },
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    let holder: { pid?: number; startedAtMs?: number } = {};
    try {
      holder = JSON.parse(await readFile(path, 'utf8')) as typeof holder;
    } catch {
      // being written right now, or torn by a crash: judged by age below
    }
    const age = now() - (holder.startedAtMs ?? 0);
    const abandoned = (typeof holder.pid === 'number' && holder.pid !== pid && !alive(holder.pid)) || age > (options.staleMs ?? 30 * 60_000);
    if (!abandoned) return undefined;
    await rm(path, { force: true });
  }
  return undefined;
}
