/**
 * File-system object store: the default cold tier, one compressed file per object under
 * `<root>/<aa>/<bb>/<hash>`. No lock and no index: processes can share one root, because every
 * change is an atomic rename, unlink or create, and content addressing makes two writers of the
 * same hash write interchangeable files.
 *
 *   objects-fs-layout.ts  paths (and the hash check before any path is built)
 *   objects-fs-format.ts  the object file: header (magic, version, codec), payload, size trailer
 *   objects-fs-write.ts   put / putStream: atomic, deduplicating
 *   objects-fs-read.ts    get / getStream / stat: always verified
 *   objects-fs-refs.ts    one marker file per holder
 *   objects-fs-bundles.ts one file per batch of a holder's references (refMany)
 *   objects-fs-gc.ts      list and lock-free garbage collection
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { syncPaths } from '../../core/atomic-file.js';
import { assertSha256Hex, isSha256Hex } from '../../core/hash.js';
import { Readable } from 'node:stream';
import { CtxvmError, NotFoundError, UsageError, ioError } from '../../errors.js';
import { resolveCodec } from '../object-codec.js';
import { DEFAULT_GC_GRACE_MS, assertHolder, type ObjectCodecName, type ObjectStore } from '../object-store.js';
import { BUNDLE_MIN_REFS, createFsBundles } from './objects-fs-bundles.js';
import { collectGarbage, findInTrash, listHashes, rescueFromTrash } from './objects-fs-gc.js';
import { createFsLayout, errnoCode } from './objects-fs-layout.js';
import { existsAtPath, readObject, readObjectChunks, statObject } from './objects-fs-read.js';
import { addMarker, addMarkersSync, readHolders, removeAllMarkers, removeMarker, pruneMarkerDir } from './objects-fs-refs.js';
import { putBuffer, putStream, toBuffer, type FsWriteContext } from './objects-fs-write.js';

export { MIN_COMPRESS_BYTES } from './objects-fs-write.js';

/** Options of `createFsObjectStore`. */
export interface FsObjectStoreOptions {
  /** Directory of the store, e.g. `$CTXVM_HOME/objects`; created on first write. */
  root: string;
  /** Codec of new objects (default 'brotli'; see object-codec.ts for the measurements). */
  codec?: ObjectCodecName;
  /** gzip level 1..9 or brotli quality 0..11 (default 1 for both: the trimmer's hot path needs speed). */
  level?: number;
  /** Clock, Unix ms (default `Date.now`); stamps object mtimes and measures gc ages. */
  now?: () => number;
  /**
   * `immediate` (default): every put and ref is fsynced before it resolves. `deferred`: they are
   * written atomically but made durable only by `flush()` — one file-system sync for a batch,
   * which is what the trimmer uses (it flushes before it writes the trimmed file).
   */
  durability?: 'immediate' | 'deferred';
}

