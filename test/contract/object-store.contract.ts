/**
 * Conformance suite for `ObjectStore` drivers. A driver's test file runs it in a few lines:
 *
 *   objectStoreContract('fs', async (clock) => {
 *     const root = await mkdtemp(...);
 *     return { store: createFsObjectStore({ root, now: clock.now }), reopen, corrupt, cleanup };
 *   });
 *
 * Expected values are computed independently of the store (node:crypto, not src/core/hash.ts).
 */
import { CtxvmError } from '../../src/errors.js';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_GC_GRACE_MS, type ObjectStore } from '../../src/store/object-store.js';

/** A store under test plus the few backend-specific operations the suite needs. */
export interface ObjectStoreHarness {
  /** A fresh, empty store whose clock is the one passed to the factory. */
  store: ObjectStore;
  /** Another store over the same storage and clock, as a second process would open it. */
  reopen(): Promise<ObjectStore>;
  /** Damages the stored representation of `hash` (e.g. flips one payload byte). */
  corrupt(hash: string): Promise<void>;
  /** Removes everything the harness created. */
  cleanup(): Promise<void>;
}

/** A controllable clock, Unix ms. */
export interface ContractClock {
  now(): number;
}

export type ObjectStoreHarnessFactory = (clock: ContractClock) => Promise<ObjectStoreHarness>;

const START_MS = Date.UTC(2025, 0, 1);
const MiB = 1 << 20;

const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const ABSENT = 'ab'.repeat(32);

async function readAll(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Resolves with the error a stream ends with, or rejects if it ends cleanly. */
async function streamError(stream: AsyncIterable<Buffer>): Promise<unknown> {
  try {
    for await (const _chunk of stream) {
      // drain
    }
  } catch (error) {
    return error;
  }
  throw new Error('stream ended without an error');
}

async function* chunksOf(data: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let offset = 0; offset < data.length; offset += size) yield data.subarray(offset, offset + size);
}

/** Deterministic text over 16 letters: about half compressible, so neither trivial nor random. */
function pseudoText(bytes: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(bytes);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < bytes; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = (x & 63) === 0 ? 0x0a : 0x61 + (x & 15);
  }
  return out;
}

/** Live Buffer memory after a full collection, bytes (two passes: the first leaves survivors). */
function liveBufferBytes(): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  return process.memoryUsage().arrayBuffers;
}

const INVALID_HASHES = [
  '',
  'abc',
  '../../../../etc/passwd',
  'AB'.repeat(32),
  'a'.repeat(63),
  'a'.repeat(65),
  `${'a'.repeat(62)}/.`,
  `../${'a'.repeat(61)}`,
  `${'a'.repeat(63)}\n`,
];

