/**
 * Garbage collection and listing for the fs object store.
 *
 * Collecting without a lock: an unreferenced, old object is first renamed into `.trash/`, then
 * its holders and age are checked again. A `ref` writes its marker before checking that the
 * object exists, and a deduplicated `put` refreshes the object's mtime before returning, so any
 * ref or re-put that raced with the first check is visible to the second one and the object is
 * moved back. While an object sits in the trash, readers read it from there, and a `ref` that
 * arrives after the second check rescues it by renaming it back: of that rename and gc's unlink
 * exactly one succeeds, so the object is either kept with its new holder or gone (NotFound).
 */
import { lstat, mkdir, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { cleanupStaleTempFiles } from '../../core/atomic-file.js';
import { isSha256Hex } from '../../core/hash.js';
import { ioError } from '../../errors.js';
import type { GcResult } from '../object-store.js';
import { FANOUT_NAME, errnoCode, parseTrashName, type FsLayout } from './objects-fs-layout.js';
import { pidAlive } from './objects-fs-lease.js';
import { countMarkers, pruneMarkerDir } from './objects-fs-refs.js';

/**
 * Temp files untouched for this long belong to a crashed writer, ms (wall clock). Writers touch
 * their temp file at least every MiB, so only a source stalled for an hour could be mistaken.
 */
export const STALE_TEMP_MS = 60 * 60_000;

/** A trash entry older than this was left by a gc that crashed mid-decision, ms (wall clock). */
const ABANDONED_TRASH_MS = 60_000;

async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return [];
    throw ioError('list a directory', dir, cause);
  }
}

/** Every object hash under the layout's fan-out directories, in lexical order. */
export async function* listHashes(layout: FsLayout): AsyncGenerator<string> {
  for (const aa of await readdirOrEmpty(layout.root)) {
    if (!FANOUT_NAME.test(aa)) continue;
    for (const bb of await readdirOrEmpty(join(layout.root, aa))) {
      if (!FANOUT_NAME.test(bb)) continue;
      for (const name of await readdirOrEmpty(join(layout.root, aa, bb))) {
        // Ignore temp files and anything filed under the wrong prefix (never written by us).
        if (isSha256Hex(name) && name.startsWith(aa + bb)) yield name;
      }
    }
  }
}

interface GcContext {
  layout: FsLayout;
  /** The store's clock, Unix ms; object ages are measured with it (put stamps mtimes with it). */
  now: () => number;
  /** True when a reference bundle names the object (asked afresh each time; see objects-fs-bundles.ts). */
  bundled: (hash: string) => Promise<boolean>;
  /** A live writer's lease began then (wall clock, Unix ms): objects written since are kept. */
  protectedSinceMs?: number;
  /** Told of every loose object examined. */
  onScanned?: (hash: string) => void;
}

/** mtime granularity and clock skew between a lease's start and a file's mtime, ms. */
const LEASE_SLACK_MS = 2_000;

/** Deletes unreferenced objects older than `graceMs` and cleans what crashed writers left. */
export async function collectGarbage(ctx: GcContext, graceMs: number): Promise<GcResult> {
  const { layout } = ctx;
  const result: GcResult = { scanned: 0, deleted: 0, freedBytes: 0 };
  await recoverAbandonedTrash(layout);
  await cleanupStaleTempFiles(layout.stagingDir, STALE_TEMP_MS, Date.now());
  await cleanupDeadWriterFiles(layout.stagingDir);
  // bundles live in refs/, or in an older store's refs/bundles/ folder (a file once converted)
  const legacyBundles = join(layout.refsRoot, 'bundles');
  const legacyFolder = await stat(legacyBundles).then((s) => s.isDirectory(), () => false);
  for (const dir of legacyFolder ? [layout.refsRoot, legacyBundles] : [layout.refsRoot]) {
    await cleanupStaleTempFiles(dir, STALE_TEMP_MS, Date.now());
    await cleanupDeadWriterFiles(dir);
  }
  await cleanupDeadWriterFiles(join(layout.root, 'packs'));
  const cleanedDirs = new Set<string>();
  for await (const hash of listHashes(layout)) {
    result.scanned++;
    ctx.onScanned?.(hash);
    const dir = layout.objectDir(hash);
    if (!cleanedDirs.has(dir)) {
      cleanedDirs.add(dir);
      await cleanupStaleTempFiles(dir, STALE_TEMP_MS, Date.now());
    }
    const freed = await collectOne(ctx, hash, graceMs);
    if (freed !== undefined) {
      result.deleted++;
      result.freedBytes += freed;
    }
  }
  return result;
}

