/**
 * Reference markers of the fs object store: one small file per (hash, holder) at
 * `refs/<aa>/<hash>/<sha256(holder) prefix>`, holding the holder id as UTF-8.
 *
 * A marker per holder instead of a counter makes ref/unref idempotent and crash-safe without any
 * lock: adding is an atomic create-or-replace, removing is one unlink, and the reference count
 * is simply the number of markers. A crash mid-ref leaves only a stray temp file, which is not
 * counted as a holder and is cleaned by gc.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, rmdir, unlink, access } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic, writeFileAtomicSync } from '../../core/atomic-file.js';
import { ioError } from '../../errors.js';
import { errnoCode, type FsLayout } from './objects-fs-layout.js';

/** Marker files are renamed into place; dot-prefixed names are atomic-writer temps, not holders. */
function isMarkerName(name: string): boolean {
  return !name.startsWith('.');
}

/** Writes `holder`'s marker for `hash`; a no-op if it is already there. */
export async function addMarker(layout: FsLayout, hash: string, holder: string, unsynced?: Set<string>): Promise<void> {
  const path = layout.refPath(hash, holder);
  try {
    await access(path);
    return;
  } catch (cause) {
    if (errnoCode(cause) !== 'ENOENT') throw ioError('check a reference marker', path, cause);
  }
  // gc removes a hash's marker directory once the object is gone; if that races with this write
  // (directory created, then removed before the temp file opens), create it again.
  for (let attempt = 1; ; attempt++) {
    try {
      await writeFileAtomic(path, holder, { sync: !unsynced });
      unsynced?.add(path);
      return;
    } catch (error) {
      if (attempt >= 5 || errnoCode((error as { cause?: unknown }).cause) !== 'ENOENT') throw error;
    }
  }
}

/**
 * Writes `holder`'s markers for many hashes on the calling thread (a few syscalls each, no
 * thread-pool round trips): for a holder that references a batch of objects at once. Returns
 * the hashes whose marker it created (the others had one).
 */
export function addMarkersSync(layout: FsLayout, hashes: readonly string[], holder: string, unsynced?: Set<string>): string[] {
  const content = Buffer.from(holder, 'utf8');
  const knownDirs = new Set<string>(); // the fan-out levels above the marker folders, once each
  const added: string[] = [];
  for (const hash of hashes) {
    const path = layout.refPath(hash, holder);
    if (existsSync(path)) continue;
    added.push(hash);
    // as in addMarker: a gc may remove the marker directory between its creation and the write
    for (let attempt = 1; ; attempt++) {
      try {
        if (attempt > 1) knownDirs.clear();
        writeFileAtomicSync(path, [content], { sync: !unsynced, knownDirs });
        unsynced?.add(path);
        break;
      } catch (error) {
        if (attempt >= 5 || errnoCode((error as { cause?: unknown }).cause) !== 'ENOENT') throw error;
      }
    }
  }
  return added;
}

/** Removes `holder`'s marker for `hash`; true if it existed. */
export async function removeMarker(layout: FsLayout, hash: string, holder: string): Promise<boolean> {
  const path = layout.refPath(hash, holder);
  try {
    await unlink(path);
    return true;
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return false;
    throw ioError('remove a reference marker', path, cause);
  }
}

async function markerNames(layout: FsLayout, hash: string): Promise<string[]> {
  const dir = layout.refDir(hash);
  try {
    return (await readdir(dir)).filter(isMarkerName);
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return [];
    throw ioError('list reference markers', dir, cause);
  }
}

/** Number of holders of `hash`. */
export async function countMarkers(layout: FsLayout, hash: string): Promise<number> {
  return (await markerNames(layout, hash)).length;
}

/** Holder ids of `hash`, sorted. */
export async function readHolders(layout: FsLayout, hash: string): Promise<string[]> {
  const dir = layout.refDir(hash);
  const holders: string[] = [];
  for (const name of await markerNames(layout, hash)) {
    try {
      holders.push(await readFile(join(dir, name), 'utf8'));
    } catch (cause) {
      if (errnoCode(cause) !== 'ENOENT') throw ioError('read a reference marker', join(dir, name), cause); // else: unref raced us
    }
  }
  return holders.sort();
}

/** Removes every marker of `hash` (forced delete). */
export async function removeAllMarkers(layout: FsLayout, hash: string): Promise<void> {
  const dir = layout.refDir(hash);
  try {
    await rm(dir, { recursive: true, force: true });
  } catch (cause) {
    throw ioError('remove reference markers', dir, cause);
  }
}

/** Removes the marker directory of `hash` if it is empty; any failure just leaves it for later. */
export async function pruneMarkerDir(layout: FsLayout, hash: string): Promise<void> {
  await rmdir(layout.refDir(hash)).catch(() => {});
}