/** Creates a file-system object store rooted at `options.root`; throws `E_USAGE` on a bad codec or level. */
export function createFsObjectStore(options: FsObjectStoreOptions): ObjectStore {
  const layout = createFsLayout(options.root);
  const now = options.now ?? Date.now;
  const unsynced = options.durability === 'deferred' ? new Set<string>() : undefined;
  const ctx: FsWriteContext = {
    layout,
    now,
    defaults: resolveCodec(options.codec, options.level),
    injectedClock: options.now !== undefined,
    knownDirs: new Set(),
    ...(unsynced ? { unsynced } : {}),
  };

  const bundles = createFsBundles(layout);
  /** Holders from markers and bundles, sorted, each once. */
  const holders = async (hash: string): Promise<string[]> => [...new Set([...(await readHolders(layout, hash)), ...(await bundles.holdersOf(hash))])].sort();

  const ref = async (hash: string, holder: string): Promise<void> => {
    assertHolder(holder);
    await addMarker(layout, hash, holder, unsynced);
    // Marker first, then the existence check: a gc that moved the object aside before this
    // check sees the marker when it looks again, or the object is rescued from the trash here
    // (see objects-fs-gc.ts).
    if (!(await existsAtPath(layout, hash)) && !(await rescueFromTrash(layout, hash)) && !(await existsAtPath(layout, hash))) {
      await removeMarker(layout, hash, holder);
      throw new NotFoundError(`object ${hash} not found in ${layout.root}: cannot add a reference for "${holder}"`);
    }
  };

  return {
    name: 'fs',
    supportsStreaming: true,

    async put(data, put) {
      if (typeof data !== 'string' && !(data instanceof Uint8Array)) {
        throw new UsageError(`put expects a string or Uint8Array, got ${data === null ? 'null' : typeof data}`);
      }
      return putBuffer(ctx, toBuffer(data), put);
    },

    putStream: (source, put) => putStream(ctx, source, put),

    get: async (hash) => readObject(layout, hash),

    getStream(hash) {
      // objectMode off: consumers get plain byte chunks, with byte-based backpressure.
      return Readable.from(readObjectChunks(layout, hash), { objectMode: false });
    },

    async has(hash) {
      // An object a gc holds in the trash still counts: it is readable until the gc decides.
      return (await existsAtPath(layout, hash)) || (await findInTrash(layout, hash)) !== undefined;
    },

    async stat(hash) {
      const info = await statObject(layout, hash);
      return info && { ...info, refCount: (await holders(hash)).length };
    },

    async delete(hash, options = {}) {
      const path = layout.objectPath(hash);
      if (!options.force) {
        const current = await holders(hash);
        if (current.length > 0) {
          throw new CtxvmError('E_CONFLICT', `object ${hash} is still referenced by ${current.length} holder(s): ${current.slice(0, 5).join(', ')}`, {
            hint: 'unref it first, or delete with { force: true }',
          });
        }
      }
      let existed = true;
      try {
        await unlink(path);
      } catch (cause) {
        if (errnoCode(cause) !== 'ENOENT') throw ioError('delete an object', path, cause);
        existed = false;
      }
      if (options.force) {
        await removeAllMarkers(layout, hash);
        await bundles.drop(hash);
      } else await pruneMarkerDir(layout, hash);
      return existed;
    },

    ref,

    async refMany(hashes, holder) {
      assertHolder(holder);
      for (const hash of hashes) assertSha256Hex(hash);
      if (hashes.length < BUNDLE_MIN_REFS) {
        const added = addMarkersSync(layout, hashes, holder, unsynced);
        // the same existence check as `ref`; objects that are there (nearly all) cost one stat
        try {
          for (const hash of hashes) if (!existsSync(layout.objectPath(hash))) await ref(hash, holder);
        } catch (error) {
          // all or nothing: the references this call added go again
          for (const hash of added) await removeMarker(layout, hash, holder);
          throw error;
        }
        return;
      }
      // one bundle file, then the existence checks (the order `ref` keeps with its marker)
      const bundle = bundles.write(holder, [...new Set(hashes)], unsynced);
      try {
        for (const hash of hashes) if (!existsSync(layout.objectPath(hash))) await ref(hash, holder);
      } catch (error) {
        await bundles.remove(bundle);
        throw error;
      }
    },

    async unref(hash, holder) {
      assertHolder(holder);
      const marker = await removeMarker(layout, hash, holder);
      return (await bundles.drop(hash, holder)) || marker;
    },

    async unrefMany(hashes, holder) {
      assertHolder(holder);
      for (const hash of hashes) assertSha256Hex(hash);
      const dropped = await bundles.dropMany(hashes, holder);
      for (const hash of hashes) if (await removeMarker(layout, hash, holder)) dropped.add(hash);
      return dropped.size;
    },

    holders,

    async gc(options = {}) {
      const graceMs = options.graceMs ?? DEFAULT_GC_GRACE_MS;
      if (!Number.isFinite(graceMs) || graceMs < 0) {
        throw new UsageError(`invalid graceMs ${graceMs}: expected a non-negative number of ms`);
      }
      return collectGarbage({ layout, now, bundled: async (hash) => (await bundles.holdersOf(hash)).length > 0 }, graceMs);
    },

    list: () => listHashes(layout),

    async flush() {
      if (!unsynced || unsynced.size === 0) return;
      const paths = [...unsynced];
      unsynced.clear();
      await mkdir(layout.root, { recursive: true });
      await syncPaths(paths, layout.root);
    },

    async findByPrefix(prefix) {
      if (!/^[0-9a-f]{4,64}$/.test(prefix)) throw new UsageError(`invalid hash prefix ${JSON.stringify(prefix)}: expected 4 to 64 lowercase hex digits`);
      const dir = dirname(layout.objectPath(prefix.padEnd(64, '0')));
      let names: string[] = [];
      try {
        names = await readdir(dir);
      } catch (cause) {
        if (errnoCode(cause) !== 'ENOENT') throw ioError('list objects', dir, cause);
      }
      return names.filter((n) => n.startsWith(prefix) && isSha256Hex(n)).sort();
    },

    async verify(hash) {
      for await (const _chunk of readObjectChunks(layout, hash)) {
        // reading to the end is the check
      }
    },
  };
}
