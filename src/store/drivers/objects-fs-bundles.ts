/**
 * Reference bundles of the fs object store: files that record holders' references to objects.
 *
 *   <root>/refs/bundles/<holderId>.<random>   one `ref`/`refMany`: line 1 the holder, then one hash per line
 *   <root>/refs/bundles/packed.<random>       written by gc: many holders, one line each:
 *                                             JSON holder, a tab, then its hashes joined by ','
 *
 * A file never changes once written: dropping references writes a successor without them, then
 * removes the old file. So a reader that has seen a name has seen its whole content, and a list
 * of the folder is all it takes to be current (new names are read, gone names forgotten). gc asks
 * afresh for every decision, so a bundle written while it runs is never missed. gc merges all
 * bundles (and the per-object marker files older stores kept) into one packed file, the way git
 * packs refs; merging and dropping hold the `refs.lock` so neither brings back what the other
 * removed. Dot-prefixed names are the atomic writer's temp files, not bundles.
 */
import { randomBytes } from 'node:crypto';
import { readFile, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../../core/atomic-file.js';
import { ioError } from '../../errors.js';
import { errnoCode, holderId, type FsLayout } from './objects-fs-layout.js';
import { takeGcLock } from './objects-fs-lease.js';

/** References of one file: holder → hashes. */
type Refs = Map<string, Set<string>>;

const PACKED_PREFIX = 'packed.';

/** One store instance's view of its bundles folder. */
export interface FsBundles {
  /** Writes a bundle of `holder`'s references to `hashes` (on the calling thread); its path. */
  write(holder: string, hashes: readonly string[], unsynced?: Set<string>): string;
  /** Removes one bundle file (by path) written by `write`. */
  remove(path: string): Promise<void>;
  /** Holders whose bundles name `hash` (current as of this call). */
  holdersOf(hash: string): Promise<string[]>;
  /** Every hash some bundle names (current as of this call). */
  referenced(): Promise<Set<string>>;
  /** Drops `hash` from the bundles of `holder` (of every holder when undefined); true if one named it. */
  drop(hash: string, holder?: string): Promise<boolean>;
  /** Drops all of `hashes` from `holder`'s bundles, rewriting each file once; the hashes one named. */
  dropMany(hashes: readonly string[], holder: string): Promise<Set<string>>;
  /**
   * Merges every bundle, and the given legacy markers, into one packed file; removes what it
   * merged. `extra` pairs come from marker files, which `removeExtra` removes once the packed
   * file that holds them is durable (still under the lock).
   */
  pack(extra: Iterable<[holder: string, hash: string]>, removeExtra: () => Promise<void>): Promise<{ merged: number }>;
}

function parse(name: string, text: string): Refs {
  const refs: Refs = new Map();
  if (name.startsWith(PACKED_PREFIX)) {
    for (const line of text.split('\n')) {
      const tab = line.lastIndexOf('\t');
      if (tab <= 0) continue;
      let holder: unknown;
      try {
        holder = JSON.parse(line.slice(0, tab));
      } catch {
        continue;
      }
      if (typeof holder !== 'string') continue;
      const set = refs.get(holder) ?? new Set<string>();
      for (const h of line.slice(tab + 1).split(',')) if (h) set.add(h);
      refs.set(holder, set);
    }
    return refs;
  }
  const [holder = '', ...hashes] = text.split('\n');
  refs.set(holder, new Set(hashes.filter(Boolean)));
  return refs;
}

function serializePacked(refs: Refs): Buffer {
  const lines: string[] = [];
  for (const [holder, hashes] of [...refs.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    if (hashes.size > 0) lines.push(`${JSON.stringify(holder)}\t${[...hashes].sort().join(',')}`);
  }
  return Buffer.from(lines.join('\n') + '\n', 'utf8');
}

export function createFsBundles(layout: FsLayout): FsBundles {
  const dir = join(layout.refsRoot, 'bundles');
  const known = new Map<string, Refs>();
  const knownDirs = new Set<string>();

  /** Lists the folder, reads bundles not seen yet, forgets the ones gone. */
  const refresh = async (): Promise<Map<string, Refs>> => {
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
      known.set(name, parse(name, text));
    }
    return known;
  };

  const write = (holder: string, hashes: readonly string[], unsynced?: Set<string>): string => {
    const path = join(dir, `${holderId(holder)}.${randomBytes(8).toString('hex')}`);
    writeFileAtomicSync(path, [Buffer.from(`${holder}\n${hashes.join('\n')}\n`, 'utf8')], { sync: !unsynced, knownDirs });
    unsynced?.add(path);
    return path;
  };

  const writePacked = (refs: Refs): string => {
    const path = join(dir, `${PACKED_PREFIX}${randomBytes(8).toString('hex')}`);
    writeFileAtomicSync(path, [serializePacked(refs)], { sync: true, knownDirs });
    return path;
  };

  const remove = async (path: string): Promise<void> => {
    try {
      await unlink(path);
    } catch (cause) {
      if (errnoCode(cause) !== 'ENOENT') throw ioError('remove a reference bundle', path, cause);
    }
  };

  const withRefsLock = async <T>(fn: () => Promise<T>): Promise<T> => {
    const lock = await takeGcLock(layout.root, undefined, 'refs.lock');
    try {
      return await fn();
    } finally {
      await lock.release();
    }
  };

  /** Rewrites the files holding pairs `which` selects among `hashes`, without them; the hashes dropped. */
  const dropWhere = (which: (holder: string) => boolean, hashes: ReadonlySet<string>): Promise<Set<string>> =>
    withRefsLock(async () => {
      const dropped = new Set<string>();
      for (const [name, refs] of [...(await refresh()).entries()]) {
        let changed = false;
        const rest: Refs = new Map();
        for (const [holder, set] of refs) {
          if (!which(holder)) {
            rest.set(holder, set);
            continue;
          }
          const keep = new Set<string>();
          for (const h of set) {
            if (hashes.has(h)) {
              dropped.add(h);
              changed = true;
            } else keep.add(h);
          }
          if (keep.size > 0) rest.set(holder, keep);
        }
        if (!changed) continue;
        // the successor first, then the old file: the other references are never dropped
        if (rest.size > 0) {
          if (name.startsWith(PACKED_PREFIX)) writePacked(rest);
          else {
            const [[holder, set]] = [...rest.entries()] as [[string, Set<string>]];
            write(holder, [...set]);
          }
        }
        await remove(join(dir, name));
        known.delete(name);
      }
      return dropped;
    });

  return {
    write,
    remove,
    async holdersOf(hash) {
      const out = new Set<string>();
      for (const refs of (await refresh()).values()) for (const [holder, set] of refs) if (set.has(hash)) out.add(holder);
      return [...out];
    },
    async referenced() {
      const out = new Set<string>();
      for (const refs of (await refresh()).values()) for (const set of refs.values()) for (const h of set) out.add(h);
      return out;
    },
    async drop(hash, holder) {
      return (await dropWhere((h) => holder === undefined || h === holder, new Set([hash]))).size > 0;
    },
    dropMany: (hashes, holder) => dropWhere((h) => h === holder, new Set(hashes)),
    pack: (extra, removeExtra) =>
      withRefsLock(async () => {
        const files = [...(await refresh()).entries()];
        const merged: Refs = new Map();
        const add = (holder: string, hash: string) => {
          const set = merged.get(holder) ?? new Set<string>();
          set.add(hash);
          merged.set(holder, set);
        };
        for (const [, refs] of files) for (const [holder, set] of refs) for (const h of set) add(holder, h);
        let extras = 0;
        for (const [holder, hash] of extra) {
          add(holder, hash);
          extras++;
        }
        if (extras === 0 && (files.length === 0 || (files.length === 1 && files[0]![0].startsWith(PACKED_PREFIX)))) return { merged: 0 };
        if (merged.size > 0) writePacked(merged);
        for (const [name] of files) {
          await remove(join(dir, name));
          known.delete(name);
        }
        await removeExtra();
        return { merged: files.length + extras };
      }),
  };
}
