/**
 * Writer leases and the gc lock of the fs object store, so gc never makes a live writer fail.
 *
 *   <root>/leases/<host>~<pid>~<random>   a writer's lease: JSON {pid, host, startedAtMs}
 *   <root>/gc.lock                        held by the one gc (or pack rewrite) running: the same JSON
 *
 * A store instance takes a lease before its first put or ref and drops it when `flush()` has made
 * them durable. gc takes the lock, then lists the leases: while one is live it deletes no packed
 * object and no loose object written since that lease began. A writer creates its lease, then
 * looks for the lock, and waits while a live gc holds it. Each side writes its own flag before it
 * reads the other's, so either gc sees the lease or the writer sees the lock: no writer's
 * reference can land on an object a gc is dropping. A lease or lock whose process is gone (same
 * host) is stale and removed; one from another host is trusted for a day.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rm, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { CtxvmError, ioError } from '../../errors.js';
import { errnoCode } from './objects-fs-layout.js';
import { processAlive } from '../../core/process-alive.js';

/** A lease or lock from another host is considered abandoned after this long, ms. */
export const FOREIGN_LEASE_MS = 24 * 60 * 60_000;

/** How long a writer waits for a gc holding the lock before it gives up, ms. */
const LOCK_WAIT_MS = 10 * 60_000;

/** Who holds a lease or lock. */
export interface LeaseOwner {
  pid: number;
  host: string;
  startedAtMs: number;
}

/** Whether a process is alive on this host. */
export const pidAlive = processAlive;

/** True while the owner may still be running (its pid is alive here, or it is on another host and recent). */
export function ownerLive(owner: LeaseOwner, nowMs = Date.now()): boolean {
  if (owner.host === hostname()) return pidAlive(owner.pid);
  return nowMs - owner.startedAtMs < FOREIGN_LEASE_MS;
}

function parseOwner(text: string): LeaseOwner | undefined {
  try {
    const v = JSON.parse(text) as Partial<LeaseOwner>;
    if (typeof v.pid === 'number' && typeof v.host === 'string' && typeof v.startedAtMs === 'number') return v as LeaseOwner;
  } catch {
    // a torn write (crash while creating it): treated as stale
  }
  return undefined;
}

async function readOwner(path: string): Promise<LeaseOwner | undefined | null> {
  try {
    return parseOwner(await readFile(path, 'utf8'));
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return null;
    throw ioError('read a lease', path, cause);
  }
}

/** The live leases of a store (stale ones are removed on the way); `except` names the caller's own. */
export async function liveLeases(root: string, except?: string): Promise<LeaseOwner[]> {
  const dir = join(root, 'leases');
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return [];
    throw ioError('list leases', dir, cause);
  }
  const live: LeaseOwner[] = [];
  for (const name of names) {
    if (name.startsWith('.')) continue;
    const path = join(dir, name);
    if (path === except) continue;
    const owner = await readOwner(path);
    if (owner === null) continue;
    if (owner && ownerLive(owner)) live.push(owner);
    else await unlink(path).catch(() => undefined);
  }
  return live;
}

/** One store instance's lease: taken lazily before a write, dropped after a flush. */
export class WriterLease {
  readonly #root: string;
  #path: string | undefined;
  #taking: Promise<void> | undefined;

  constructor(root: string) {
    this.#root = root;
  }

  /** The lease file while held. */
  get path(): string | undefined {
    return this.#path;
  }