/** Age and holders say the object may go: collects it and returns its stored size, else undefined. */
async function collectOne(ctx: GcContext, hash: string, graceMs: number): Promise<number | undefined> {
  const { layout } = ctx;
  const path = layout.objectPath(hash);
  if (!(await isCollectable(ctx, path, hash, graceMs))) return undefined;
  const trash = layout.trashPath(hash);
  await mkdir(layout.trashDir, { recursive: true });
  try {
    await rename(path, trash);
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return undefined; // deleted by someone else meanwhile
    throw ioError('move an object to the trash', path, cause);
  }
  // Second look, now that no new ref or re-put can reach the moved file unnoticed.
  if (!(await isCollectable(ctx, trash, hash, graceMs))) {
    await restore(trash, path);
    return undefined;
  }
  const { size } = await lstat(trash);
  try {
    await unlink(trash);
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return undefined; // rescued by a ref
    throw ioError('delete an object', trash, cause);
  }
  await cleanupStaleTempFiles(layout.refDir(hash), STALE_TEMP_MS, Date.now());
  await pruneMarkerDir(layout, hash);
  return size;
}

async function isCollectable(ctx: GcContext, path: string, hash: string, graceMs: number): Promise<boolean> {
  let mtimeMs: number;
  try {
    mtimeMs = (await lstat(path)).mtimeMs;
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return false;
    throw ioError('stat an object', path, cause);
  }
  if (ctx.now() - mtimeMs < graceMs) return false;
  if (ctx.protectedSinceMs !== undefined && mtimeMs >= ctx.protectedSinceMs - LEASE_SLACK_MS) return false;
  return (await countMarkers(ctx.layout, hash)) === 0 && !(await ctx.bundled(hash));
}

/** Puts a trashed object back; if a fresh copy was written meanwhile, the copies are identical. */
async function restore(trash: string, path: string): Promise<void> {
  try {
    await rename(trash, path);
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return; // a ref rescued it first
    // Windows refuses to replace a file that is open; the fresh copy serves just as well.
    if (errnoCode(cause) === 'EPERM' || errnoCode(cause) === 'EACCES') {
      await unlink(trash).catch(() => {});
      return;
    }
    throw ioError('restore an object from the trash', path, cause);
  }
}

/**
 * Removes temp files whose writer process is gone (same host): the atomic writer's
 * `.<name>.<pid base 36>-<random>-<n>.tmp` and packs' `.pack-<pid>-<random>.tmp`. Files of live
 * processes, and names without a pid, are left to the age rule.
 */
export async function cleanupDeadWriterFiles(dir: string): Promise<number> {
  let removed = 0;
  for (const name of await readdirOrEmpty(dir)) {
    const pid = writerPid(name);
    if (pid === undefined || pidAlive(pid)) continue;
    await unlink(join(dir, name)).catch(() => undefined);
    removed++;
  }
  return removed;
}

/** The pid a temp file's name records, if any. */
export function writerPid(name: string): number | undefined {
  const pack = /^\.pack-(\d+)-[0-9a-f]+\.tmp$/.exec(name) ?? /^\.staged-(\d+)-[0-9a-f]+\.tmp$/.exec(name);
  if (pack) return Number(pack[1]);
  const atomic = /^\..+\.([0-9a-z]+)-[0-9a-f]{6}-[0-9a-z]+\.tmp$/.exec(name);
  return atomic ? parseInt(atomic[1]!, 36) : undefined;
}

/** Moves back trash entries left by a gc that crashed before deciding; the next gc decides again. */
async function recoverAbandonedTrash(layout: FsLayout): Promise<void> {
  for (const name of await readdirOrEmpty(layout.trashDir)) {
    const entry = parseTrashName(name);
    if (!entry || Date.now() - entry.movedAtMs < ABANDONED_TRASH_MS) continue;
    const path = layout.objectPath(entry.hash);
    await mkdir(layout.objectDir(entry.hash), { recursive: true });
    try {
      await rename(join(layout.trashDir, name), path);
    } catch (cause) {
      if (errnoCode(cause) !== 'ENOENT') throw ioError('restore an object from the trash', path, cause);
    }
  }
}

/** A trash entry holding `hash` (an object a gc is deciding about), or undefined. */
export async function findInTrash(layout: FsLayout, hash: string): Promise<string | undefined> {
  const prefix = `${hash}.`;
  const name = (await readdirOrEmpty(layout.trashDir)).find((n) => n.startsWith(prefix));
  return name === undefined ? undefined : join(layout.trashDir, name);
}

/** Moves `hash` back from the trash if a gc has it there; true if this call put it back. */
export async function rescueFromTrash(layout: FsLayout, hash: string): Promise<boolean> {
  const trash = await findInTrash(layout, hash);
  if (trash === undefined) return false;
  await mkdir(layout.objectDir(hash), { recursive: true });
  try {
    await rename(trash, layout.objectPath(hash));
    return true;
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return false; // gc deleted it, or another rescuer won
    throw ioError('restore an object from the trash', layout.objectPath(hash), cause);
  }
}
