/**
 * The ObjectStore contract against the fs driver (once per codec), then what only the fs driver
 * promises: its on-disk layout and format, crash leftovers, repairs, and real multi-process puts.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createFsObjectStore, MIN_COMPRESS_BYTES, type FsObjectStoreOptions } from '../../src/store/drivers/objects-fs.js';
import type { ObjectCodecName, ObjectStore } from '../../src/store/object-store.js';
import { objectStoreContract } from './object-store.contract.js';

const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
const objectFile = (root: string, hash: string) => join(root, hash.slice(0, 2), hash.slice(2, 4), hash);

/** Flips one byte in the middle of the payload (between the 8-byte header and 8-byte trailer). */
async function flipPayloadByte(root: string, hash: string): Promise<void> {
  const path = objectFile(root, hash);
  const file = await readFile(path);
  const payloadBytes = file.length - 16;
  if (payloadBytes <= 0) throw new Error(`object ${hash} has no payload to corrupt`);
  file[8 + Math.floor(payloadBytes / 2)]! ^= 0x5a;
  await writeFile(path, file);
}

for (const codec of ['brotli', 'gzip', 'none'] as const) {
  objectStoreContract(`fs (${codec})`, async (clock) => {
    const root = await mkdtemp(join(tmpdir(), 'ctxvm-objects-'));
    const open = () => createFsObjectStore({ root, codec, now: clock.now });
    return {
      store: open(),
      reopen: async () => open(),
      corrupt: (hash) => flipPayloadByte(root, hash),
      cleanup: () => rm(root, { recursive: true, force: true }),
    };
  });
}

// deferred durability: puts and refs are fsynced in batches by flush(); everything else must hold
objectStoreContract('fs (brotli, deferred durability)', async (clock) => {
  const root = await mkdtemp(join(tmpdir(), 'ctxvm-objects-'));
  const open = () => createFsObjectStore({ root, durability: 'deferred', now: clock.now });
  return {
    store: open(),
    reopen: async () => open(),
    corrupt: (hash) => flipPayloadByte(root, hash),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
});

/**
 * The bundle files in `refs/` (the layout mark `refs/bundles`, an empty file, left out), after
 * checking that the mark is there and that nothing but bundles lies beside it.
 */
async function bundleFiles(root: string): Promise<string[]> {
  const names = await readdir(join(root, 'refs'));
  expect(names).toContain('bundles');
  expect((await stat(join(root, 'refs', 'bundles'))).isFile()).toBe(true);
  const files = names.filter((n) => n !== 'bundles');
  expect(files.every((n) => /^(?:[0-9a-f]{32}|packed)\.[0-9a-f]{16}$/.test(n))).toBe(true);
  return files;
}

async function readAll(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** All files under `dir`, as paths relative to it. */
async function walk(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  // writer leases of store instances that never flushed are not objects
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name))).filter((p) => !p.startsWith('leases')).sort();
}

