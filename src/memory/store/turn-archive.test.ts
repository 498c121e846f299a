import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createFixedClock } from '../../core/clock.js';
import { createFsObjectStore } from '../../store/drivers/objects-fs.js';
import type { ObjectStore } from '../../store/object-store.js';
import { openWarmDatabase } from '../../store/warm/open.js';
import type { SqlDatabase } from '../../store/warm/sql.js';
import type { Turn } from '../model.js';
import { createArchiveQueue } from './archive-queue.js';
import { createTurnArchive, type TurnArchiveOptions } from './turn-archive.js';

let dir: string;
const open: SqlDatabase[] = [];
const openDb = async () => {
  const db = await openWarmDatabase({ db: join(dir, 'ctxvm.db') });
  open.push(db);
  return db;
};
const objectsAt = () => createFsObjectStore({ root: join(dir, 'objects') });
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-archive-'));
});
afterEach(async () => {
  for (const db of open.splice(0)) await db.close();
  await rm(dir, { recursive: true, force: true });
});

const T0 = Date.UTC(2025, 0, 1);
const turns = (from: number, n: number, text = '下班前把周报发给我'): Omit<Turn, 'userId'>[] =>
  Array.from({ length: n }, (_, i) => ({ id: `t${from + i}`, role: i % 2 ? 'assistant' : 'user', speaker: null, text: `${text} #${from + i}`, atMs: T0 + (from + i) * 1000, sessionId: 's1' }));
const collect = async (it: AsyncIterable<Turn>) => {
  const out: Turn[] = [];
  for await (const t of it) out.push(t);
  return out;
};
const ids = async (it: AsyncIterable<Turn>) => (await collect(it)).map((t) => t.id);
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => `t${from + i}`);

