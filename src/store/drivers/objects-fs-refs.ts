/**
 * Reference markers of the fs object store, as stores before reference bundles kept them (read,
 * removed and merged by gc; never written now): one small file per (hash, holder) at
 * `refs/<aa>/<hash>/<sha256(holder) prefix>`, holding the holder id as UTF-8.
 *
 * A marker per holder instead of a counter makes ref/unref idempotent and crash-safe without any
 * lock: adding is an atomic create-or-replace, removing is one unlink, and the reference count
 * is simply the number of markers. A crash mid-ref leaves only a stray temp file, which is not
 * counted as a holder and is cleaned by gc.
 */
import { readdir, readFile, rm, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ioError } from '../../errors.js';
import { errnoCode, type FsLayout } from './objects-fs-layout.js';

/** Marker files are renamed into place; dot-prefixed names are atomic-writer temps, not holders. */
function isMarkerName(name: string): boolean {
  return !name.startsWith('.');
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

/** Every legacy marker: [holder, hash, path] (stores written before reference bundles kept one per object). */
export async function allMarkers(layout: FsLayout): Promise<Array<[holder: string, hash: string, path: string]>> {
  const out: Array<[string, string, string]> = [];
  let fanouts: string[];
  try {
    fanouts = await readdir(layout.refsRoot);
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return out;
    throw ioError('list reference markers', layout.refsRoot, cause);
  }
  for (const aa of fanouts) {
    if (!/^[0-9a-f]{2}$/.test(aa)) continue;
    const hashes = await readdir(join(layout.refsRoot, aa)).catch(() => [] as string[]);
    for (const hash of hashes) {
      if (!/^[0-9a-f]{64}$/.test(hash)) continue;
      for (const name of await markerNames(layout, hash)) {
        const path = join(layout.refDir(hash), name);
        try {
          out.push([await readFile(path, 'utf8'), hash, path]);
        } catch (cause) {
          if (errnoCode(cause) !== 'ENOENT') throw ioError('read a reference marker', path, cause);
        }
      }
    }
  }
  return out;
}

/** Removes the marker files `allMarkers` listed (now merged elsewhere) and their empty folders. */
export async function removeMarkerFiles(layout: FsLayout, markers: Iterable<[string, string, string]>): Promise<void> {
  const hashes = new Set<string>();
  for (const [, hash, path] of markers) {
    await unlink(path).catch(() => undefined);
    hashes.add(hash);
  }
  for (const hash of hashes) await pruneMarkerDir(layout, hash);
  for (const aa of new Set([...hashes].map((h) => h.slice(0, 2)))) await rmdir(join(layout.refsRoot, aa)).catch(() => undefined);
}
