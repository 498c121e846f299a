/**
 * Conformance suite for `SessionCatalog` implementations (SQLite today, PostgreSQL later). A
 * driver's test file runs it in a few lines:
 *
 *   sessionCatalogContract('sqlite', async () => ({ catalog, cleanup }));
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BranchRecord, IndexedFile, SessionCatalog, SnapshotRecord } from '../../src/session/dag/catalog.js';

export interface SessionCatalogHarness {
  catalog: SessionCatalog;
  cleanup(): Promise<void>;
}

const hash = (n: number) => n.toString(16).padStart(64, '0');

export function snapshotRecord(id: string, name: string, overrides: Partial<SnapshotRecord> = {}): SnapshotRecord {
  return {
    id,
    name,
    description: null,
    tags: [],
    agent: 'claude',
    sessionId: 'session-1',
    sourcePath: '/p/session-1.jsonl',
    project: '/p',
    manifestHash: hash(0),
    bytes: 100,
    mainBytes: 100,
    files: 1,
    parentSnapshotId: null,
    sourceBranchId: null,
    origin: 'local',
    createdAtMs: 1000,
    stats: null,
    ...overrides,
  };
}

function branchRecord(id: string, name: string, snapshotId: string, overrides: Partial<BranchRecord> = {}): BranchRecord {
  return { id, name, snapshotId, agent: 'claude', sessionId: `branch-${id}`, path: `/p/branch-${id}.jsonl`, trimmed: true, cutAt: null, createdAtMs: 2000, ...overrides };
}

function indexed(path: string, overrides: Partial<IndexedFile> = {}): IndexedFile {
  return { path, agent: 'claude', role: 'main', sessionId: 's', project: '/p', projectDir: '-p', sizeBytes: 10, mtimeMs: 5, messages: 2, title: null, scanOffset: 10, scanState: '{}', indexedAtMs: 7, ...overrides };
}

export function sessionCatalogContract(name: string, factory: () => Promise<SessionCatalogHarness>): void {
  describe(`SessionCatalog contract: ${name}`, () => {
    let h: SessionCatalogHarness;
    let c: SessionCatalog;
    beforeEach(async () => {
      h = await factory();
      c = h.catalog;
    });
    afterEach(async () => {
      await h.cleanup();
    });

    it('keeps the discovery index keyed by path', async () => {
      await c.upsertIndexedFiles([indexed('/a'), indexed('/b', { role: 'subagent', title: 'x' })]);
      await c.upsertIndexedFiles([indexed('/a', { sizeBytes: 20, messages: 4 })]);
      const rows = (await c.listIndexedFiles()).sort((x, y) => x.path.localeCompare(y.path));
      expect(rows).toEqual([indexed('/a', { sizeBytes: 20, messages: 4 }), indexed('/b', { role: 'subagent', title: 'x' })]);
      await c.removeIndexedFiles(['/a']);
      expect((await c.listIndexedFiles()).map((r) => r.path)).toEqual(['/b']);
      const many = Array.from({ length: 450 }, (_, i) => indexed(`/m/${i}`));
      await c.upsertIndexedFiles(many);
      expect(await c.listIndexedFiles()).toHaveLength(451);
    });

    it('publishes a snapshot with its tags and objects, clearing its pending row', async () => {
      await c.beginSnapshot({ id: 'aaaa000000000001', name: 'one', pid: 1, host: 'h', startedAtMs: 1 });
      expect((await c.listPendingSnapshots()).map((p) => p.id)).toEqual(['aaaa000000000001']);
      const rec = snapshotRecord('aaaa000000000001', 'one', { tags: ['a', 'b'], stats: null });
      await c.commitSnapshot(rec, [
        { hash: hash(1), sizeBytes: 10, storedBytes: 5 },
        { hash: hash(2), sizeBytes: 20, storedBytes: 8 },
        { hash: hash(1), sizeBytes: 10, storedBytes: 5 },
      ]);
      expect(await c.listPendingSnapshots()).toEqual([]);
      expect(await c.findSnapshot('one')).toEqual(rec);
      expect(await c.findSnapshot('aaaa000000000001')).toEqual(rec);
      expect(await c.findSnapshot('aaaa')).toEqual(rec);
      expect(await c.findSnapshot('nope')).toBeUndefined();
      expect((await c.snapshotObjects(rec.id)).map((o) => o.hash)).toEqual([hash(1), hash(2)]);
      expect(await c.snapshotsHolding(hash(2))).toEqual([rec.id]);
      await c.abandonSnapshot('whatever');
    });

    it('keeps names unique across snapshots and branches', async () => {
      await c.commitSnapshot(snapshotRecord('aaaa000000000001', 'one'), []);
      await expect(c.commitSnapshot(snapshotRecord('aaaa000000000002', 'one'), [])).rejects.toMatchObject({ code: 'E_EXISTS' });
      await c.addBranch(branchRecord('bbbb000000000001', 'b1', 'aaaa000000000001'));
      await expect(c.addBranch(branchRecord('bbbb000000000002', 'one', 'aaaa000000000001'))).rejects.toMatchObject({ code: 'E_EXISTS' });
      await expect(c.commitSnapshot(snapshotRecord('aaaa000000000003', 'b1'), [])).rejects.toMatchObject({ code: 'E_EXISTS' });
      await expect(c.addBranch(branchRecord('bbbb000000000003', 'b3', 'ffff000000000000'))).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
      expect(await c.nameInUse('one')).toBe('snapshot');
      expect(await c.nameInUse('b1')).toBe('branch');
      expect(await c.nameInUse('free')).toBeUndefined();
    });

    it('publishes a snapshot with its branch in one transaction, or neither', async () => {
      await c.addBranch(branchRecord('bbbb000000000001', 'taken', 'aaaa000000000000'), { record: snapshotRecord('aaaa000000000000', 'zero'), objects: [] });
      await c.beginSnapshot({ id: 'aaaa000000000001', name: 'one', pid: 1, host: 'h', startedAtMs: 1 });
      const publish = { record: snapshotRecord('aaaa000000000001', 'one'), objects: [{ hash: hash(1), sizeBytes: 1, storedBytes: 1 }] };
      // the branch's name is taken: the snapshot is not published either, and stays pending
      await expect(c.addBranch(branchRecord('bbbb000000000002', 'taken', 'aaaa000000000001'), publish)).rejects.toMatchObject({ code: 'E_EXISTS' });
      expect(await c.findSnapshot('aaaa000000000001')).toBeUndefined();
      expect((await c.listPendingSnapshots()).map((p) => p.id)).toEqual(['aaaa000000000001']);
      expect(await c.countHolders([hash(1)])).toEqual(new Map([[hash(1), 0]]));
      await c.addBranch(branchRecord('bbbb000000000002', 'one-trimmed', 'aaaa000000000001'), publish);
      expect((await c.findSnapshot('aaaa000000000001'))?.name).toBe('one');
      expect((await c.findBranch('one-trimmed'))?.snapshotId).toBe('aaaa000000000001');
      expect(await c.listPendingSnapshots()).toEqual([]);
      expect(await c.snapshotObjects('aaaa000000000001')).toEqual(publish.objects);
    });

    it('says which id prefixes are ambiguous', async () => {
      await c.commitSnapshot(snapshotRecord('abcd000000000001', 'one'), []);
      await c.commitSnapshot(snapshotRecord('abcd000000000002', 'two'), []);
      await expect(c.findSnapshot('abcd')).rejects.toMatchObject({ code: 'E_USAGE' });
      expect((await c.findSnapshot('abcd0000000000020'.slice(0, 16)))?.name).toBe('two');
    });

    it('tracks lineage: latest snapshot of a session, branch of a session', async () => {
      await c.commitSnapshot(snapshotRecord('aaaa000000000001', 'one', { createdAtMs: 1 }), []);
      await c.commitSnapshot(snapshotRecord('aaaa000000000002', 'two', { createdAtMs: 2, parentSnapshotId: 'aaaa000000000001' }), []);
      expect((await c.latestSnapshotOfSession('session-1'))?.name).toBe('two');
      await c.addBranch(branchRecord('bbbb000000000001', 'b1', 'aaaa000000000002', { sessionId: 'new-session' }));
      expect((await c.branchOfSession('new-session'))?.name).toBe('b1');
      expect((await c.findBranch('bbbb'))?.name).toBe('b1');
      expect((await c.listBranches()).map((b) => b.name)).toEqual(['b1']);
    });

    it('deletes snapshots and branches together, relinking later snapshots', async () => {
      await c.commitSnapshot(snapshotRecord('aaaa000000000001', 'one', { createdAtMs: 1 }), [{ hash: hash(1), sizeBytes: 1, storedBytes: 1 }]);
      await c.commitSnapshot(snapshotRecord('aaaa000000000002', 'two', { createdAtMs: 2, parentSnapshotId: 'aaaa000000000001' }), []);
      await c.commitSnapshot(snapshotRecord('aaaa000000000003', 'three', { createdAtMs: 3, parentSnapshotId: 'aaaa000000000002' }), []);
      await c.addBranch(branchRecord('bbbb000000000001', 'b1', 'aaaa000000000002'));
      await c.commitSnapshot(snapshotRecord('aaaa000000000004', 'b1-s', { createdAtMs: 4, sessionId: 'branch-bbbb000000000001', sourceBranchId: 'bbbb000000000001' }), []);
      // a snapshot with a branch cannot go without the branch
      await expect(c.deleteSnapshots(['aaaa000000000002'], [])).rejects.toMatchObject({ code: 'E_CONFLICT' });
      await c.deleteSnapshots(['aaaa000000000002'], ['bbbb000000000001']);
      expect((await c.findSnapshot('three'))?.parentSnapshotId).toBe('aaaa000000000001');
      expect((await c.findSnapshot('b1-s'))?.sourceBranchId).toBeNull();
      await c.deleteSnapshots(['aaaa000000000001'], []);
      expect(await c.snapshotObjects('aaaa000000000001')).toEqual([]);
      expect((await c.findSnapshot('three'))?.parentSnapshotId).toBeNull();
    });

    it('round-trips a snapshot with many objects and counts the snapshots holding each', async () => {
      // 1,500 objects: past one insert batch and one varint byte of the compact list
      const many = Array.from({ length: 1500 }, (_, i) => ({ hash: hash(i + 1), sizeBytes: 1000 + i, storedBytes: 500 + i }));
      await c.commitSnapshot(snapshotRecord('aaaa000000000001', 'one', { createdAtMs: 1 }), [...many].reverse());
      // the next snapshot of the growing session: drops the first 10, keeps the rest, adds 5
      const next = [...many.slice(10), ...Array.from({ length: 5 }, (_, i) => ({ hash: hash(5000 + i), sizeBytes: 9, storedBytes: 4 }))];
      await c.commitSnapshot(snapshotRecord('aaaa000000000002', 'two', { createdAtMs: 2, parentSnapshotId: 'aaaa000000000001' }), next);
      expect(await c.snapshotObjects('aaaa000000000001')).toEqual(many);
      expect(await c.snapshotObjects('aaaa000000000002')).toEqual(next);
      expect(await c.snapshotsHolding(hash(5))).toEqual(['aaaa000000000001']);
      expect(await c.snapshotsHolding(hash(700))).toEqual(['aaaa000000000001', 'aaaa000000000002']);
      expect(await c.snapshotsHolding(hash(99999))).toEqual([]);
      const counts = await c.countHolders([hash(5), hash(700), hash(5001), hash(99999)]);
      expect([...counts.entries()]).toEqual([
        [hash(5), 1],
        [hash(700), 2],
        [hash(5001), 1],
        [hash(99999), 0],
      ]);
      const storedOf = (list: typeof many) => list.reduce((sum, o) => sum + o.storedBytes, 0);
      expect(await c.storageTotals()).toMatchObject({ objects: 1505, storedBytes: storedOf(many) + 5 * 4 });
      // deleting the first leaves the second's list whole and forgets only what it alone held
      await c.deleteSnapshots(['aaaa000000000001'], []);
      expect(await c.snapshotObjects('aaaa000000000002')).toEqual(next);
      expect(await c.storageTotals()).toMatchObject({ snapshots: 1, objects: 1495, storedBytes: storedOf(next) });
      expect((await c.countHolders([hash(5), hash(700)])).get(hash(5))).toBe(0);
      // an object forgotten and referenced again comes back with one holder
      await c.commitSnapshot(snapshotRecord('aaaa000000000003', 'three', { createdAtMs: 3 }), [many[0]!]);
      expect(await c.snapshotObjects('aaaa000000000003')).toEqual([many[0]]);
      expect(await c.snapshotsHolding(hash(1))).toEqual(['aaaa000000000003']);
    });

    it('publishes snapshots at once that share objects new to the catalog', async () => {
      // four writers, each with 50 objects of its own and 50 shared by all, none known before
      const shared = Array.from({ length: 50 }, (_, i) => ({ hash: hash(10_000 + i), sizeBytes: 2, storedBytes: 1 }));
      const own = (k: number) => Array.from({ length: 50 }, (_, i) => ({ hash: hash(20_000 + k * 100 + i), sizeBytes: 2, storedBytes: 1 }));
      const ids = [1, 2, 3, 4].map((k) => `cccc00000000000${k}`);
      await Promise.all(ids.map((id, k) => c.commitSnapshot(snapshotRecord(id, `w${k}`, { createdAtMs: k }), [...shared, ...own(k)])));
      for (const [k, id] of ids.entries()) {
        expect((await c.snapshotObjects(id)).map((o) => o.hash)).toEqual([...shared, ...own(k)].map((o) => o.hash).sort());
      }
      expect((await c.countHolders([hash(10_000)])).get(hash(10_000))).toBe(4);
      expect(await c.storageTotals()).toMatchObject({ snapshots: 4, objects: 250, storedBytes: 250 });
    });

    it('keeps a failed publish from changing any list or count', async () => {
      await c.commitSnapshot(snapshotRecord('aaaa000000000001', 'one'), [{ hash: hash(1), sizeBytes: 1, storedBytes: 1 }]);
      await c.addBranch(branchRecord('bbbb000000000001', 'taken', 'aaaa000000000001'));
      await expect(
        c.commitSnapshot(snapshotRecord('aaaa000000000002', 'taken'), [
          { hash: hash(1), sizeBytes: 1, storedBytes: 1 },
          { hash: hash(2), sizeBytes: 2, storedBytes: 2 },
        ]),
      ).rejects.toMatchObject({ code: 'E_EXISTS' });
      expect([...(await c.countHolders([hash(1), hash(2)])).values()]).toEqual([1, 0]);
      expect(await c.storageTotals()).toMatchObject({ snapshots: 1, objects: 1, storedBytes: 1 });
    });

    it('caches stats and sums storage over distinct objects', async () => {
      await c.commitSnapshot(snapshotRecord('aaaa000000000001', 'one', { bytes: 100 }), [{ hash: hash(1), sizeBytes: 60, storedBytes: 30 }, { hash: hash(2), sizeBytes: 40, storedBytes: 20 }]);
      await c.commitSnapshot(snapshotRecord('aaaa000000000002', 'two', { bytes: 150 }), [{ hash: hash(1), sizeBytes: 60, storedBytes: 30 }, { hash: hash(3), sizeBytes: 90, storedBytes: 45 }]);
      expect(await c.storageTotals()).toEqual({ snapshots: 2, logicalBytes: 250, largestSnapshotBytes: 150, objects: 3, storedBytes: 95 });
      const stats = { tokens: 5, breakdown: { userText: 5, assistantText: 0, toolInput: 0, toolResult: 0, image: 0, thinking: 0, system: 0 }, tokenizer: 'o200k', messages: 1, errors: 0, model: null, computedAtMs: 9 };
      await c.setSnapshotStats('aaaa000000000001', stats);
      expect((await c.findSnapshot('one'))?.stats).toEqual(stats);
      expect((await c.listSnapshots()).map((s) => s.name)).toEqual(['one', 'two']);
    });
  });
}
