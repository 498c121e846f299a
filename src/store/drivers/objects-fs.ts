/**
 * File-system object store: the default cold tier, laid out like git's. A put writes a *loose*
 * object, one compressed file under `<root>/<aa>/<bb>/<hash>`; gc moves referenced loose objects
 * into *pack files* with an index (`<root>/packs/`), compressed together so content that recurs
 * across objects is stored about once, and drops what nothing references. Processes share one
 * root: every change is an atomic rename, unlink or create, content addressing makes two writers
 * of the same hash write interchangeable files, and writer leases keep gc from dropping what a
 * live writer is about to reference.
 *
 *   objects-fs-layout.ts  paths (and the hash check before any path is built)
 *   objects-fs-format.ts  the object file: header (magic, version, codec), payload, size trailer
 *   objects-fs-write.ts   put / putStream: atomic, deduplicating
 *   objects-fs-read.ts    get / getStream / stat: always verified
 *   objects-fs-refs.ts    one marker file per holder
 *   objects-fs-bundles.ts one file per batch of a holder's references; gc merges them into one
 *   objects-fs-gc.ts      list and garbage collection of loose objects
 *   objects-fs-packs.ts   pack files: format, writer, reader
 *   objects-fs-repack.ts  gc's packing half
 *   objects-fs-lease.ts   writer leases and the gc lock
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, rmdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { syncPaths } from '../../core/atomic-file.js';
import { assertSha256Hex, isSha256Hex } from '../../core/hash.js';
import { Readable } from 'node:stream';
import { CtxvmError, NotFoundError, UsageError, ioError } from '../../errors.js';
import { resolveCodec } from '../object-codec.js';
import { DEFAULT_GC_GRACE_MS, assertHolder, type ObjectCodecName, type ObjectStore } from '../object-store.js';
import { sha256Hex } from '../../core/hash.js';
import { createFsBundles } from './objects-fs-bundles.js';
import { collectGarbage, findInTrash, listHashes, rescueFromTrash } from './objects-fs-gc.js';
import { createFsLayout, errnoCode } from './objects-fs-layout.js';
import { liveLeases, takeGcLock, WriterLease } from './objects-fs-lease.js';
import { PackSet, writePack, type PackInput } from './objects-fs-packs.js';
import { existsAtPath, readObject, readObjectChunks, statObject } from './objects-fs-read.js';
import { readHolders, removeAllMarkers, removeMarker, pruneMarkerDir } from './objects-fs-refs.js';
import { repack } from './objects-fs-repack.js';
import { encodeOffThread, putBuffer, putStream, toBuffer, type FsWriteContext } from './objects-fs-write.js';
import { OffThreadEncoder, releasePayload } from './objects-fs-encoder.js';

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
    encoder: new OffThreadEncoder(),
    ...(unsynced ? { unsynced } : {}),
  };

  const bundles = createFsBundles(layout);
  const packs = new PackSet(join(layout.root, 'packs'));
  const lease = new WriterLease(layout.root);
  /** Holders from markers and bundles, sorted, each once. */
  const holders = async (hash: string): Promise<string[]> => [...new Set([...(await readHolders(layout, hash)), ...(await bundles.holdersOf(hash))])].sort();
  /** Loose at its path, in a gc's trash, or in a pack. */
  const present = async (hash: string): Promise<boolean> =>
    (await existsAtPath(layout, hash)) || (await findInTrash(layout, hash)) !== undefined || (await packs.find(hash)) !== undefined;

  /** The object's bytes from wherever it lies, verified. */
  const read = async (hash: string): Promise<Buffer> => {
    try {
      return await readObject(layout, hash);
    } catch (error) {
      if (!(CtxvmError.is(error) && error.code === 'E_NOT_FOUND')) throw error;
      const packed = await packs.read(hash);
      if (packed) return packed;
      // gc may have packed it and removed the loose file between the two looks
      if (await existsAtPath(layout, hash)) return readObject(layout, hash);
      throw error;
    }
  };

  async function* chunks(hash: string): AsyncGenerator<Buffer> {
    assertSha256Hex(hash);
    if (!(await existsAtPath(layout, hash)) && (await findInTrash(layout, hash)) === undefined) {
      const packed = await packs.read(hash);
      if (packed) {
        yield packed;
        return;
      }
    }
    let yielded = false;
    try {
      for await (const chunk of readObjectChunks(layout, hash)) {
        yielded = true;
        yield chunk;
      }
    } catch (error) {
      if (yielded || !(CtxvmError.is(error) && error.code === 'E_NOT_FOUND')) throw error;
      const packed = await packs.read(hash);
      if (!packed) throw error;
      yield packed;
    }
  }

  /** Writes `holder`'s references as one bundle, then checks every object is there (the order gc relies on). */
  const addRefs = async (hashes: readonly string[], holder: string): Promise<void> => {
    assertHolder(holder);
    for (const hash of hashes) assertSha256Hex(hash);
    if (hashes.length === 0) return;
    await lease.hold();
    const unique = [...new Set(hashes)];
    const bundle = bundles.write(holder, unique, unsynced);
    try {
      for (const hash of unique) {
        if (existsSync(layout.objectPath(hash)) || (await packs.find(hash)) !== undefined) continue;
        if (await rescueFromTrash(layout, hash)) continue;
        if (!(await present(hash))) throw new NotFoundError(`object ${hash} not found in ${layout.root}: cannot add a reference for "${holder}"`);
      }
    } catch (error) {
      // all or nothing: the references this call added go again
      await bundles.remove(bundle);
      throw error;
    }
  };

  /** Rewrites the packs holding any of `hashes` without them (under the gc lock); how many it dropped. */
  const dropFromPacks = async (hashes: ReadonlySet<string>): Promise<number> => {
    await packs.refresh();
    const touched = packs.packs.filter((p) => [...hashes].some((h) => p.entries.has(h)));
    if (touched.length === 0) return 0;
    const lock = await takeGcLock(layout.root);
    try {
      let dropped = 0;
      await packs.refresh();
      for (const p of packs.packs.filter((q) => [...hashes].some((h) => q.entries.has(h)))) {
        const keep = [...p.entries].filter(([h]) => !hashes.has(h)).sort((a, b) => a[1].segment - b[1].segment || a[1].offset - b[1].offset);
        dropped += p.entries.size - keep.length;
        async function* inputs(): AsyncGenerator<PackInput> {
          for (const [hash, e] of keep) {
            const bytes = await packs.read(hash);
            if (bytes) yield { hash, bytes, createdAtMs: e.createdAtMs };
          }
        }
        await writePack(packs.dir, inputs());
        await unlink(p.path).catch(() => undefined);
        packs.forget(p.name);
      }
      await packs.refresh();
      return dropped;
    } finally {
      await lock.release();
    }
  };

  return {
    name: 'fs',
    supportsStreaming: true,

    async put(data, put) {
      if (typeof data !== 'string' && !(data instanceof Uint8Array)) {
        throw new UsageError(`put expects a string or Uint8Array, got ${data === null ? 'null' : typeof data}`);
      }
      await lease.hold();
      const bytes = toBuffer(data);
      let hash = put?.knownHash;
      let compressed: Buffer | undefined;
      if (hash === undefined && put?.offThread) ({ hash, compressed } = await encodeOffThread(ctx, bytes, put));
      hash ??= sha256Hex(bytes);
      try {
        if (!existsSync(layout.objectPath(hash))) {
          // a bulk writer's put does not re-list the packs each time: the worst that can happen is a
          // loose copy of an object a gc has just packed, which the next gc removes
          const packed = await packs.find(hash, put?.offThread !== true);
          if (packed) return { hash, size: packed.entry.size, storedSize: packs.storedSize(packed.pack, packed.entry), existed: true };
        }
        return await putBuffer(ctx, bytes, { ...put, knownHash: hash }, compressed);
      } finally {
        // written or not needed: nothing holds the encoder's payload any more
        if (compressed) releasePayload(compressed);
      }
    },

    async putStream(source, put) {
      await lease.hold();
      return putStream(ctx, source, put);
    },

    get: read,

    getStream(hash) {
      // objectMode off: consumers get plain byte chunks, with byte-based backpressure.
      return Readable.from(chunks(hash), { objectMode: false });
    },

    has: present,

    async stat(hash) {
      const info = await statObject(layout, hash);
      if (info) return { ...info, refCount: (await holders(hash)).length };
      const packed = await packs.find(hash);
      if (!packed) return undefined;
      const segment = packed.pack.segments[packed.entry.segment]!;
      return {
        hash,
        size: packed.entry.size,
        storedSize: packs.storedSize(packed.pack, packed.entry),
        codec: segment.codec,
        createdAtMs: packed.entry.createdAtMs,
        refCount: (await holders(hash)).length,
      };
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
      if ((await dropFromPacks(new Set([hash]))) > 0) existed = true;
      if (options.force) {
        await removeAllMarkers(layout, hash);
        await bundles.drop(hash);
      } else await pruneMarkerDir(layout, hash);
      return existed;
    },

    ref: (hash, holder) => addRefs([hash], holder),

    refMany: (hashes, holder) => addRefs(hashes, holder),

    async unref(hash, holder) {
      assertHolder(holder);
      const marker = await removeMarker(layout, hash, holder);
      return (await bundles.drop(hash, holder)) || marker;
    },

    async unrefMany(hashes, holder) {
      assertHolder(holder);
      for (const hash of hashes) assertSha256Hex(hash);
      const dropped = new Set<string>();
      for (const hash of hashes) if (await removeMarker(layout, hash, holder)) dropped.add(hash);
      for (const hash of await bundles.dropMany(hashes, holder)) dropped.add(hash);
      return dropped.size;
    },

    holders,

    async gc(options = {}) {
      const graceMs = options.graceMs ?? DEFAULT_GC_GRACE_MS;
      if (!Number.isFinite(graceMs) || graceMs < 0) {
        throw new UsageError(`invalid graceMs ${graceMs}: expected a non-negative number of ms`);
      }
      const lock = await takeGcLock(layout.root);
      try {
        // after the lock: a writer that leases later waits for this gc (see objects-fs-lease.ts)
        const writers = await liveLeases(layout.root, lease.path);
        const since = writers.length > 0 ? Math.min(...writers.map((w) => w.startedAtMs)) : undefined;
        const looseScanned = new Set<string>();
        const loose = await collectGarbage(
          {
            layout,
            now,
            bundled: async (hash) => (await bundles.holdersOf(hash)).length > 0,
            ...(since !== undefined ? { protectedSinceMs: since } : {}),
            onScanned: (hash) => looseScanned.add(hash),
          },
          graceMs,
        );
        const packed = await repack({ layout, packs, bundles, now, graceMs, writersLive: writers.length > 0, looseScanned });
        // an empty leases folder still takes a block; a writer taking a lease meanwhile makes it again
        // (it retries the ENOENT), and one inside it keeps it (ENOTEMPTY)
        await rmdir(join(layout.root, 'leases')).catch(() => undefined);
        return { scanned: loose.scanned + packed.scanned, deleted: loose.deleted + packed.deleted, freedBytes: loose.freedBytes + packed.freedBytes };
      } finally {
        await lock.release();
      }
    },

    async *list() {
      const seen = new Set<string>();
      for await (const hash of listHashes(layout)) {
        seen.add(hash);
        yield hash;
      }
      for (const hash of await packs.hashes()) if (!seen.has(hash)) yield hash;
    },

    async flush() {
      if (unsynced && unsynced.size > 0) {
        const paths = [...unsynced];
        unsynced.clear();
        await mkdir(layout.root, { recursive: true });
        await syncPaths(paths, layout.root);
      }
      // everything so far is durable and referenced as its writer meant: gc may judge it now
      await lease.release();
    },

    prepare(put) {
      if (put.offThread) ctx.encoder.warm();
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
      const found = new Set(names.filter((n) => n.startsWith(prefix) && isSha256Hex(n)));
      for (const hash of await packs.hashes()) if (hash.startsWith(prefix)) found.add(hash);
      return [...found].sort();
    },

    async verify(hash) {
      for await (const _chunk of chunks(hash)) {
        // reading to the end is the check
      }
    },
  };
}