describe('turn archive', () => {
  it('appends turns, reads them back oldest first, and closes a segment on flush', async () => {
    const db = await openDb();
    const objects = objectsAt();
    const archive = createTurnArchive({ objects, db });
    expect(await archive.append('alice', turns(0, 3))).toEqual({ appended: 3 });
    expect(await archive.append('alice', [])).toEqual({ appended: 0 });
    const read = await collect(archive.read('alice'));
    expect(read[0]).toEqual({ id: 't0', userId: 'alice', role: 'user', speaker: null, text: '下班前把周报发给我 #0', atMs: T0, sessionId: 's1' });
    expect(read.map((t) => t.id)).toEqual(range(0, 3));
    expect(await archive.segments('alice')).toEqual([]);
    const segment = await archive.flush('alice');
    expect(segment).toMatchObject({ segmentNo: 1, turns: 3, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(await archive.flush('alice')).toBeUndefined();
    expect(await archive.segments('alice')).toEqual([segment]);
    expect((await objects.get(segment!.hash)).toString('utf8').trimEnd().split('\n')).toHaveLength(3);
    expect(await objects.holders(segment!.hash)).toEqual([expect.stringMatching(/^turn-archive:[0-9a-f]{32}:1$/)]);
    await archive.append('alice', turns(3, 2));
    expect(await ids(archive.read('alice'))).toEqual(range(0, 5));
  });

  it('keeps acknowledged turns across a crash (reopened database, no flush)', async () => {
    const db = await openDb();
    const archive = createTurnArchive({ objects: objectsAt(), db });
    await archive.append('alice', turns(0, 4));
    await archive.flush('alice');
    await archive.append('alice', turns(4, 3));
    // "crash": the process goes away without closing anything it had open
    await db.close();
    open.splice(0);
    const reopened = createTurnArchive({ objects: objectsAt(), db: await openDb() });
    expect(await ids(reopened.read('alice'))).toEqual(range(0, 7));
    expect(await reopened.flush('alice')).toMatchObject({ segmentNo: 2, turns: 3 });
    expect(await ids(reopened.read('alice'))).toEqual(range(0, 7));
  });

  it('rotates segments by size', async () => {
    const objects = objectsAt();
    const archive = createTurnArchive({ objects, db: await openDb(), segmentBytes: 400 });
    const closed = [];
    for (let i = 0; i < 20; i++) {
      const r = await archive.append('alice', turns(i * 2, 2));
      if (r.closed) closed.push(r.closed);
    }
    const segments = await archive.segments('alice');
    expect(segments.length).toBeGreaterThanOrEqual(4);
    expect(segments).toEqual(closed);
    expect(segments.map((s) => s.segmentNo)).toEqual(segments.map((_, i) => i + 1));
    for (const s of segments) expect(s.bytes).toBeGreaterThanOrEqual(400);
    expect(await ids(archive.read('alice'))).toEqual(range(0, 40));
  });

  it('rotates segments by age', async () => {
    const clock = createFixedClock(T0);
    const archive = createTurnArchive({ objects: objectsAt(), db: await openDb(), segmentAgeMs: 60_000, now: () => clock.now() });
    expect((await archive.append('alice', turns(0, 1))).closed).toBeUndefined();
    clock.advance(59_000);
    expect((await archive.append('alice', turns(1, 1))).closed).toBeUndefined();
    clock.advance(1_000);
    expect((await archive.append('alice', turns(2, 1))).closed).toMatchObject({ segmentNo: 1, turns: 3, createdAtMs: T0 + 60_000 });
    expect((await archive.append('alice', turns(3, 1))).closed).toBeUndefined();
    expect(await ids(archive.read('alice'))).toEqual(range(0, 4));
  });

  it('loses nothing when closing a segment fails half way, and closes it later', async () => {
    const real = objectsAt();
    let failFlush = true;
    const flaky: ObjectStore = {
      ...real,
      put: (data, o) => real.put(data, o),
      ref: (h, holder) => real.ref(h, holder),
      get: (h) => real.get(h),
      holders: (h) => real.holders(h),
      async flush() {
        if (failFlush) throw new Error('disk full');
        return real.flush();
      },
    };
    const archive = createTurnArchive({ objects: flaky, db: await openDb(), segmentBytes: 100 });
    const r = await archive.append('alice', turns(0, 3));
    expect(r.appended).toBe(3);
    expect(r.closed).toBeUndefined();
    expect(String(r.closeError)).toContain('disk full');
    expect(await archive.segments('alice')).toEqual([]);
    expect(await ids(archive.read('alice'))).toEqual(range(0, 3));
    failFlush = false;
    const second = await archive.append('alice', turns(3, 1));
    expect(second.closed).toMatchObject({ segmentNo: 1, turns: 4 });
    expect(await ids(archive.read('alice'))).toEqual(range(0, 4));
  });

  it('closes a segment once when flushes race', async () => {
    const archive = createTurnArchive({ objects: objectsAt(), db: await openDb() });
    await archive.append('alice', turns(0, 5));
    const results = await Promise.all([archive.flush('alice'), archive.flush('alice'), archive.flush('alice')]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await archive.segments('alice')).toHaveLength(1);
    expect(await ids(archive.read('alice'))).toEqual(range(0, 5));
  });

  it('keeps users apart and checks who a turn belongs to', async () => {
    const options: TurnArchiveOptions = { objects: objectsAt(), db: await openDb() };
    const archive = createTurnArchive(options);
    await archive.append('alice', turns(0, 2, 'alice says'));
    await archive.append('bob', turns(0, 3, 'bob says'));
    await archive.flush('bob');
    expect((await collect(archive.read('alice'))).map((t) => [t.userId, t.text])).toEqual([
      ['alice', 'alice says #0'],
      ['alice', 'alice says #1'],
    ]);
    expect(await ids(archive.read('bob'))).toEqual(range(0, 3));
    expect(await archive.segments('alice')).toEqual([]);
    expect(await ids(archive.read('carol'))).toEqual([]);
    await expect(archive.append('alice', [{ ...turns(9, 1)[0]!, userId: 'bob' }])).rejects.toMatchObject({ code: 'E_USAGE' });
    await expect(archive.append('', turns(0, 1))).rejects.toMatchObject({ code: 'E_USAGE' });
    expect(() => archive.read('')).toThrow(expect.objectContaining({ code: 'E_USAGE' }));
    await expect(archive.append('alice', [{ ...turns(9, 1)[0]!, id: '' }])).rejects.toMatchObject({ code: 'E_USAGE' });
    expect(() => createTurnArchive({ ...options, segmentBytes: 0 })).toThrow(expect.objectContaining({ code: 'E_USAGE' }));
  });
});

describe('turn archive: appendMany', () => {
  it('appends the turns of many users in one call, per user in order, and closes full segments', async () => {
    const archive = createTurnArchive({ objects: objectsAt(), db: await openDb(), segmentBytes: 200 });
    const results = await archive.appendMany([
      { userId: 'alice', turns: turns(0, 2, 'a') },
      { userId: 'bob', turns: turns(0, 1, 'b') },
      { userId: 'alice', turns: turns(2, 1, 'a') },
    ]);
    expect(results.map((r) => r.appended)).toEqual([2, 1, 1]);
    expect(await ids(archive.read('alice'))).toEqual(range(0, 3));
    expect(await ids(archive.read('bob'))).toEqual(range(0, 1));
    // enough bytes to pass segmentBytes: the user's segment closes, reported on its last batch
    const big = await archive.appendMany([{ userId: 'bob', turns: turns(1, 4, 'x'.repeat(80)) }]);
    expect(big[0]!.closed).toMatchObject({ segmentNo: 1, turns: 5 });
    expect(await ids(archive.read('bob'))).toEqual(range(0, 5));
    await expect(archive.appendMany([{ userId: 'alice', turns: turns(3, 1) }, { userId: '', turns: turns(0, 1) }])).rejects.toMatchObject({ code: 'E_USAGE' });
    expect(await ids(archive.read('alice'))).toEqual(range(0, 3)); // nothing of a rejected call is written
  });
});

describe('archive queue', () => {
  it('batches appends into one appendMany, keeps order, and flushes on close', async () => {
    const archive = createTurnArchive({ objects: objectsAt(), db: await openDb() });
    const calls: number[] = [];
    const queue = createArchiveQueue({ archive: { appendMany: (b) => (calls.push(b.length), archive.appendMany(b)) }, maxDelayMs: 60_000 });
    queue.append('alice', turns(0, 2));
    queue.append('bob', turns(0, 1));
    queue.append('alice', turns(2, 2));
    expect(queue.pending()).toBe(5);
    expect(await ids(archive.read('alice'))).toEqual([]); // not yet written: the archive lags
    await queue.close();
    expect(calls).toEqual([3]);
    expect(queue.pending()).toBe(0);
    expect(await ids(archive.read('alice'))).toEqual(range(0, 4));
    expect(await ids(archive.read('bob'))).toEqual(range(0, 1));
    expect(() => queue.append('alice', turns(4, 1))).toThrow();
  });

  it('flushes by itself after maxDelayMs and when maxTurns are queued', async () => {
    const archive = createTurnArchive({ objects: objectsAt(), db: await openDb() });
    const queue = createArchiveQueue({ archive, maxDelayMs: 5, maxTurns: 4 });
    queue.append('alice', turns(0, 1));
    await vi.waitFor(async () => expect(await ids(archive.read('alice'))).toEqual(range(0, 1)), { timeout: 10_000, interval: 5 });
    queue.append('alice', turns(1, 4)); // reaches maxTurns: written without waiting for the timer
    await queue.flush();
    expect(await ids(archive.read('alice'))).toEqual(range(0, 5));
    await queue.close();
  });

  it('keeps the turns queued, in order, when a flush fails, and writes them on the next one', async () => {
    const archive = createTurnArchive({ objects: objectsAt(), db: await openDb() });
    let fail = true;
    const errors: unknown[] = [];
    const queue = createArchiveQueue({
      archive: { appendMany: (b) => (fail ? Promise.reject(new Error('disk full')) : archive.appendMany(b)) },
      maxDelayMs: 60_000,
      onError: (e) => errors.push(e),
    });
    queue.append('alice', turns(0, 2));
    await expect(queue.flush()).rejects.toThrow('disk full');
    queue.append('alice', turns(2, 1));
    expect(queue.pending()).toBe(3);
    fail = false;
    await queue.flush();
    expect(await ids(archive.read('alice'))).toEqual(range(0, 3));
    expect(errors).toHaveLength(1);
    expect(() => queue.append('', turns(0, 1))).toThrow(expect.objectContaining({ code: 'E_USAGE' }));
    await queue.close();
  });
});
