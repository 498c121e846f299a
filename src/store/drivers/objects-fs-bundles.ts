/**
 * Reference bundles of the fs object store: one file that records one holder's references to
 * many objects, written by `refMany` instead of one marker per object (a marker costs a folder
 * and four file-system operations; a trim references a hundred packs at once).
 *
 *   <root>/refs/bundles/<holderId>.<random>   line 1: the holder id; then one hash per line
 *
 * A bundle file never changes once written: dropping a hash writes a new bundle without it, then
 * removes the old file. So a reader that has seen a name has seen its whole content, and a list
 * of the folder is all it takes to be current (new names are read, gone names forgotten). A holder
 * then counts for an object when a marker *or* a bundle says so; gc asks both, listing the folder
 * afresh for every decision, so a bundle written while it runs is never missed. Dot-prefixed names
 * are the atomic writer's temp files, not bundles.
 */
import { randomBytes } from 'node:crypto';
import { readFile, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../../core/atomic-file.js';
import { ioError } from '../../errors.js';
import { errnoCode, holderId, type FsLayout } from './objects-fs-layout.js';

/** Fewer references than this in one `refMany` are plain markers (default); bundles pay off above. */
export const BUNDLE_MIN_REFS = 8;

interface Bundle {
  holder: string;
  hashes: Set<string>;
}

/** One store instance's view of its bundles folder. */
export interface FsBundles {
  /** Writes a bundle of `holder`'s references to `hashes` (on the calling thread); its path. */
  write(holder: string, hashes: readonly string[], unsynced?: Set<string>): string;
  /** Removes one bundle file (by path) written by `write`. */
  remove(path: string): Promise<void>;
  /** Holders whose bundles name `hash` (current as of this call). */
  holdersOf(hash: string): Promise<string[]>;
  /** Drops `hash` from the bundles of `holder` (of every holder when undefined); true if one named it. */
  drop(hash: string, holder?: string): Promise<boolean>;
  /** Drops all of `hashes` from `holder`'s bundles, rewriting each bundle once; the hashes one named. */
  dropMany(hashes: readonly string[], holder: string): Promise<Set<string>>;
}

export function createFsBundles(layout: FsLayout): FsBundles {
  const dir = join(layout.refsRoot, 'bundles');
  const known = new Map<string, Bundle>();
  const knownDirs = new Set<string>();

  /** Lists the folder, reads bundles not seen yet, forgets the ones gone. */
  const refresh = async (): Promise<Map<string, Bundle>> => {
    let names: string[];
    try {
      names = (await readdir(dir)).filter((n) => !n.startsWith('.'));
    } catch (cause) {
      if (errnoCode(cause) === 'ENOENT') names = [];
      else throw ioError('list reference bundles', dir, cause);
    }
    const present = new Set(names);
    for (const name of known.keys()) if (!present.has(name)) known.delete(name);
    for (const name of names) {
      if (known.has(name)) continue;
      let text: string;
      try {
        text = await readFile(join(dir, name), 'utf8');
      } catch (cause) {
        if (errnoCode(cause) === 'ENOENT') continue; // replaced meanwhile: its successor is listed next time
        throw ioError('read a reference bundle', join(dir, name), cause);
      }
      const [holder = '', ...hashes] = text.split('\n');
      known.set(name, { holder, hashes: new Set(hashes.filter(Boolean)) });
    }
    return known;
  };

  const write = (holder: string, hashes: readonly string[], unsynced?: Set<string>): string => {
    const path = join(dir, `${holderId(holder)}.${randomBytes(8).toString('hex')}`);
    writeFileAtomicSync(path, [Buffer.from(`${holder}\n${hashes.join('\n')}\n`, 'utf8')], { sync: !unsynced, knownDirs });
    unsynced?.add(path);
    return path;
  };

  const remove = async (path: string): Promise<void> => {
    try {
      await unlink(path);
    } catch (cause) {
      if (errnoCode(cause) !== 'ENOENT') throw ioError('remove a reference bundle', path, cause);
    }
  };

  /** Rewrites the bundles `which` selects without `hashes`; the hashes that were dropped. */
  const dropWhere = async (which: (b: Bundle) => boolean, hashes: ReadonlySet<string>): Promise<Set<string>> => {
    const dropped = new Set<string>();
    for (const [name, b] of [...(await refresh()).entries()]) {
      if (!which(b)) continue;
      const gone = [...b.hashes].filter((h) => hashes.has(h));
      if (gone.length === 0) continue;
      for (const h of gone) dropped.add(h);
      const rest = [...b.hashes].filter((h) => !hashes.has(h));
      // the successor first, then the old file: the other references are never dropped
      if (rest.length > 0) write(b.holder, rest);
      await remove(join(dir, name));
      known.delete(name);
    }
    return dropped;
  };

  return {
    write,
    remove,
    async holdersOf(hash) {
      const out = new Set<string>();
      for (const b of (await refresh()).values()) if (b.hashes.has(hash)) out.add(b.holder);
      return [...out];
    },
    async drop(hash, holder) {
      return (await dropWhere((b) => holder === undefined || b.holder === holder, new Set([hash]))).size > 0;
    },
    dropMany: (hashes, holder) => dropWhere((b) => b.holder === holder, new Set(hashes)),
  };
}