export function objectStoreContract(name: string, factory: ObjectStoreHarnessFactory): void {
  describe(`ObjectStore contract: ${name}`, () => {
    let nowMs = START_MS;
    const clock: ContractClock = { now: () => nowMs };
    const advance = (ms: number) => {
      nowMs += ms;
    };
    let harness: ObjectStoreHarness;
    let store: ObjectStore;

    beforeEach(async () => {
      nowMs = START_MS;
      harness = await factory(clock);
      store = harness.store;
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    const listAll = async (s: ObjectStore = store) => {
      const hashes: string[] = [];
      for await (const hash of s.list()) hashes.push(hash);
      return hashes.sort();
    };

    describe('prefix lookup and flush', () => {
      it('finds objects by a hash prefix and rejects a malformed prefix', async () => {
        const a = await store.put('first object for prefix lookup');
        const b = await store.put('second object for prefix lookup');
        expect(await store.findByPrefix(a.hash.slice(0, 12))).toEqual([a.hash]);
        expect(await store.findByPrefix(b.hash)).toEqual([b.hash]);
        const other = a.hash.slice(0, 4) === '0000' ? 'ffff' : '0000';
        expect(await store.findByPrefix(other + 'abcdef')).toEqual([]);
        await expect(store.findByPrefix('xyz')).rejects.toSatisfy((e: unknown) => CtxvmError.is(e) && e.code === 'E_USAGE');
      });

      it('flush resolves and leaves every object readable', async () => {
        const infos = await Promise.all(['a', 'b', 'c'].map((x) => store.put(x.repeat(1000))));
        await store.ref(infos[0]!.hash, 'test:flush');
        await store.flush();
        for (const info of infos) expect((await store.get(info.hash)).length).toBe(1000);
        expect(await store.holders(infos[0]!.hash)).toEqual(['test:flush']);
      });
    });

    describe('put and get', () => {
      it('round-trips a string, addressed by the sha256 of its UTF-8 bytes', async () => {
        const text = 'The quick brown fox jumps over the lazy dog. '.repeat(50);
        const info = await store.put(text);
        expect(info).toEqual({ hash: sha256(text), size: Buffer.byteLength(text), storedSize: expect.any(Number), existed: false });
        expect(info.storedSize).toBeGreaterThan(0);
        expect((await store.get(info.hash)).toString('utf8')).toBe(text);
        expect(await store.has(info.hash)).toBe(true);
      });

      it('round-trips every byte value and invalid UTF-8 unchanged', async () => {
        const bytes = new Uint8Array(256 * 40 + 5);
        for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + (i >> 8)) & 0xff;
        bytes.set([0xc3, 0x28, 0xff, 0xfe, 0x00], bytes.length - 5);
        const info = await store.put(bytes);
        expect(info.hash).toBe(sha256(bytes));
        expect(info.size).toBe(bytes.length);
        expect(Buffer.compare(await store.get(info.hash), Buffer.from(bytes))).toBe(0);
        expect(Buffer.compare(await readAll(store.getStream(info.hash)), Buffer.from(bytes))).toBe(0);
      });

      it('hashes only the viewed bytes of a Uint8Array that is a window on a larger buffer', async () => {
        const backing = Buffer.from('xxxxhello windowxxxx');
        const view = new Uint8Array(backing.buffer, backing.byteOffset + 4, 12);
        const info = await store.put(view);
        expect(info.hash).toBe(sha256('hello window'));
        expect((await store.get(info.hash)).toString()).toBe('hello window');
      });

      it('round-trips unicode text (CJK, emoji, combining marks, RTL) as UTF-8', async () => {
        const text = '上下文虚拟内存 — 任务「重构」已完成 ✅ 👩‍💻🚀 e\u0301 ﷽ '.repeat(20);
        const info = await store.put(text);
        expect(info.hash).toBe(sha256(Buffer.from(text, 'utf8')));
        expect(info.size).toBe(Buffer.byteLength(text, 'utf8'));
        expect((await store.get(info.hash)).toString('utf8')).toBe(text);
      });

      it('stores the empty object', async () => {
        const info = await store.put('');
        expect(info).toMatchObject({ hash: EMPTY_SHA256, size: 0 });
        expect((await store.get(EMPTY_SHA256)).length).toBe(0);
        expect((await readAll(store.getStream(EMPTY_SHA256))).length).toBe(0);
        await store.verify(EMPTY_SHA256);
        const streamed = await store.putStream((async function* () {})());
        expect(streamed).toMatchObject({ hash: EMPTY_SHA256, size: 0, existed: true });
        expect(await store.stat(EMPTY_SHA256)).toMatchObject({ size: 0, refCount: 0 });
      });

      it('deduplicates identical content from put and putStream', async () => {
        const text = 'same payload\n'.repeat(1000);
        const first = await store.put(text);
        const second = await store.put(Buffer.from(text));
        const streamed = await store.putStream(chunksOf(Buffer.from(text), 1000));
        expect(second).toEqual({ ...first, existed: true });
        expect(streamed).toEqual({ ...first, existed: true });
        expect(await listAll()).toEqual([first.hash]);
      });

      it('stores the same object whatever thread hashes and compresses it (offThread, fast effort)', async () => {
        const compressible = pseudoText(3 * MiB + 17, 11);
        const shared = new Uint8Array(new SharedArrayBuffer(5000));
        shared.set(Buffer.from('shared bytes '.repeat(384)));
        const inputs: Uint8Array[] = [compressible, shared.subarray(3, 4900), Buffer.from('tiny'), new Uint8Array(0)];
        const infos = await Promise.all(inputs.map((data) => store.put(data, { offThread: true, effort: 'fast' })));
        for (const [i, data] of inputs.entries()) {
          expect(infos[i]).toMatchObject({ hash: sha256(data), size: data.byteLength });
          expect(Buffer.compare(await store.get(infos[i]!.hash), Buffer.from(data))).toBe(0);
        }
        // put again from this thread: the same object, found
        expect(await store.put(Buffer.from(compressible))).toMatchObject({ hash: infos[0]!.hash, existed: true });
        // the caller's bytes are left as they were
        expect(sha256(compressible)).toBe(infos[0]!.hash);
      });

      it('prepare stores nothing, may be called again, and puts work after it', async () => {
        store.prepare({ offThread: true, effort: 'fast' });
        store.prepare({ offThread: true });
        store.prepare({});
        expect(await listAll()).toEqual([]);
        const data = pseudoText(MiB + 3, 5);
        expect(await store.put(data, { offThread: true, effort: 'fast' })).toMatchObject({ hash: sha256(data), size: data.byteLength });
        expect(Buffer.compare(await store.get(sha256(data)), Buffer.from(data))).toBe(0);
      });

      it('lists exactly the stored hashes', async () => {
        const hashes = await Promise.all(['a', 'b', 'c'].map(async (x) => (await store.put(x.repeat(500))).hash));
        expect(await listAll()).toEqual([...hashes].sort());
      });
    });

    describe('streams', () => {
      it('accepts a Node.js Readable, including one that yields strings', async () => {
        const parts = ['alpha ', 'βήτα ', '伽马 '];
        const fromBuffers = await store.putStream(Readable.from(parts.map((p) => Buffer.from(p))));
        const fromStrings = await store.putStream(Readable.from(parts));
        expect(fromBuffers.hash).toBe(sha256(parts.join('')));
        expect(fromStrings.hash).toBe(fromBuffers.hash);
      });

      it('rejects chunks that are not bytes with E_USAGE and releases the source stream', async () => {
        for (const at of [0, 40]) {
          const chunks: unknown[] = Array.from({ length: 60 }, (_, i) => (i === at ? 42 : pseudoText(64 * 1024, i + 1)));
          const source = Readable.from(chunks);
          await expect(store.putStream(source)).rejects.toMatchObject({ code: 'E_USAGE' });
          expect(source.destroyed).toBe(true);
        }
        expect(await listAll()).toEqual([]);
      });

      it('rejects with the source error and stores nothing when the source fails', async () => {
        const failing = (afterBytes: number) =>
          (async function* () {
            let sent = 0;
            while (sent < afterBytes) {
              yield pseudoText(64 * 1024, sent + 1);
              sent += 64 * 1024;
            }
            throw new Error(`source broke after ${afterBytes}`);
          })();
        await expect(store.putStream(failing(0))).rejects.toThrow('source broke after 0');
        await expect(store.putStream(failing(2 * MiB))).rejects.toThrow(`source broke after ${2 * MiB}`);
        expect(await listAll()).toEqual([]);
      });

      it('round-trips a 20 MiB stream, in bounded memory if the driver supports streaming', async () => {
        const total = 20 * MiB;
        const chunkSize = 64 * 1024;
        // Each sample forces two full collections (~25 ms each), so sample every 4 MiB only.
        const SAMPLE_EVERY = 4 * MiB;
        const expected = createHash('sha256');
        const baseline = liveBufferBytes();
        let peakWrite = 0;
        const source = async function* () {
          for (let sent = 0; sent < total; sent += chunkSize) {
            const chunk = pseudoText(chunkSize, sent + 7);
            expected.update(chunk);
            if (sent % SAMPLE_EVERY === 0) peakWrite = Math.max(peakWrite, liveBufferBytes() - baseline);
            yield chunk;
          }
        };
        const info = await store.putStream(source());
        expect(info).toMatchObject({ hash: expected.digest('hex'), size: total, existed: false });

        const actual = createHash('sha256');
        let read = 0;
        let peakRead = 0;
        let largestChunk = 0;
        for await (const chunk of store.getStream(info.hash) as AsyncIterable<Buffer>) {
          if (Math.floor((read + chunk.length) / SAMPLE_EVERY) > Math.floor(read / SAMPLE_EVERY)) peakRead = Math.max(peakRead, liveBufferBytes() - baseline);
          actual.update(chunk);
          read += chunk.length;
          largestChunk = Math.max(largestChunk, chunk.length);
        }
        expect(read).toBe(total);
        expect(actual.digest('hex')).toBe(info.hash);
        await store.verify(info.hash);
        // A buffering driver says so with the flag; then only the round trip above is required.
        if (!store.supportsStreaming) return;
        // Holding the object (20 MiB) or even its compressed form (~11 MiB) would break these.
        expect(peakWrite).toBeLessThan(8 * MiB);
        expect(peakRead).toBeLessThan(8 * MiB);
        expect(largestChunk).toBeLessThanOrEqual(MiB);
      });
    });

    describe('missing objects and invalid input', () => {
      it('reports a missing object with a NotFoundError naming the hash', async () => {
        for (const attempt of [() => store.get(ABSENT), () => store.verify(ABSENT), () => store.ref(ABSENT, 'snapshot:1')]) {
          const error = await attempt().then(() => undefined, (e: unknown) => e);
          expect(error).toMatchObject({ code: 'E_NOT_FOUND', name: 'NotFoundError' });
          expect((error as Error).message).toContain(ABSENT);
        }
        const streamed = await streamError(store.getStream(ABSENT));
        expect(streamed).toMatchObject({ code: 'E_NOT_FOUND' });
        expect((streamed as Error).message).toContain(ABSENT);
        expect(await store.has(ABSENT)).toBe(false);
        expect(await store.stat(ABSENT)).toBeUndefined();
        expect(await store.delete(ABSENT)).toBe(false);
        expect(await store.holders(ABSENT)).toEqual([]);
        expect(await store.unref(ABSENT, 'snapshot:1')).toBe(false);
      });

      it('rejects anything but a lowercase sha256 hex digest with E_USAGE', async () => {
        await store.put('something to find'.repeat(30));
        for (const bad of INVALID_HASHES) {
          const attempts: Array<() => Promise<unknown>> = [
            () => store.get(bad),
            () => store.has(bad),
            () => store.stat(bad),
            () => store.delete(bad),
            () => store.verify(bad),
            () => store.ref(bad, 'snapshot:1'),
            () => store.unref(bad, 'snapshot:1'),
            () => store.holders(bad),
          ];
          for (const attempt of attempts) {
            await expect(attempt(), `hash ${JSON.stringify(bad)}`).rejects.toMatchObject({ code: 'E_USAGE' });
          }
          expect(await streamError(store.getStream(bad))).toMatchObject({ code: 'E_USAGE' });
        }
      });

      it('rejects empty or oversized holder ids with E_USAGE', async () => {
        const { hash } = await store.put('held'.repeat(100));
        await expect(store.ref(hash, '')).rejects.toMatchObject({ code: 'E_USAGE' });
        await expect(store.ref(hash, 'x'.repeat(5000))).rejects.toMatchObject({ code: 'E_USAGE' });
        expect(await store.holders(hash)).toEqual([]);
      });
    });

    describe('references', () => {
      it('counts each holder once, whatever the number of refs and unrefs', async () => {
        const { hash } = await store.put('referenced object\n'.repeat(100));
        await store.ref(hash, 'snapshot:b');
        await store.ref(hash, 'snapshot:b');
        await store.ref(hash, 'trim:a');
        await store.ref(hash, 'trim:会话/1');
        expect(await store.holders(hash)).toEqual(['snapshot:b', 'trim:a', 'trim:会话/1']);
        expect((await store.stat(hash))?.refCount).toBe(3);
        expect(await store.unref(hash, 'snapshot:b')).toBe(true);
        expect(await store.unref(hash, 'snapshot:b')).toBe(false);
        expect(await store.holders(hash)).toEqual(['trim:a', 'trim:会话/1']);
        expect((await store.stat(hash))?.refCount).toBe(2);
      });

      it.each([3, 12])('refMany references a batch of %i like one ref each, idempotently, and refuses a missing object', async (count) => {
        const objects = await Promise.all(Array.from({ length: count }, (_, i) => store.put(`batch ${i}\n`.repeat(40))));
        const hashes = objects.map((o) => o.hash);
        await store.refMany(hashes, 'trim:batch');
        await store.refMany(hashes, 'trim:batch');
        await store.ref(hashes[0]!, 'snapshot:x');
        expect(await store.holders(hashes[0]!)).toEqual(['snapshot:x', 'trim:batch']);
        for (const h of hashes.slice(1)) expect(await store.holders(h)).toEqual(['trim:batch']);
        expect(await store.unref(hashes[1]!, 'trim:batch')).toBe(true);
        expect(await store.holders(hashes[1]!)).toEqual([]);
        const missing = 'f'.repeat(64);
        await expect(store.refMany([...hashes, missing], 'trim:other')).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
        expect(await store.holders(missing)).toEqual([]);
        expect(await store.holders(hashes[2]!)).toEqual(['trim:batch']);
        expect((await store.stat(hashes[2]!))?.refCount).toBe(1);
        // gc keeps what a batch holds, and collects it once every holder let go
        advance(DEFAULT_GC_GRACE_MS);
        expect((await store.gc()).deleted).toBe(1);
        expect(await store.unrefMany(hashes, 'trim:batch')).toBe(count - 1);
        expect(await store.unrefMany(hashes, 'trim:batch')).toBe(0);
        await store.unref(hashes[0]!, 'snapshot:x');
        expect((await store.gc()).deleted).toBe(count - 1);
        await expect(store.refMany(['nope'], 'trim:x')).rejects.toMatchObject({ code: 'E_USAGE' });
        await store.refMany([], 'trim:empty');
      });

      it('keeps holders of different objects apart', async () => {
        const a = await store.put('object a'.repeat(50));
        const b = await store.put('object b'.repeat(50));
        await store.ref(a.hash, 'snapshot:1');
        expect(await store.holders(b.hash)).toEqual([]);
        expect(await store.unref(b.hash, 'snapshot:1')).toBe(false);
        expect(await store.holders(a.hash)).toEqual(['snapshot:1']);
      });

      it('refuses to delete a referenced object unless forced', async () => {
        const { hash } = await store.put('precious'.repeat(100));
        await store.ref(hash, 'snapshot:keep');
        await expect(store.delete(hash)).rejects.toMatchObject({ code: 'E_CONFLICT' });
        expect(await store.has(hash)).toBe(true);
        expect(await store.delete(hash, { force: true })).toBe(true);
        expect(await store.has(hash)).toBe(false);
        expect(await store.holders(hash)).toEqual([]);
        await expect(store.get(hash)).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
      });

      it('deletes an unreferenced object once', async () => {
        const { hash } = await store.put('disposable'.repeat(100));
        expect(await store.delete(hash)).toBe(true);
        expect(await store.delete(hash)).toBe(false);
        expect(await listAll()).toEqual([]);
      });
    });

    describe('gc', () => {
      it('stamps objects with the store clock, whether put or streamed', async () => {
        const put = await store.put('stamped'.repeat(100));
        advance(1000);
        const streamed = await store.putStream(chunksOf(pseudoText(MiB, 5), 64 * 1024));
        expect((await store.stat(put.hash))?.createdAtMs).toBe(START_MS);
        expect((await store.stat(streamed.hash))?.createdAtMs).toBe(START_MS + 1000);
        advance(DEFAULT_GC_GRACE_MS - 1000);
        expect(await store.gc()).toMatchObject({ deleted: 1 });
        expect(await listAll()).toEqual([streamed.hash]);
      });

      it('collects only unreferenced objects older than the grace period', async () => {
        const kept = await store.put('kept by a snapshot'.repeat(100));
        const lost1 = await store.put('garbage one'.repeat(100));
        const lost2 = await store.put(pseudoText(300_000, 3));
        await store.ref(kept.hash, 'snapshot:1');

        advance(DEFAULT_GC_GRACE_MS - 1);
        expect(await store.gc()).toEqual({ scanned: 3, deleted: 0, freedBytes: 0 });

        advance(1);
        expect(await store.gc()).toEqual({ scanned: 3, deleted: 2, freedBytes: lost1.storedSize + lost2.storedSize });
        expect(await listAll()).toEqual([kept.hash]);

        await store.unref(kept.hash, 'snapshot:1');
        expect(await store.gc()).toMatchObject({ scanned: 1, deleted: 1 });
        expect(await listAll()).toEqual([]);
      });

      it('honours a custom grace period', async () => {
        await store.put('short-lived'.repeat(100));
        advance(1000);
        expect(await store.gc({ graceMs: 1001 })).toMatchObject({ deleted: 0 });
        expect(await store.gc({ graceMs: 1000 })).toMatchObject({ deleted: 1 });
        await expect(store.gc({ graceMs: -1 })).rejects.toMatchObject({ code: 'E_USAGE' });
      });

      it('restarts the grace period when the same content is put again', async () => {
        const text = 'put twice'.repeat(100);
        const { hash } = await store.put(text);
        advance(DEFAULT_GC_GRACE_MS - 60_000);
        await store.putStream(chunksOf(Buffer.from(text), 100));
        advance(120_000);
        expect(await store.gc()).toMatchObject({ deleted: 0 });
        expect((await store.stat(hash))?.createdAtMs).toBe(START_MS + DEFAULT_GC_GRACE_MS - 60_000);
        advance(DEFAULT_GC_GRACE_MS);
        expect(await store.gc()).toMatchObject({ deleted: 1 });
        // A ref after collection fails loudly instead of pointing at nothing.
        await expect(store.ref(hash, 'snapshot:late')).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
        expect(await store.holders(hash)).toEqual([]);
      });
    });

    describe('integrity', () => {
      it('detects a corrupted object in verify, get and getStream', async () => {
        const compressible = await store.put('a compressible object\n'.repeat(2000));
        const incompressible = await store.put(pseudoText(64, 11));
        for (const { hash } of [compressible, incompressible]) {
          await store.verify(hash);
          await harness.corrupt(hash);
          await expect(store.verify(hash)).rejects.toMatchObject({ code: 'E_INTEGRITY', name: 'IntegrityError' });
          await expect(store.get(hash)).rejects.toMatchObject({ code: 'E_INTEGRITY' });
          expect(await streamError(store.getStream(hash))).toMatchObject({ code: 'E_INTEGRITY' });
        }
      });
    });

    describe('concurrency', () => {
      it('survives concurrent puts of the same content from two store instances', async () => {
        const other = await harness.reopen();
        const content = pseudoText(1 * MiB + 3, 42);
        const results = await Promise.all(
          Array.from({ length: 8 }, (_, i) => {
            const s = i % 2 === 0 ? store : other;
            return i % 4 < 2 ? s.put(content) : s.putStream(chunksOf(content, 64 * 1024 + i));
          }),
        );
        expect(new Set(results.map((r) => r.hash))).toEqual(new Set([sha256(content)]));
        expect(results.some((r) => !r.existed)).toBe(true);
        expect(await listAll()).toEqual([sha256(content)]);
        expect(await listAll(other)).toEqual([sha256(content)]);
        expect(Buffer.compare(await other.get(sha256(content)), content)).toBe(0);
        await store.verify(sha256(content));
      });

      it('keeps every holder when two instances ref concurrently', async () => {
        const other = await harness.reopen();
        const { hash } = await store.put('shared'.repeat(100));
        const holders = Array.from({ length: 12 }, (_, i) => `snapshot:${i}`);
        await Promise.all(holders.map((h, i) => (i % 2 ? other : store).ref(hash, h)));
        expect(await store.holders(hash)).toEqual([...holders].sort());
        await Promise.all(holders.slice(0, 6).map((h, i) => (i % 2 ? store : other).unref(hash, h)));
        expect(await other.holders(hash)).toEqual(holders.slice(6).sort());
      });
    });
  });
}