  /** Takes the lease if not held, waiting while a live gc holds the lock. */
  async hold(): Promise<void> {
    if (this.#path) return;
    this.#taking ??= this.#take().finally(() => {
      this.#taking = undefined;
    });
    return this.#taking;
  }

  async #take(): Promise<void> {
    const dir = join(this.#root, 'leases');
    await mkdirRetrying(dir);
    const path = join(dir, `${hostname().replace(/[^A-Za-z0-9.-]/g, '_')}~${process.pid}~${randomBytes(6).toString('hex')}`);
    const owner: LeaseOwner = { pid: process.pid, host: hostname(), startedAtMs: Date.now() };
    let handle;
    for (let attempt = 1; ; attempt++) {
      try {
        handle = await open(path, 'wx');
        break;
      } catch (cause) {
        // another instance removed the empty folder between our mkdir and open
        if (errnoCode(cause) !== 'ENOENT' || attempt >= 5) throw ioError('take a writer lease', path, cause);
        await mkdirRetrying(dir);
      }
    }
    try {
      await handle.writeFile(JSON.stringify(owner));
    } finally {
      await handle.close();
    }
    this.#path = path;
    // the lease is visible: now a gc that starts later sees it; wait out one already running
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (let delay = 20; ; delay = Math.min(500, delay * 2)) {
      const holder = await readOwner(lockPath(this.#root));
      if (holder === null || !holder || !ownerLive(holder)) return;
      if (Date.now() > deadline) {
        await this.release();
        throw new CtxvmError('E_UNAVAILABLE', `a gc (pid ${holder.pid} on ${holder.host}) has held ${lockPath(this.#root)} for over ${LOCK_WAIT_MS / 60_000} minutes`, {
          hint: 'wait for it to finish, or remove the lock file if that process is gone',
        });
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  /** Drops the lease (idempotent). */
  async release(): Promise<void> {
    await this.#taking?.catch(() => undefined);
    const path = this.#path;
    this.#path = undefined;
    if (!path) return;
    await rm(path, { force: true });
    // the folder stays: removing it raced with other writers creating their leases in it (their
    // mkdir saw it exist, then it was gone: ENOENT); gc may remove it while it holds the lock
  }
}

function lockPath(root: string, name = 'gc.lock'): string {
  return join(root, name);
}

/** The gc lock, held; `release` drops it. */
export interface GcLock {
  release(): Promise<void>;
}

/**
 * Takes the store's gc lock (or, with `name`, another lock file of the store, such as the one that
 * serialises rewrites of packed references), waiting up to `waitMs` while another live process
 * holds it; a stale lock (its process gone) is taken over.
 */
export async function takeGcLock(root: string, waitMs = LOCK_WAIT_MS, name = 'gc.lock'): Promise<GcLock> {
  await mkdir(root, { recursive: true });
  const path = lockPath(root, name);
  const deadline = Date.now() + waitMs;
  const owner: LeaseOwner = { pid: process.pid, host: hostname(), startedAtMs: Date.now() };
  for (let delay = 20; ; delay = Math.min(500, delay * 2)) {
    try {
      const handle = await open(path, 'wx');
      try {
        await handle.writeFile(JSON.stringify(owner));
        await handle.sync();
      } finally {
        await handle.close();
      }
      return { release: () => rm(path, { force: true }) };
    } catch (cause) {
      if (errnoCode(cause) !== 'EEXIST') throw ioError('take the gc lock', path, cause);
    }
    const holder = await readOwner(path);
    if (holder === null) continue;
    if (!holder || !ownerLive(holder)) {
      // stale: remove it only if it is still the same file (another taker may have replaced it)
      const again = await readOwner(path);
      if (again === null || JSON.stringify(again) === JSON.stringify(holder)) await unlink(path).catch(() => undefined);
      continue;
    }
    if (Date.now() > deadline) {
      throw new CtxvmError('E_UNAVAILABLE', `another gc (pid ${holder.pid} on ${holder.host}) holds ${path}`, { hint: 'wait for it to finish and run gc again' });
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/** `mkdir -p` that retries the ENOENT a folder removed while it is being made gives. */
async function mkdirRetrying(dir: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await mkdir(dir, { recursive: true });
      return;
    } catch (cause) {
      if (errnoCode(cause) !== 'ENOENT' || attempt >= 5) throw ioError('create', dir, cause);
    }
  }
}
