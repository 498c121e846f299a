/**
 * Reference bundles of the fs object store: files that record holders' references to objects.
 *
 *   <root>/refs/<holderId>.<random>   one `ref`/`refMany`: line 1 the holder, then one hash per line
 *   <root>/refs/packed.<random>       written by gc: every holder's references, binary
 *                                     (objects-fs-packed-refs.ts: each hash once, then positions)
 *   <root>/refs/bundles               an empty file: the mark of this layout (see below)
 *
 * A file never changes once written: dropping references writes a successor without them, then
 * removes the old file. So a reader that has seen a name has seen its whole content, and a list
 * of the folder is all it takes to be current (new names are read, gone names forgotten). gc asks
 * afresh for every decision, so a bundle written while it runs is never missed. gc merges all
 * bundles (and the per-object marker files older stores kept) into one packed file, the way git
 * packs refs; merging and dropping hold the `refs.lock` so neither brings back what the other
 * removed. Dot-prefixed names are the atomic writer's temp files, not bundles.
 *
 * Older stores kept bundles in a `refs/bundles/` folder, the packed file as text (a JSON holder, a
 * tab, its hashes joined by ','). Such a folder is still read and written to while it exists, so
 * an older ctxvm sharing the store sees every reference; the first gc merges it into the binary
 * packed file, removes the folder and leaves the empty file `refs/bundles` in its place, which an
 * older ctxvm cannot list or write into: it stops with an error instead of taking the binary file
 * for no references at all (and collecting everything). A new store gets that file at once.
 */
