import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { releaseFreePages } from './free-pages.js';
import type { SqlDatabase } from './sql.js';
import { createBetterSqliteDriver } from './sqlite-driver.js';

let dir: string;
const opened: SqlDatabase[] = [];
async function reopen(path: string): Promise<SqlDatabase> {
  const db = await createBetterSqliteDriver({ path }).connect();
  opened.push(db);
  return db;
}
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-free-pages-'));
});
afterEach(async () => {
  for (const db of opened.splice(0)) await db.close();
  await rm(dir, { recursive: true, force: true });
});

/** Fills a table with ~1 MiB of rows, then deletes all but one. */
async function fillAndEmpty(db: SqlDatabase): Promise<void> {
  await db.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  await db.transaction(async (tx) => {
    for (let i = 0; i < 1000; i++) await tx.run('INSERT INTO t (k, v) VALUES (?, ?)', [i, 'x'.repeat(1000)]);
  });
  await db.run('DELETE FROM t WHERE k > 0');
}

const pageCount = async (db: SqlDatabase) => Number((await db.get<{ page_count: number }>('PRAGMA page_count'))!.page_count);

describe('releaseFreePages', () => {
  it('truncates the free pages off a database the driver created, keeping its rows', async () => {
    const path = join(dir, 'new.db');
    const db = await createBetterSqliteDriver({ path }).connect();
    await fillAndEmpty(db);
    const before = await pageCount(db);
    const r = await releaseFreePages(db);
    expect(r.releasedBytes).toBeGreaterThan(900_000);
    expect(r.remainingFreeBytes).toBe(0);
    expect(await pageCount(db)).toBeLessThan(before / 10);
    expect(await db.all('SELECT k FROM t')).toEqual([{ k: 0 }]);
    await db.close();
    // the last close checkpoints the WAL into the file, which is then as small as its pages
    expect((await stat(path)).size).toBeLessThan(100_000);
    expect(await releaseFreePages(await reopen(path))).toEqual({ releasedBytes: 0, remainingFreeBytes: 0 });
  });

  it('leaves a file made without incremental auto-vacuum as it is and says what stays free', async () => {
    const path = join(dir, 'old.db');
    const { default: Database } = await import('better-sqlite3');
    const made = new Database(path);
    made.pragma('journal_mode = WAL');
    made.exec('CREATE TABLE seed (k INTEGER)');
    made.close();
    const db = await createBetterSqliteDriver({ path }).connect();
    expect(await db.get('PRAGMA auto_vacuum')).toEqual({ auto_vacuum: 0 });
    await fillAndEmpty(db);
    const before = await pageCount(db);
    const r = await releaseFreePages(db);
    expect(r.releasedBytes).toBe(0);
    expect(r.remainingFreeBytes).toBeGreaterThan(900_000);
    expect(await pageCount(db)).toBe(before);
    await db.close();
  });
});
