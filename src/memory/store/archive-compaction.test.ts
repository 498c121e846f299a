import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTempSchema, postgresReady, type TempSchema } from '../../../test/support/postgres.js';
import { describeWithService } from '../../../test/support/services.js';
import { createFixedClock, type FixedClock } from '../../core/clock.js';
import { createFsObjectStore } from '../../store/drivers/objects-fs.js';
import type { ObjectStore } from '../../store/object-store.js';
import { openWarmDatabase } from '../../store/warm/open.js';
import type { SqlDatabase } from '../../store/warm/sql.js';
import type { Turn } from '../model.js';
import { compactTurnArchive, planCompaction, usersToCompact } from './archive-compaction.js';
import { createTurnArchive, holderOf, type TurnArchive } from './turn-archive.js';

const T0 = Date.UTC(2025, 0, 1);
const DAY = 24 * 3600_000;
const turns = (from: number, n: number): Omit<Turn, 'userId'>[] =>
  Array.from({ length: n }, (_, i) => ({ id: `t${from + i}`, role: 'user', speaker: null, text: `下班前把周报发给我 #${from + i}`, atMs: T0 + (from + i) * 1000, sessionId: null }));
const ids = async (it: AsyncIterable<Turn>) => {
  const out: string[] = [];
  for await (const t of it) out.push(t.id);
  return out;
};

describe('planCompaction', () => {
  it('merges runs of two or more adjacent small segments within the target size', () => {
    const b = (...bytes: number[]) => bytes.map((n) => ({ bytes: n }));
    expect(planCompaction(b(10, 10, 10), 50, 100)).toEqual([[0, 2]]);
    expect(planCompaction(b(10, 60, 10, 10, 60, 10), 50, 100)).toEqual([[2, 3]]);
    expect(planCompaction(b(40, 40, 40, 40), 50, 100)).toEqual([[0, 1], [2, 3]]);
    expect(planCompaction(b(10), 50, 100)).toEqual([]);
    expect(planCompaction(b(60, 60), 50, 100)).toEqual([]);
    expect(planCompaction([], 50, 100)).toEqual([]);
  });
});

