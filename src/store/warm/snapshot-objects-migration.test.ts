import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMigrations, schemaVersion } from './migrations.js';
import { WARM_MIGRATIONS } from './schema.js';
import type { SqlDatabase } from './sql.js';
import { createBetterSqliteDriver } from './sqlite-driver.js';

let dir: string;
let db: SqlDatabase | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-migration-7-'));
});
afterEach(async () => {
  await db?.close();
  db = undefined;
  await rm(dir, { recursive: true, force: true });
});

const CLUSTERED = WARM_MIGRATIONS.find((m) => m.name === 'snapshot objects clustered')!;

async function addSnapshot(ex: SqlDatabase, id: string, hashes: string[]): Promise<void> {
  await ex.run(
    "INSERT INTO snapshots (id, name, agent, session_id, source_path, manifest_hash, bytes, main_bytes, files, origin, created_at_ms) VALUES (?, ?, 'claude', 's', '/p/s.jsonl', 'm', 1, 1, 1, 'local', 1)",
    [id, `n-${id}`],
  );
  for (const h of hashes) await ex.run('INSERT INTO snapshot_objects (snapshot_id, hash, size_bytes, stored_bytes) VALUES (?, ?, 10, 5)', [id, h]);
}

describe('migration: snapshot objects clustered (SQLite)', () => {
  it('rebuilds snapshot_objects without rowid, keeping its rows, key, hash index and cascade', async () => {
    db = await createBetterSqliteDriver({ path: join(dir, 'w.db') }).connect();
    await runMigrations(db, WARM_MIGRATIONS.filter((m) => m.version < CLUSTERED.version));
    await addSnapshot(db, 'a', ['h1', 'h2']);
    await addSnapshot(db, 'b', ['h2', 'h3']);
    const rowid = await db.get<{ sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'snapshot_objects'");
    expect(rowid!.sql).not.toMatch(/WITHOUT ROWID/);

    // up to this step only: migration 9 replaces the table by per-snapshot lists
    await runMigrations(db, WARM_MIGRATIONS.filter((m) => m.version <= CLUSTERED.version));
    expect(await schemaVersion(db)).toBe(CLUSTERED.version);
    const clustered = await db.get<{ sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'snapshot_objects'");
    expect(clustered!.sql).toMatch(/WITHOUT ROWID/);
    // the primary key is the table itself now: no automatic index beside it
    expect(await db.all("SELECT name FROM sqlite_master WHERE tbl_name = 'snapshot_objects' AND type = 'index' ORDER BY name")).toEqual([{ name: 'snapshot_objects_hash' }]);
    expect(await db.all('SELECT snapshot_id, hash, size_bytes, stored_bytes FROM snapshot_objects ORDER BY snapshot_id, hash')).toEqual([
      { snapshot_id: 'a', hash: 'h1', size_bytes: 10, stored_bytes: 5 },
      { snapshot_id: 'a', hash: 'h2', size_bytes: 10, stored_bytes: 5 },
      { snapshot_id: 'b', hash: 'h2', size_bytes: 10, stored_bytes: 5 },
      { snapshot_id: 'b', hash: 'h3', size_bytes: 10, stored_bytes: 5 },
    ]);
    await expect(db.run("INSERT INTO snapshot_objects (snapshot_id, hash, size_bytes, stored_bytes) VALUES ('a', 'h1', 1, 1)")).rejects.toThrow();
    await expect(db.run("INSERT INTO snapshot_objects (snapshot_id, hash, size_bytes, stored_bytes) VALUES ('gone', 'h9', 1, 1)")).rejects.toThrow();
    await db.run("DELETE FROM snapshots WHERE id = 'a'");
    expect(await db.all("SELECT snapshot_id FROM snapshot_objects WHERE hash = 'h2'")).toEqual([{ snapshot_id: 'b' }]);
    expect(await db.get<{ foreign_key_check: unknown }>('PRAGMA foreign_key_check')).toBeUndefined();
  });
});
