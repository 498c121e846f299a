/**
 * Migration 9 (per-snapshot object lists) on both warm-store backends: a catalog written by the
 * previous schema, one row per (snapshot, object), keeps every snapshot's list, the sizes, the
 * holder counts and the totals once converted, and the old table is gone.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqlSessionCatalog } from '../../session/dag/sql-catalog.js';
import { createTempSchema, postgresReady } from '../../../test/support/postgres.js';
import { describeWithService } from '../../../test/support/services.js';
import { runMigrations, schemaVersion } from './migrations.js';
import { openWarmDatabase } from './open.js';
import { WARM_MIGRATIONS } from './schema.js';
import type { SqlDatabase } from './sql.js';

const LISTS = WARM_MIGRATIONS.find((m) => m.name === 'snapshot object lists')!;
const BEFORE = WARM_MIGRATIONS.filter((m) => m.version < LISTS.version);
const hash = (n: number) => n.toString(16).padStart(64, '0');

async function addOldSnapshot(db: SqlDatabase, id: string, createdAtMs: number, objects: Array<[hash: string, size: number, stored: number]>): Promise<void> {
  await db.run(
    "INSERT INTO snapshots (id, name, agent, session_id, source_path, manifest_hash, bytes, main_bytes, files, origin, created_at_ms) VALUES (?, ?, 'claude', 's', '/p/s.jsonl', 'm', 1, 1, 1, 'local', ?)",
    [id, `n-${id}`, createdAtMs],
  );
  for (const [h, size, stored] of objects) await db.run('INSERT INTO snapshot_objects (snapshot_id, hash, size_bytes, stored_bytes) VALUES (?, ?, ?, ?)', [id, h, size, stored]);
}

/** Writes a previous-schema catalog, migrates it, and checks what the catalog reads back. */
async function migratesLists(db: SqlDatabase): Promise<void> {
  await runMigrations(db, BEFORE);
  // 600 objects in the first snapshot (ids past one varint byte, several insert batches), most
  // shared by the second, a few only in the second; one text "hash" that is no SHA-256
  const first = Array.from({ length: 600 }, (_, i) => [hash(i + 1), 100 + i, 50 + i] as [string, number, number]);
  const second = [...first.slice(100), [hash(9001), 7, 3] as [string, number, number], ['legacy-name', 5, 5] as [string, number, number]];
  await addOldSnapshot(db, 'aaaa000000000001', 1, first);
  await addOldSnapshot(db, 'aaaa000000000002', 2, second);
  await addOldSnapshot(db, 'aaaa000000000003', 3, []);
  const sorted = (list: Array<[string, number, number]>) =>
    list.map(([h, sizeBytes, storedBytes]) => ({ hash: h, sizeBytes, storedBytes })).sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));

  await runMigrations(db, WARM_MIGRATIONS);
  expect(await schemaVersion(db)).toBe(WARM_MIGRATIONS[WARM_MIGRATIONS.length - 1]!.version);
  await expect(db.get('SELECT COUNT(*) AS n FROM snapshot_objects')).rejects.toThrow();
  const catalog = createSqlSessionCatalog(db);
  expect(await catalog.snapshotObjects('aaaa000000000001')).toEqual(sorted(first));
  expect(await catalog.snapshotObjects('aaaa000000000002')).toEqual(sorted(second));
  expect(await catalog.snapshotObjects('aaaa000000000003')).toEqual([]);
  expect(await catalog.snapshotsHolding(hash(200))).toEqual(['aaaa000000000001', 'aaaa000000000002']);
  expect(await catalog.snapshotsHolding('legacy-name')).toEqual(['aaaa000000000002']);
  const holders = await catalog.countHolders([hash(1), hash(200), hash(9001), hash(9999)]);
  expect([...holders.values()]).toEqual([1, 2, 1, 0]);
  expect(await catalog.storageTotals()).toMatchObject({ snapshots: 3, objects: 602, storedBytes: first.reduce((s, o) => s + o[2], 0) + 3 + 5 });
  // the converted holder counts drive deletion like fresh ones
  await catalog.deleteSnapshots(['aaaa000000000001'], []);
  expect(await catalog.storageTotals()).toMatchObject({ snapshots: 2, objects: 502 });
  expect(await catalog.snapshotObjects('aaaa000000000002')).toEqual(sorted(second));
}

describe('migration 9: snapshot object lists (SQLite)', () => {
  let dir: string | undefined;
  let db: SqlDatabase | undefined;
  afterEach(async () => {
    await db?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('converts the rows of the previous schema into per-snapshot lists', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ctxvm-migration-9-'));
    db = await openWarmDatabase({ db: join(dir, 'w.db'), migrations: [] });
    await migratesLists(db);
  });
});

describeWithService(
  'postgres',
  process.env.DATABASE_URL,
  (url) => {
    describe('migration 9: snapshot object lists (PostgreSQL)', () => {
      it('converts the rows of the previous schema into per-snapshot lists', async () => {
        const schema = await createTempSchema(url, 'lists');
        const db = await openWarmDatabase({ db: url, migrations: [], postgres: { searchPath: schema.name, poolSize: 2 } });
        try {
          await migratesLists(db);
        } finally {
          await db.close();
          await schema.drop();
        }
      });
    });
  },
  { check: postgresReady },
);