/** The same scenarios on every warm database. */
function compactionSuite(name: string, openDb: () => Promise<SqlDatabase>): void {
  describe(`archive rotation and compaction (${name})`, () => {
    let dir: string;
    let db: SqlDatabase;
    let objects: ObjectStore;
    let clock: FixedClock;
    let archive: TurnArchive;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'ctxvm-compaction-'));
      db = await openDb();
      objects = createFsObjectStore({ root: join(dir, 'objects') });
      clock = createFixedClock(T0);
      // Small segments by age (one a day), big ones by size.
      archive = createTurnArchive({ objects, db, segmentBytes: 4096, segmentAgeMs: DAY, now: () => clock.now() });
    });
    afterEach(async () => {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    });

    /** `days` days of `perDay` turns each, the day's segment closed at its end (as a quiet user's segments end up). */
    async function quietDays(userId: string, days: number, perDay: number, from = 0): Promise<void> {
      for (let d = 0; d < days; d++) {
        await archive.append(userId, turns(from + d * perDay, perDay));
        await archive.flush(userId);
        clock.advance(DAY);
      }
    }

    it('rotates by age (the append that finds the oldest open line a day old closes the segment) and by size', async () => {
      for (let d = 0; d < 3; d++) {
        await archive.append('alice', turns(d * 2, 2));
        clock.advance(DAY);
      }
      await archive.append('alice', turns(100, 1));
      expect((await archive.segments('alice')).map((s) => s.turns)).toEqual([4, 3]);
      await archive.append('bob', turns(0, 200)); // > 4 KiB at once: closed by size
      expect((await archive.segments('bob')).map((s) => s.turns)).toEqual([200]);
    });

    it('merges small segments, keeps every line in order, and releases the old objects', async () => {
      await quietDays('alice', 10, 3);
      await archive.append('alice', turns(900, 2)); // open lines stay open
      const before = await archive.segments('alice');
      const expected = await ids(archive.read('alice'));
      expect(before).toHaveLength(10);
      expect(await usersToCompact(db, { targetBytes: 4096 })).toEqual(['alice']);

      const result = await compactTurnArchive('alice', { objects, db, targetBytes: 4096 });
      expect(result).toMatchObject({ segmentsBefore: 10, segmentsAfter: 1, merged: 1, conflicts: 0, released: 10 });
      const after = await archive.segments('alice');
      expect(after.map((s) => [s.segmentNo, s.turns])).toEqual([[1, 30]]);
      expect(after[0]!.bytes).toBe(before.reduce((n, s) => n + s.bytes, 0));
      expect(await ids(archive.read('alice'))).toEqual(expected);
      for (const s of before) expect(await objects.holders(s.hash)).toEqual([]);
      expect(await objects.holders(after[0]!.hash)).toEqual([holderOf('alice', 1)]);
      const gc = await objects.gc({ graceMs: 0 });
      expect(gc.deleted).toBe(10);
      expect(await ids(archive.read('alice'))).toEqual(expected);

      // Later segments get later numbers and read after the merged one.
      await quietDays('alice', 2, 1, 1000);
      await archive.flush('alice');
      expect((await archive.segments('alice')).map((s) => s.segmentNo)).toEqual([1, 11, 12]); // the open lines went into segment 11
      expect(await ids(archive.read('alice'))).toEqual([...expected, 't1000', 't1001']);
      expect(await compactTurnArchive('alice', { objects, db, targetBytes: 4096 })).toMatchObject({ merged: 1, segmentsAfter: 2 });
      expect(await ids(archive.read('alice'))).toEqual([...expected, 't1000', 't1001']);
      expect((await compactTurnArchive('alice', { objects, db, targetBytes: 4096 })).merged).toBe(0);
    });

    it('stays within the target size, leaving big segments and other users alone', async () => {
      await quietDays('alice', 12, 3);
      await archive.append('alice', turns(500, 200)); // one big segment in the middle
      await quietDays('alice', 4, 3, 800);
      await quietDays('bob', 3, 3);
      const segmentBytes = (await archive.segments('alice'))[0]!.bytes;
      const expected = await ids(archive.read('alice'));
      const bob = await archive.segments('bob');
      const result = await compactTurnArchive('alice', { objects, db, targetBytes: segmentBytes * 5, smallBytes: segmentBytes * 2 });
      const after = await archive.segments('alice');
      for (const s of after) if (s.turns <= 15) expect(s.bytes).toBeLessThanOrEqual(segmentBytes * 5);
      expect(after.some((s) => s.turns === 200)).toBe(true);
      expect(result.segmentsAfter).toBe(after.length);
      expect(after.length).toBeLessThan(result.segmentsBefore);
      expect(await ids(archive.read('alice'))).toEqual(expected);
      expect(await archive.segments('bob')).toEqual(bob);
    });

    it('lets one of two concurrent compactions win, losing and leaking nothing', async () => {
      await quietDays('alice', 6, 2);
      const expected = await ids(archive.read('alice'));
      // Both have planned and stored the merged object before either commits.
      let arrived = 0;
      let release: () => void = () => {};
      const bothStored = new Promise<void>((resolve) => (release = resolve));
      const racing: ObjectStore = {
        ...objects,
        async flush() {
          await objects.flush();
          if (++arrived === 2) release();
          await bothStored;
        },
      };
      const [a, b] = await Promise.all([compactTurnArchive('alice', { objects: racing, db, targetBytes: 4096 }), compactTurnArchive('alice', { objects: racing, db, targetBytes: 4096 })]);
      expect(a.merged + b.merged).toBe(1);
      expect(a.conflicts + b.conflicts).toBe(1);
      const after = await archive.segments('alice');
      expect(after).toHaveLength(1);
      expect(await objects.holders(after[0]!.hash)).toEqual([holderOf('alice', 1)]);
      expect(await ids(archive.read('alice'))).toEqual(expected);
    });
  });
}

compactionSuite('sqlite', async () => openWarmDatabase({ db: join(await mkdtemp(join(tmpdir(), 'ctxvm-compaction-db-')), 'ctxvm.db') }));

describeWithService(
  'postgres',
  process.env.DATABASE_URL,
  (url) => {
    const schemas: TempSchema[] = [];
    afterEach(async () => {
      for (const s of schemas.splice(0)) await s.drop();
    });
    compactionSuite('postgres', async () => {
      const schema = await createTempSchema(url, 'archive');
      schemas.push(schema);
      return openWarmDatabase({ db: url, postgres: { searchPath: schema.name, poolSize: 2, settings: { synchronous_commit: 'off' } } });
    });
  },
  { check: postgresReady },
);