import { randomBytes } from 'node:crypto';
import { lstatSync } from 'node:fs';
import { readFile, readdir, rmdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { writeFileAtomicSync } from '../../core/atomic-file.js';
import { ioError } from '../../errors.js';
import { errnoCode, holderId, type FsLayout } from './objects-fs-layout.js';
import { takeGcLock } from './objects-fs-lease.js';
import { isBinaryPackedRefs, parseBinaryPackedRefs, serializeBinaryPackedRefs, type Refs } from './objects-fs-packed-refs.js';

const PACKED_PREFIX = 'packed.';
/** Names of bundle files in `refs/` (beside the marker fan-out folders of older stores). */
const BUNDLE_NAME = /^(?:[0-9a-f]{32}|packed)\.[0-9a-f]{16}$/;

/** One store instance's view of its bundles. */
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
   * merged (and an older store's `refs/bundles/` folder). `extra` pairs come from marker files,
   * which `removeExtra` removes once the packed file that holds them is durable (still under the lock).
   */
  pack(extra: Iterable<[holder: string, hash: string]>, removeExtra: () => Promise<void>): Promise<{ merged: number }>;
}

function parse(name: string, file: Buffer, path: string): Refs {
  if (name.startsWith(PACKED_PREFIX) && isBinaryPackedRefs(file)) return parseBinaryPackedRefs(file, path);
  const text = file.toString('utf8');
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

/** The text packed form, for an older store's folder that an older ctxvm may still read. */
function serializeTextPacked(refs: Refs): Buffer {
  const lines: string[] = [];
  for (const [holder, hashes] of [...refs.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    if (hashes.size > 0) lines.push(`${JSON.stringify(holder)}\t${[...hashes].sort().join(',')}`);
  }
  return Buffer.from(lines.join('\n') + '\n', 'utf8');
}

export function createFsBundles(layout: FsLayout): FsBundles {
  const dir = layout.refsRoot;
  /** An older store's bundle folder; once converted, the empty file marking this layout. */
  const legacyDir = join(layout.refsRoot, 'bundles');
  /** Bundles read so far, by path. */
  const known = new Map<string, Refs>();
  const knownDirs = new Set<string>();
  /** Set once this instance has seen (or made) the layout mark: conversion is one way. */
  let converted = false;

  const legacyFolderExists = (): boolean => {
    try {
      return lstatSync(legacyDir).isDirectory();
    } catch (cause) {
      if (errnoCode(cause) === 'ENOENT') return false;
      throw ioError('look at the reference folder', legacyDir, cause);
    }
  };

  /** Leaves the empty file that keeps an older ctxvm out; throws if an older store's folder is there. */
  const markLayout = (): void => {
    try {
      if (lstatSync(legacyDir).isFile()) return;
    } catch (cause) {
      if (errnoCode(cause) !== 'ENOENT') throw ioError('look at the reference folder', legacyDir, cause);
    }
    writeFileAtomicSync(legacyDir, [], { sync: true, knownDirs });
  };

  /** Where new bundles go: an older store's folder while it exists, else `refs/` (marking it first). */
  const target = (): { folder: string; binary: boolean } => {
    if (!converted) {
      if (legacyFolderExists()) return { folder: legacyDir, binary: false };
      markLayout();
      converted = true;
    }
    return { folder: dir, binary: true };
  };

  const listed = async (folder: string, keep: (name: string) => boolean): Promise<Array<[name: string, path: string]>> => {
    try {
      return (await readdir(folder)).filter((n) => !n.startsWith('.') && keep(n)).map((n) => [n, join(folder, n)]);
    } catch (cause) {
      // no folder yet, or the older store's folder is now the layout mark
      if (errnoCode(cause) === 'ENOENT' || errnoCode(cause) === 'ENOTDIR') return [];
      throw ioError('list reference bundles', folder, cause);
    }
  };

  /** Lists both folders, reads bundles not seen yet, forgets the ones gone. */
  const refresh = async (): Promise<Map<string, Refs>> => {
    const entries = [...(await listed(dir, (n) => BUNDLE_NAME.test(n))), ...(converted ? [] : await listed(legacyDir, () => true))];
    const present = new Set(entries.map(([, path]) => path));
    for (const path of known.keys()) if (!present.has(path)) known.delete(path);
    for (const [name, path] of entries) {
      if (known.has(path)) continue;
      let file: Buffer;
      try {
        file = await readFile(path);
      } catch (cause) {
        if (errnoCode(cause) === 'ENOENT') continue; // replaced meanwhile: its successor is listed next time
        throw ioError('read a reference bundle', path, cause);
      }
      known.set(path, parse(name, file, path));
    }
    return known;
  };

  const write = (holder: string, hashes: readonly string[], unsynced?: Set<string>): string => {
    const path = join(target().folder, `${holderId(holder)}.${randomBytes(8).toString('hex')}`);
    writeFileAtomicSync(path, [Buffer.from(`${holder}\n${hashes.join('\n')}\n`, 'utf8')], { sync: !unsynced, knownDirs });
    unsynced?.add(path);
    return path;
  };

  const writePacked = (refs: Refs, where = target()): string => {
    const path = join(where.folder, `${PACKED_PREFIX}${randomBytes(8).toString('hex')}`);
    writeFileAtomicSync(path, [where.binary ? serializeBinaryPackedRefs(refs) : serializeTextPacked(refs)], { sync: true, knownDirs });
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
      for (const [path, refs] of [...(await refresh()).entries()]) {
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
          if (basename(path).startsWith(PACKED_PREFIX)) writePacked(rest);
          else {
            const [[holder, set]] = [...rest.entries()] as [[string, Set<string>]];
            write(holder, [...set]);
          }
        }
        await remove(path);
        known.delete(path);
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
        const legacy = !converted && legacyFolderExists();
        const onePacked = files.length === 1 && dirname(files[0]![0]) === dir && basename(files[0]![0]).startsWith(PACKED_PREFIX);
        if (extras === 0 && !legacy && (files.length === 0 || onePacked)) return { merged: 0 };
        // always the binary file in refs/, durable before anything it merges goes; in a store
        // without the older folder the layout mark comes first (target), so no older ctxvm reads on
        if (merged.size > 0) writePacked(merged, legacy ? { folder: dir, binary: true } : target());
        for (const [path] of files) {
          await remove(path);
          known.delete(path);
        }
        if (legacy) {
          try {
            await rmdir(legacyDir);
            markLayout();
            converted = true;
          } catch (cause) {
            // a writer added a bundle there meanwhile (ENOTEMPTY) or made the mark itself: the next gc finishes
            if (!['ENOTEMPTY', 'EEXIST', 'ENOENT'].includes(errnoCode(cause) ?? '')) throw ioError('remove the old reference folder', legacyDir, cause);
          }
        }
        await removeExtra();
        return { merged: files.length + extras };
      }),
  };
}
