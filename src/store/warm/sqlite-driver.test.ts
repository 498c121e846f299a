import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SqlDatabase } from './sql.js';
import { createBetterSqliteDriver, NEW_DATABASE_PAGE_SIZE } from './sqlite-driver.js';

let dir: string;
const open: SqlDatabase[] = [];
const connect = async (path = join(dir, 'g.db')) => {
  const db = await createBetterSqliteDriver({ path, busyTimeoutMs: 2000 }).connect();
  open.push(db);
  return db;
};
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-sqlite-group-'));
});
afterEach(async () => {
  for (const db of open.splice(0)) await db.close();
  await rm(dir, { recursive: true, force: true });
});

/** What another connection (as a second process would) reads: the rows' keys committed so far. */
async function committedKeys(path: string): Promise<string[]> {
  const { default: Database } = await import('better-sqlite3');
  const other = new Database(path, { readonly: true });
  try {
    return (other.prepare('SELECT k FROM t').all() as { k: string }[]).map((r) => r.k);
  } finally {
    other.close();
  }
}
const committedRows = async (path: string) => (await committedKeys(path)).length;

describe('SQLite driver: group commit of concurrent transactions', () => {
  it('settles every transaction only once it is committed, and a failing one undoes only itself', async () => {
    const path = join(dir, 'g.db');
    const db = await connect(path);
    await db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
    const visibleWhenAcknowledged: boolean[] = [];
    const txs = Array.from({ length: 40 }, (_, i) =>
      db
        .transaction(async (tx) => {
          await tx.run('INSERT INTO t (k, v) VALUES (?, ?)', [`k${i}`, i]);
          if (i % 7 === 3) throw new Error(`fail ${i}`);
          return i;
        })
        .then(async (v) => {
          // acknowledged ⇒ committed: another connection already sees the row
          visibleWhenAcknowledged.push((await committedKeys(path)).includes(`k${v}`));
          return v;
        }),
    );
    const results = await Promise.allSettled(txs);
    const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [i] : []));
    expect(failed).toEqual(Array.from({ length: 40 }, (_, i) => i).filter((i) => i % 7 === 3));
    expect(results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<number>).value)).toEqual(
      Array.from({ length: 40 }, (_, i) => i).filter((i) => i % 7 !== 3),
    );
    const rows = await db.all<{ k: string }>('SELECT k FROM t ORDER BY v');
    expect(rows.map((r) => r.k)).toEqual(Array.from({ length: 40 }, (_, i) => i).filter((i) => i % 7 !== 3).map((i) => `k${i}`));
    expect(visibleWhenAcknowledged).toHaveLength(40 - failed.length);
    expect(visibleWhenAcknowledged.every(Boolean)).toBe(true);
  });

  it('keeps readers outside a group waiting until it commits (they never see half a group)', async () => {
    const db = await connect();
    await db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
    const writes = Array.from({ length: 10 }, (_, i) => db.transaction(async (tx) => void (await tx.run('INSERT INTO t (k, v) VALUES (?, ?)', [`k${i}`, i]))));
    const counts: number[] = [];
    const reads = Array.from({ length: 10 }, () => db.get<{ n: number }>('SELECT COUNT(*) AS n FROM t').then((r) => counts.push(Number(r!.n))));
    await Promise.all([...writes, ...reads]);
    expect(counts.every((n) => n === 0 || n === 10)).toBe(true);
    expect((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM t'))!.n).toBe(10);
  });

  it('lets a transaction asked for later in the same event-loop turn (another request read in that poll) join the group', async () => {
    const path = join(dir, 'g.db');
    const db = await connect(path);
    await db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
    const events: string[] = [];
    const insert = (k: string) =>
      db
        .transaction(async (tx) => {
          await tx.run('INSERT INTO t (k, v) VALUES (?, 1)', [k]);
          events.push(`${k} ran`);
        })
        .then(() => events.push(`${k} settled`));
    // `b` is asked for by a callback of its own (as a second HTTP request would be), after `a`
    // was asked for and before the event loop moves on.
    let b: Promise<unknown> | undefined;
    setImmediate(() => (b = insert('b')));
    const a = insert('a');
    await a;
    await b;
    // One group: `a` is acknowledged with `b`'s COMMIT, not before `b` ran.
    expect(events).toEqual(['a ran', 'b ran', 'a settled', 'b settled']);
    expect(await committedKeys(path)).toEqual(['a', 'b']);
  });

  it('lets a read asked for after a transaction that has not started yet read what was committed before it', async () => {
    const db = await connect();
    await db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
    const write = db.transaction(async (tx) => void (await tx.run("INSERT INTO t (k, v) VALUES ('a', 1)")));
    const before = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM t');
    await write;
    expect(before!.n).toBe(0);
    expect((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM t'))!.n).toBe(1);
  });

  it('commits a group left open for a transaction of a handle that was closed meanwhile', async () => {
    const path = join(dir, 'g.db');
    const a = await connect(path);
    const b = await createBetterSqliteDriver({ path, busyTimeoutMs: 2000 }).connect();
    await a.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
    const first = a.transaction(async (tx) => void (await tx.run("INSERT INTO t (k, v) VALUES ('a', 1)")));
    const closing = b.close();
    const late = b.transaction(async (tx) => void (await tx.run("INSERT INTO t (k, v) VALUES ('b', 2)")));
    await first;
    await closing;
    await expect(late).rejects.toMatchObject({ code: 'E_USAGE' });
    expect(await committedRows(path)).toBe(1);
  });
});

describe('SQLite driver: the write lock held by another process', () => {
  /** Another connection (as a second process would have) holding the write lock. */
  async function holdWriteLock(path: string) {
    const { default: Database } = await import('better-sqlite3');
    const other = new Database(path);
    other.exec("BEGIN IMMEDIATE; INSERT INTO t (k, v) VALUES ('other', 0)");
    return {
      release: () => (other.exec('COMMIT'), other.close()),
      close: () => other.close(),
    };
  }

  it('waits for it without blocking the thread: reads answer meanwhile, and the transaction commits once it is free', async () => {
    const path = join(dir, 'g.db');
    const db = await connect(path);
    await db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
    const lock = await holdWriteLock(path);
    const events: string[] = [];
    const write = db.transaction(async (tx) => void (await tx.run("INSERT INTO t (k, v) VALUES ('mine', 1)"))).then(() => events.push('committed'));
    await new Promise((r) => setTimeout(r, 30));
    events.push('timer ran');
    // A read is answered from what is committed (the other connection's row is not).
    const read = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM t');
    events.push(`read ${read!.n}`);
    lock.release();
    await write;
    expect(events).toEqual(['timer ran', 'read 0', 'committed']);
    expect(await committedKeys(path)).toEqual(['mine', 'other'].sort());
  });

  it('gives up after the busy timeout with E_UNAVAILABLE, and the next transaction goes through', async () => {
    const path = join(dir, 'g.db');
    const db = await createBetterSqliteDriver({ path, busyTimeoutMs: 60 }).connect();
    open.push(db);
    await db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
    const lock = await holdWriteLock(path);
    const started = performance.now();
    await expect(db.transaction(async (tx) => void (await tx.run("INSERT INTO t (k, v) VALUES ('mine', 1)")))).rejects.toMatchObject({ code: 'E_UNAVAILABLE' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
    lock.close(); // rolled back: the other connection's row is gone
    await db.transaction(async (tx) => void (await tx.run("INSERT INTO t (k, v) VALUES ('mine', 1)")));
    expect(await committedKeys(path)).toEqual(['mine']);
  });
});

describe('SQLite driver: options', () => {
  it('sets the WAL autocheckpoint when asked, and leaves SQLite default otherwise', async () => {
    const tuned = await createBetterSqliteDriver({ path: join(dir, 'a.db'), walAutocheckpointPages: 10_000 }).connect();
    open.push(tuned);
    expect(await tuned.get('PRAGMA wal_autocheckpoint')).toEqual({ wal_autocheckpoint: 10_000 });
    const plain = await connect(join(dir, 'b.db'));
    expect(await plain.get('PRAGMA wal_autocheckpoint')).toEqual({ wal_autocheckpoint: 1000 });
  });

  it('creates a database with small pages, and opens one made with another page size as it is', async () => {
    const fresh = await connect(join(dir, 'new.db'));
    await fresh.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
    expect(await fresh.get('PRAGMA page_size')).toEqual({ page_size: NEW_DATABASE_PAGE_SIZE });
    const { default: Database } = await import('better-sqlite3');
    const oldPath = join(dir, 'old.db');
    const made = new Database(oldPath);
    made.pragma('page_size = 4096');
    made.pragma('journal_mode = WAL');
    made.exec("CREATE TABLE t (k TEXT PRIMARY KEY); INSERT INTO t VALUES ('kept')");
    made.close();
    const old = await connect(oldPath);
    expect(await old.get('PRAGMA page_size')).toEqual({ page_size: 4096 });
    expect(await old.all('SELECT k FROM t')).toEqual([{ k: 'kept' }]);
    await old.run("INSERT INTO t VALUES ('added')");
    expect((await committedKeys(oldPath)).sort()).toEqual(['added', 'kept']);
  });
});