describe('fs object store', () => {
  let root: string;
  let nowMs: number;
  const open = (options: Partial<FsObjectStoreOptions> = {}): ObjectStore =>
    createFsObjectStore({ root, now: () => nowMs, ...options });

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'ctxvm-objects-'));
    nowMs = Date.UTC(2025, 5, 1);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  describe('off-thread puts', () => {
    // the encoder thread hands its output back in the buffer zlib wrote it into (an offset and
    // spare room in it), in one output chunk or several: every shape must store the same bytes
    const text = (n: number) => Buffer.from('{"type":"tool_result","content":"line of output"}\n'.repeat(Math.ceil(n / 50)).slice(0, n));
    const shapes: [string, Buffer][] = [
      ['below the compression floor', text(MIN_COMPRESS_BYTES - 1)],
      ['a few hundred bytes', text(300)],
      ['20 KiB of text', text(20 * 1024)],
      ['1 MiB of text', text(1 << 20)],
      ['1 MiB of random bytes', randomBytes(1 << 20)],
      ['3 MiB, half random', Buffer.concat([text(3 << 19), randomBytes(3 << 19)])],
    ];
    for (const codec of ['brotli', 'gzip'] as const) {
      it(`gives back what was put, whatever its size and compressibility (${codec})`, async () => {
        const store = open({ codec });
        store.prepare({ offThread: true });
        const puts = await Promise.all(shapes.map(([, bytes]) => store.put(bytes, { offThread: true })));
        for (const [i, [what, bytes]] of shapes.entries()) {
          expect(puts[i]!.hash, what).toBe(sha256(bytes));
          expect(Buffer.compare(await store.get(puts[i]!.hash), bytes), what).toBe(0);
        }
        // the text compressed, the random bytes did not
        expect(puts[3]!.storedSize).toBeLessThan((1 << 20) / 10);
        expect(puts[4]!.storedSize).toBeGreaterThan(1 << 20);
      });
    }
  });

  describe('layout and format', () => {
    it('files an object under <aa>/<bb>/<hash> with a CTXO header and a size trailer', async () => {
      const text = '{"type":"tool_result","content":"ok"}\n'.repeat(200);
      const info = await open().put(text);
      expect(await walk(root)).toEqual([join(info.hash.slice(0, 2), info.hash.slice(2, 4), info.hash)]);
      const file = await readFile(objectFile(root, info.hash));
      expect(file.length).toBe(info.storedSize);
      expect(file.subarray(0, 4).toString('latin1')).toBe('CTXO');
      expect([file[4], file[5], file[6], file[7]]).toEqual([1, 2, 0, 0]); // version 1, brotli, reserved
      expect(file.readBigUInt64BE(file.length - 8)).toBe(BigInt(Buffer.byteLength(text)));
      expect(info.storedSize).toBeLessThan(Buffer.byteLength(text) / 10);
    });

    it('records the codec per object, so stores with different defaults read each other', async () => {
      const text = 'per-object codec\n'.repeat(500);
      const gz = await open({ codec: 'gzip', level: 9 }).put(text);
      const brotliStore = open({ codec: 'brotli' });
      expect(await brotliStore.stat(gz.hash)).toMatchObject({ codec: 'gzip', size: Buffer.byteLength(text) });
      expect((await brotliStore.get(gz.hash)).toString()).toBe(text);
      const raw = await brotliStore.put('another one\n'.repeat(500), { codec: 'none' });
      expect(await brotliStore.stat(raw.hash)).toMatchObject({ codec: 'none', storedSize: 16 + 12 * 500 });
      expect((await open({ codec: 'gzip' }).get(raw.hash)).toString()).toBe('another one\n'.repeat(500));
    });

    it(`stores objects under ${MIN_COMPRESS_BYTES} bytes and incompressible ones uncompressed`, async () => {
      const store = open();
      const small = await store.put('x'.repeat(MIN_COMPRESS_BYTES - 1));
      const large = await store.put('x'.repeat(MIN_COMPRESS_BYTES));
      const random = await store.put(randomBytes(50_000));
      const streamedSmall = await store.putStream((async function* () { yield Buffer.from('tiny'); })());
      expect(await store.stat(small.hash)).toMatchObject({ codec: 'none', storedSize: MIN_COMPRESS_BYTES - 1 + 16 });
      expect(await store.stat(large.hash)).toMatchObject({ codec: 'brotli' });
      expect(await store.stat(random.hash)).toMatchObject({ codec: 'none', storedSize: 50_016 });
      expect(await store.stat(streamedSmall.hash)).toMatchObject({ codec: 'none', size: 4 });
    });

    it('rejects an unknown codec or an out-of-range level', () => {
      expect(() => open({ codec: 'zstd' as ObjectCodecName })).toThrow(expect.objectContaining({ code: 'E_USAGE' }));
      expect(() => open({ codec: 'gzip', level: 0 })).toThrow(/gzip level 0/);
      expect(() => open({ codec: 'brotli', level: 12 })).toThrow(/brotli level 12/);
    });

    it('keeps each ref call as one bundle file, with no folder per object', async () => {
      const store = open();
      const { hash } = await store.put('held object'.repeat(40));
      await store.ref(hash, 'snapshot:1');
      await store.ref(hash, 'trim:2');
      const bundles = await bundleFiles(root);
      expect(bundles).toHaveLength(2);
      expect(bundles.every((m) => /^[0-9a-f]{32}\.[0-9a-f]{16}$/.test(m))).toBe(true);
      expect(await store.holders(hash)).toEqual(['snapshot:1', 'trim:2']);
    });

    it('keeps a large batch of references as one bundle file, which other instances see', async () => {
      const a = open();
      const b = open();
      const hashes = await Promise.all(Array.from({ length: 20 }, async (_, i) => (await a.put(`bundled ${i}`.repeat(40))).hash));
      await a.refMany(hashes, 'trim:bulk');
      await a.flush(); // the writer is done: its lease no longer holds back gc
      const bundles = await bundleFiles(root); // and no marker folders
      expect(bundles).toHaveLength(1);
      expect(await b.holders(hashes[7]!)).toEqual(['trim:bulk']);
      nowMs += 24 * 3600_000;
      expect((await b.gc()).deleted).toBe(0);
      // dropping one reference rewrites the bundle under a new name
      expect(await a.unref(hashes[7]!, 'trim:bulk')).toBe(true);
      expect(await bundleFiles(root)).not.toContain(bundles[0]);
      expect(await b.holders(hashes[7]!)).toEqual([]);
      expect(await b.holders(hashes[8]!)).toEqual(['trim:bulk']);
      expect(await b.gc()).toMatchObject({ deleted: 1 });
      await expect(b.delete(hashes[8]!)).rejects.toMatchObject({ code: 'E_CONFLICT' });
      expect(await b.delete(hashes[8]!, { force: true })).toBe(true);
      expect(await a.holders(hashes[9]!)).toEqual(['trim:bulk']);
    });

    it('never touches paths outside the root for a crafted hash', async () => {
      const parent = dirname(root);
      const before = (await readdir(parent)).sort();
      const store = open();
      await expect(store.get('../../../../etc/passwd')).rejects.toMatchObject({ code: 'E_USAGE' });
      await expect(store.ref(`../${'a'.repeat(61)}`, 'x')).rejects.toMatchObject({ code: 'E_USAGE' });
      await expect(store.delete('..')).rejects.toMatchObject({ code: 'E_USAGE' });
      expect((await readdir(parent)).sort()).toEqual(before);
      expect(await walk(root)).toEqual([]);
    });
  });

  describe('writes', () => {
    it('leaves no staging or temp files behind after streaming puts, new or deduplicated', async () => {
      const store = open();
      const big = Buffer.alloc(3 << 20, 'streamed content ');
      const chunks = async function* () {
        for (let i = 0; i < big.length; i += 100_000) yield big.subarray(i, i + 100_000);
      };
      const first = await store.putStream(chunks());
      const again = await store.putStream(chunks());
      expect(again).toEqual({ ...first, existed: true });
      const files = await walk(root);
      expect(files).toEqual([join(first.hash.slice(0, 2), first.hash.slice(2, 4), first.hash)]);
    });

    it('does not rewrite an existing object on a deduplicated put or streaming put', async () => {
      const store = open();
      const content = Buffer.alloc(1 << 20, 'written once ');
      const { hash } = await store.put(content);
      const before = await stat(objectFile(root, hash));
      nowMs += 5000;
      expect(await store.put(content)).toMatchObject({ existed: true });
      nowMs += 5000;
      expect(await store.putStream((async function* () { yield content.subarray(0, 500_000); yield content.subarray(500_000); })())).toMatchObject({ existed: true });
      const after = await stat(objectFile(root, hash));
      expect(after.ino).toBe(before.ino);
      expect(Math.round(after.mtimeMs)).toBe(Math.round(before.mtimeMs) + 10_000); // only the gc clock moved
    });

    it('replaces an object whose frame is broken when the content is put again', async () => {
      const store = open();
      const text = 'repair me\n'.repeat(300);
      const { hash } = await store.put(text);
      const path = objectFile(root, hash);
      await writeFile(path, (await readFile(path)).subarray(0, 10)); // truncated by a bad disk
      await expect(store.get(hash)).rejects.toMatchObject({ code: 'E_INTEGRITY' });
      expect(await store.put(text)).toMatchObject({ hash, existed: false });
      expect((await store.get(hash)).toString()).toBe(text);
    });
  });

  describe('corruption', () => {
    const corruptions: Array<[string, (file: Buffer) => Buffer]> = [
      ['a truncated file', (f) => f.subarray(0, 12)],
      ['a bad magic', (f) => Buffer.concat([Buffer.from('JUNK'), f.subarray(4)])],
      ['an unknown format version', (f) => Buffer.from(f).fill(9, 4, 5)],
      ['an unknown codec id', (f) => Buffer.from(f).fill(7, 5, 6)],
      ['a wrong size in the trailer', (f) => { const c = Buffer.from(f); c.writeBigUInt64BE(10n, c.length - 8); return c; }],
      ['a truncated payload', (f) => Buffer.concat([f.subarray(0, f.length - 40), f.subarray(f.length - 8)])],
    ];
    for (const [label, damage] of corruptions) {
      it(`reports ${label} as an IntegrityError naming the file`, async () => {
        const store = open();
        const { hash } = await store.put('corruptible content\n'.repeat(400));
        const path = objectFile(root, hash);
        await writeFile(path, damage(await readFile(path)));
        const error = await store.verify(hash).then(() => undefined, (e: unknown) => e);
        expect(error).toMatchObject({ code: 'E_INTEGRITY' });
        expect((error as Error).message).toContain(path);
        await expect(store.get(hash)).rejects.toMatchObject({ code: 'E_INTEGRITY' });
      });
    }

    it('stops a stream before it yields more bytes than the trailer records', async () => {
      const store = open();
      const { hash } = await store.put('a decompression bomb in miniature\n'.repeat(4000));
      const path = objectFile(root, hash);
      const file = await readFile(path);
      file.writeBigUInt64BE(10n, file.length - 8);
      await writeFile(path, file);
      let received = 0;
      const error = await (async () => {
        try {
          for await (const chunk of store.getStream(hash)) received += (chunk as Buffer).length;
        } catch (e) {
          return e;
        }
      })();
      expect(error).toMatchObject({ code: 'E_INTEGRITY' });
      expect(received).toBeLessThanOrEqual(10);
    });

    it('reports a broken header from stat too', async () => {
      const store = open();
      const { hash } = await store.put('stat me'.repeat(100));
      const path = objectFile(root, hash);
      await writeFile(path, Buffer.concat([Buffer.from('JUNK'), (await readFile(path)).subarray(4)]));
      await expect(store.stat(hash)).rejects.toMatchObject({ code: 'E_INTEGRITY' });
    });
  });

  describe('gc housekeeping', () => {
    it('removes temp files of crashed writers only once they are an hour old', async () => {
      const store = open();
      const { hash } = await store.put('neighbour'.repeat(100));
      const dir = dirname(objectFile(root, hash));
      const stale = join(dir, `.${hash}.deadbeef0000.tmp`);
      const fresh = join(dir, `.${hash}.cafebabe0000.tmp`);
      const staleStaging = join(root, '.staging', '.0123456789abcdef.tmp');
      await mkdir(join(root, '.staging'), { recursive: true });
      for (const path of [stale, fresh, staleStaging]) await writeFile(path, 'partial');
      const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
      await utimes(stale, twoHoursAgo, twoHoursAgo);
      await utimes(staleStaging, twoHoursAgo, twoHoursAgo);
      await store.gc();
      expect(await readdir(dir)).toEqual([`.${hash}.cafebabe0000.tmp`, hash].sort());
      expect(await readdir(join(root, '.staging'))).toEqual([]);
    });

    it('puts back objects a crashed gc left in the trash, then decides again', async () => {
      const store = open();
      const held = await store.put('held'.repeat(100));
      await store.ref(held.hash, 'snapshot:1');
      const orphan = await store.put('orphan'.repeat(100));
      await mkdir(join(root, '.trash'), { recursive: true });
      const longAgo = Date.now() - 3600_000;
      for (const { hash } of [held, orphan]) {
          await rename(objectFile(root, hash), join(root, '.trash', `${hash}.${longAgo}.00ff`));
      }
      await expect(stat(objectFile(root, held.hash))).rejects.toMatchObject({ code: 'ENOENT' });
      nowMs += 3600_000;
      const result = await store.gc();
      expect(result).toMatchObject({ scanned: 2, deleted: 1, freedBytes: orphan.storedSize });
      expect((await store.get(held.hash)).toString()).toBe('held'.repeat(100));
      expect(await readdir(join(root, '.trash'))).toEqual([]);
    });

    it('serves an object a running gc holds in the trash, and lets a ref rescue it', async () => {
      const store = open();
      const text = 'in limbo\n'.repeat(100);
      const { hash } = await store.put(text);
      await mkdir(join(root, '.trash'), { recursive: true });
      // What a gc does right before its second look at an unreferenced old object.
      const trashed = join(root, '.trash', `${hash}.${Date.now()}.0a0b`);
      await rename(objectFile(root, hash), trashed);
      expect(await store.has(hash)).toBe(true);
      expect((await store.get(hash)).toString()).toBe(text);
      expect((await readAll(store.getStream(hash))).toString()).toBe(text);
      expect(await store.stat(hash)).toMatchObject({ size: Buffer.byteLength(text) });
      await store.ref(hash, 'snapshot:rescuer');
      expect(await readdir(join(root, '.trash'))).toEqual([]);
      expect((await readFile(objectFile(root, hash))).length).toBeGreaterThan(16);
      nowMs += 3600_000;
      expect(await store.gc()).toMatchObject({ deleted: 0 });
    });

    it('merges marker files of older stores into the packed references and removes their folders', async () => {
      const store = open();
      const { hash } = await store.put('short lived'.repeat(100));
      const kept = await store.put('kept by an old marker'.repeat(100));
      // the layout of stores written before bundles: refs/<aa>/<hash>/<holder id>
      const markerDir = join(root, 'refs', kept.hash.slice(0, 2), kept.hash);
      await mkdir(markerDir, { recursive: true });
      await writeFile(join(markerDir, createHash('sha256').update('snapshot:old').digest('hex').slice(0, 32)), 'snapshot:old');
      expect(await store.holders(kept.hash)).toEqual(['snapshot:old']);
      nowMs += 3600_000;
      expect(await store.gc()).toMatchObject({ deleted: 1 });
      await expect(store.get(hash)).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
      const files = await bundleFiles(root); // the marker folders are gone
      expect(files).toHaveLength(1);
      expect(files[0]).toMatch(/^packed\.[0-9a-f]{16}$/);
      expect(await open().holders(kept.hash)).toEqual(['snapshot:old']);
      expect((await store.get(kept.hash)).toString()).toBe('kept by an old marker'.repeat(100));
    });

    it("converts an older store's bundle folder into one binary packed file and the layout mark", async () => {
      const store = open();
      const a = await store.put('held by an old packed file'.repeat(50));
      const b = await store.put('held by an old bundle'.repeat(50));
      const c = await store.put('held by a bundle written before the first gc'.repeat(50));
      const loose = await store.put('held by nothing'.repeat(50));
      // the older layout: refs/bundles/ holding a text packed file and a one-holder bundle
      const old = join(root, 'refs', 'bundles');
      await rm(join(root, 'refs'), { recursive: true, force: true });
      await mkdir(old, { recursive: true });
      await writeFile(join(old, 'packed.0123456789abcdef'), `${JSON.stringify('snapshot:1')}\t${[a.hash, b.hash].sort().join(',')}\n${JSON.stringify('trim:2')}\t${a.hash}\n`);
      await writeFile(join(old, `${'f'.repeat(32)}.0011223344556677`), `snapshot:3\n${b.hash}\n`);
      const reopened = open();
      expect(await reopened.holders(a.hash)).toEqual(['snapshot:1', 'trim:2']);
      // while the folder is there, new bundles go into it (an older ctxvm sharing the store reads them)
      await reopened.ref(c.hash, 'snapshot:4');
      await reopened.flush();
      expect((await readdir(old)).length).toBe(3);
      nowMs += 24 * 3600_000;
      expect(await reopened.gc()).toMatchObject({ deleted: 1 });
      await expect(reopened.get(loose.hash)).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
      const files = await bundleFiles(root);
      expect(files).toHaveLength(1);
      const packed = await readFile(join(root, 'refs', files[0]!));
      expect(packed.subarray(0, 4).toString('latin1')).toBe('CTXR');
      // three distinct hashes once each (32 bytes), not the 64 hex digits of every reference
      expect(packed.length).toBeLessThan(3 * 32 + 80);
      expect((await stat(old)).size).toBe(0);
      for (const s of [reopened, open()]) {
        expect(await s.holders(a.hash)).toEqual(['snapshot:1', 'trim:2']);
        expect(await s.holders(b.hash)).toEqual(['snapshot:1', 'snapshot:3']);
        expect(await s.holders(c.hash)).toEqual(['snapshot:4']);
      }
      // an older ctxvm lists refs/bundles/: on the mark it fails instead of finding no references
      await expect(readdir(old)).rejects.toMatchObject({ code: 'ENOTDIR' });
      // after the conversion new bundles go to refs/, and a second gc leaves one packed file again
      const d = await reopened.put('held after the conversion'.repeat(50));
      await reopened.ref(d.hash, 'snapshot:5');
      await reopened.flush();
      expect(await bundleFiles(root)).toHaveLength(2);
      expect(await reopened.gc()).toMatchObject({ deleted: 0 });
      expect(await bundleFiles(root)).toHaveLength(1);
      expect(await open().holders(d.hash)).toEqual(['snapshot:5']);
    });

    it('removes the empty leases folder at the end of gc, and writers make it again', async () => {
      const store = open();
      const first = await store.put('written before gc'.repeat(50));
      await store.ref(first.hash, 'snapshot:1');
      await store.flush(); // the lease goes, its folder stays
      expect(await readdir(join(root, 'leases'))).toEqual([]);
      await store.gc();
      await expect(stat(join(root, 'leases'))).rejects.toMatchObject({ code: 'ENOENT' });
      // a writer holding a lease while gc runs keeps the folder (and its lease)
      const writer = open();
      const second = await writer.put('written while gc runs'.repeat(50));
      await writer.ref(second.hash, 'snapshot:2');
      expect(await readdir(join(root, 'leases'))).toHaveLength(1);
      await open().gc();
      expect(await readdir(join(root, 'leases'))).toHaveLength(1);
      await writer.flush();
      expect(await open().holders(second.hash)).toEqual(['snapshot:2']);
    });

    it('refuses to collect when the packed reference file is damaged, deleting nothing', async () => {
      const store = open();
      const held = await store.put('held by the packed file'.repeat(50));
      await store.ref(held.hash, 'snapshot:1');
      await store.flush();
      nowMs += 24 * 3600_000;
      await store.gc();
      const [name] = await bundleFiles(root);
      const path = join(root, 'refs', name!);
      const file = await readFile(path);
      file[10]! ^= 0x01; // inside the hash table
      await writeFile(path, file);
      await expect(open().gc()).rejects.toMatchObject({ code: 'E_INTEGRITY', message: expect.stringContaining(path) });
      expect((await open().get(held.hash)).toString()).toBe('held by the packed file'.repeat(50));
    });
  });

  describe('packs', () => {
    const growing = (n: number) => Array.from({ length: n }, (_, i) => `{"line":${i},"text":"a growing session, line ${i} of many"}\n`).join('');

    it('packs referenced loose objects into one pack file that a fresh instance reads, and stores repeats about once', async () => {
      const store = open();
      // each object is a prefix of the next, as the last chunk of one snapshot is of the next one's
      const infos = [];
      for (const n of [2000, 4000, 6000, 8000]) infos.push(await store.put(growing(n)));
      for (const [i, info] of infos.entries()) await store.ref(info.hash, `snapshot:${i}`);
      const looseBytes = infos.reduce((n, i) => n + i.storedSize, 0);
      nowMs += 3600_000;
      expect(await store.gc()).toMatchObject({ scanned: 4, deleted: 0 });
      const files = await walk(root);
      const packs = files.filter((f) => f.startsWith('packs/'));
      expect(packs).toHaveLength(1);
      expect(packs[0]).toMatch(/^packs\/pack-[0-9a-f]{40}\.pack$/);
      expect(files.filter((f) => /^[0-9a-f]{2}\//.test(f))).toEqual([]); // no loose copies
      const packBytes = (await stat(join(root, packs[0]!))).size;
      // together they cost about what the largest costs alone, not the sum
      expect(packBytes).toBeLessThan(looseBytes / 2);
      const fresh = open();
      for (const [i, info] of infos.entries()) {
        expect((await fresh.get(info.hash)).toString()).toBe(growing([2000, 4000, 6000, 8000][i]!));
        expect((await readAll(fresh.getStream(info.hash))).length).toBe(info.size);
        expect(await fresh.stat(info.hash)).toMatchObject({ size: info.size, refCount: 1, createdAtMs: Date.UTC(2025, 5, 1) });
      }
      expect((await fresh.findByPrefix(infos[0]!.hash.slice(0, 6)))).toEqual([infos[0]!.hash]);
      expect(await fresh.put(growing(2000))).toMatchObject({ hash: infos[0]!.hash, existed: true });
    });

    it('drops a packed object once nothing references it, rewriting the pack', async () => {
      const store = open();
      const a = await store.put(growing(1000));
      const b = await store.put(growing(1500));
      await store.refMany([a.hash, b.hash], 'snapshot:both');
      await store.ref(b.hash, 'snapshot:b');
      await store.flush();
      nowMs += 3600_000;
      await store.gc();
      await store.unref(a.hash, 'snapshot:both');
      await store.unref(b.hash, 'snapshot:both');
      expect(await store.gc()).toMatchObject({ deleted: 1 });
      expect(await store.has(a.hash)).toBe(false);
      expect((await store.get(b.hash)).toString()).toBe(growing(1500));
      expect((await walk(root)).filter((f) => f.startsWith('packs/'))).toHaveLength(1);
      expect(await store.delete(b.hash, { force: true })).toBe(true);
      expect(await store.has(b.hash)).toBe(false);
    });

    it('reports a damaged pack as an IntegrityError naming the file', async () => {
      const store = open();
      const { hash } = await store.put(growing(3000));
      await store.ref(hash, 'snapshot:1');
      await store.gc();
      const [pack] = (await walk(root)).filter((f) => f.startsWith('packs/'));
      const file = await readFile(join(root, pack!));
      file[20]! ^= 0x5a; // inside the first segment
      await writeFile(join(root, pack!), file);
      const error = await open().get(hash).then(() => undefined, (e: unknown) => e);
      expect(error).toMatchObject({ code: 'E_INTEGRITY' });
      expect((error as Error).message).toContain(pack!);
      // a damaged index is caught by its checksum
      file[file.length - 60]! ^= 0x5a;
      await writeFile(join(root, pack!), file);
      await expect(open().get(hash)).rejects.toMatchObject({ code: 'E_INTEGRITY' });
    });

    it('keeps what a live writer stored but has not referenced yet, even with no grace period', async () => {
      // leases are wall-clock: these stores run on the real clock
      const real = () => createFsObjectStore({ root });
      const writer = real();
      const { hash } = await writer.put(growing(500));
      // another process's gc, no grace: the writer's lease protects its object
      expect(await real().gc({ graceMs: 0 })).toMatchObject({ deleted: 0 });
      await writer.ref(hash, 'snapshot:late');
      await writer.flush();
      expect(await writer.holders(hash)).toEqual(['snapshot:late']);
      // an unreferenced object of a writer that has flushed goes
      const other = real();
      const { hash: gone } = await other.put(growing(700));
      await other.flush();
      expect(await real().gc({ graceMs: 0 })).toMatchObject({ deleted: 1 });
      expect(await real().has(gone)).toBe(false);
    });
  });

  describe('gc racing writers', () => {
    it('never loses an object whose put and ref completed while gc ran', async () => {
      const failures: string[] = [];
      let collected = 0;
      for (let round = 0; round < 25; round++) {
        // A fresh root per round keeps each gc pass short, so passes and writers overlap often.
        const roundRoot = join(root, `round-${round}`);
        const t = nowMs;
        const store = createFsObjectStore({ root: roundRoot, now: () => t });
        // Objects first written an hour ago and unreferenced since: gc wants every one of them,
        // while writers put the same content again and reference it.
        const past = createFsObjectStore({ root: roundRoot, now: () => t - 3600_000 });
        const contents = Array.from({ length: 16 }, (_, i) => `round ${round} object ${i}\n`.repeat(40));
        for (const content of contents) await past.put(content);
        const collector = createFsObjectStore({ root: roundRoot, now: () => t }).gc();
        await Promise.all(
          contents.map(async (content, i) => {
            await new Promise((resolve) => setTimeout(resolve, (i * 5 + round) % 12));
            try {
              const { hash } = await store.put(content);
              await store.ref(hash, 'snapshot:racer');
              if ((await store.get(hash)).toString() !== content) failures.push(`round ${round} #${i}: wrong content`);
            } catch (error) {
              failures.push(`round ${round} #${i}: ${String(error)}`);
            }
          }),
        );
        collected += (await collector).deleted;
        const later = createFsObjectStore({ root: roundRoot, now: () => t + 3600_000 });
        expect(await later.gc()).toMatchObject({ scanned: 16, deleted: 0 });
      }
      expect(failures).toEqual([]);
      expect(collected).toBeGreaterThan(0); // the race was real: gc deleted objects meanwhile
    });
  });

  describe('separate processes', () => {
    // Node 20 cannot import TypeScript, so the store's modules — the driver and every module it
    // imports, followed from its relative imports — are transpiled into a temp dir.
    async function transpileStore(outDir: string): Promise<string> {
      const srcRoot = fileURLToPath(new URL('../../src/', import.meta.url));
      const pending = ['store/drivers/objects-fs.ts'];
      const done = new Set<string>();
      while (pending.length > 0) {
        const file = pending.pop()!;
        if (done.has(file)) continue;
        done.add(file);
        const source = await readFile(join(srcRoot, file), 'utf8');
        for (const m of source.matchAll(/from '(\.{1,2}\/[^']+)\.js'/g)) pending.push(join(dirname(file), `${m[1]}.ts`));
        const { outputText } = ts.transpileModule(source, {
          compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
        });
        await mkdir(dirname(join(outDir, file)), { recursive: true });
        await writeFile(join(outDir, file.replace(/\.ts$/, '.js')), outputText);
      }
      return pathToFileURL(join(outDir, 'store/drivers/objects-fs.js')).href;
    }

    let build = '';
    let driver = '';
    beforeAll(async () => {
      build = await mkdtemp(join(tmpdir(), 'ctxvm-objects-build-'));
      driver = await transpileStore(build);
    });
    afterAll(async () => {
      if (build) await rm(build, { recursive: true, force: true });
    });

    it('lets a process exit when its store was prepared for off-thread puts, used or not', async () => {
      const script = `
        import { createFsObjectStore } from ${JSON.stringify(driver)};
        const [root, use] = process.argv.slice(1);
        const store = createFsObjectStore({ root });
        store.prepare({ offThread: true });
        if (use === 'use') process.stdout.write((await store.put(Buffer.alloc(1 << 20, 'x'), { offThread: true })).hash);`;
      const run = promisify(execFile);
      // a worker kept referenced would hold the process until the test's timeout
      const [idle, used] = await Promise.all([run(process.execPath, ['--input-type=module', '-e', script, root, 'idle'], { timeout: 20_000 }), run(process.execPath, ['--input-type=module', '-e', script, root, 'use'], { timeout: 20_000 })]);
      expect(idle.stdout).toBe('');
      expect(used.stdout).toBe(sha256(Buffer.alloc(1 << 20, 'x')));
    });

    it('stores one intact object when four processes put the same content at once', async () => {
      const script = `
        import { createFsObjectStore } from ${JSON.stringify(driver)};
        const [root, seed] = process.argv.slice(1);
        const content = Buffer.alloc(4 << 20);
        for (let i = 0; i < content.length; i++) content[i] = 97 + ((i * 31 + (i >> 10)) % 26);
        const store = createFsObjectStore({ root });
        const results = [];
        for (let round = 0; round < 3; round++) {
          results.push(await store.put(content));
          results.push(await store.putStream((async function* () {
            for (let i = 0; i < content.length; i += 65536 + Number(seed)) yield content.subarray(i, i + 65536 + Number(seed));
          })()));
        }
        process.stdout.write(JSON.stringify(results));`;
      const run = promisify(execFile);
      const outputs = await Promise.all(
        [1, 2, 3, 4].map((seed) => run(process.execPath, ['--input-type=module', '-e', script, root, String(seed)])),
      );
      const expected = Buffer.alloc(4 << 20);
      for (let i = 0; i < expected.length; i++) expected[i] = 97 + ((i * 31 + (i >> 10)) % 26);
      const infos = outputs.flatMap((o) => JSON.parse(o.stdout) as Array<{ hash: string; existed: boolean }>);
      expect(infos).toHaveLength(24);
      expect(new Set(infos.map((i) => i.hash))).toEqual(new Set([sha256(expected)]));
      const store = open();
      expect(await walk(root)).toEqual([relative(root, objectFile(root, sha256(expected)))]);
      expect(Buffer.compare(await store.get(sha256(expected)), expected)).toBe(0);
    });
  });
});
