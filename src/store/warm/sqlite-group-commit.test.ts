import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createGroupCommit, type GroupCommitDatabase } from './sqlite-group-commit.js';
import { createBetterSqliteDriver } from './sqlite-driver.js';

/** A database that records the statements the queue sends; `fail` makes one of them throw. */
function recorder(fail?: (sql: string) => boolean) {
  const log: string[] = [];
  let open = false;
  const db: GroupCommitDatabase & { abandon(): void } = {
    get inTransaction() {
      return open;
    },
    exec(sql) {
      if (fail?.(sql)) throw Object.assign(new Error(`cannot ${sql}`), { code: 'SQLITE_IOERR' });
      log.push(sql.split(' ')[0]!);
      if (sql.startsWith('BEGIN')) open = true;
      if (sql === 'COMMIT' || sql === 'ROLLBACK') open = false;
    },
    abandon: () => void (open = false),
  };
  return { db, log };
}

const tick = () => new Promise((r) => setTimeout(r, 1));

describe('group commit', () => {
  it('commits transactions that queued up behind a running one together, each under its savepoint', async () => {
    const { db, log } = recorder();
    // A long window, so a slow machine cannot split the group.
    const queue = createGroupCommit({ db, wrap: (e) => e, maxGroupMs: 60_000 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = queue.run(async () => void (await gate), 'x', () => undefined);
    const rest = [1, 2, 3].map((n) => queue.run(async (tx) => `${tx}${n}`, 'x', () => undefined));
    await tick();
    expect(queue.active).toBe(true);
    release();
    expect(await Promise.all([first, ...rest])).toEqual([undefined, 'x1', 'x2', 'x3']);
    expect(log.filter((s) => s === 'COMMIT')).toHaveLength(1);
    expect(log.filter((s) => s === 'SAVEPOINT')).toHaveLength(4);
    await queue.idle();
    expect(queue.active).toBe(false);
  });

  it('resolves only after COMMIT, and a failed COMMIT fails every transaction of the group', async () => {
    const { db, log } = recorder((sql) => sql === 'COMMIT');
    const queue = createGroupCommit({ db, wrap: (e) => e });
    const results = await Promise.allSettled([1, 2].map((n) => queue.run(async () => n, null, () => undefined)));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(log.at(-1)).toBe('ROLLBACK');
  });

  it('refuses a transaction whose handle closed while it waited', async () => {
    const { db } = recorder();
    const queue = createGroupCommit({ db, wrap: (e) => e });
    let ran = false;
    await expect(
      queue.run(
        async () => {
          ran = true;
        },
        null,
        () => new Error('closed'),
      ),
    ).rejects.toThrow('closed');
    expect(ran).toBe(false);
  });

  it('runs the transactions that had succeeded again when SQLite abandons the whole transaction', async () => {
    const { db, log } = recorder();
    const queue = createGroupCommit({ db, wrap: (e) => e, maxGroupMs: 60_000 });
    const runs: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const a = queue.run(async () => {
      runs.push('a');
      await gate;
    }, null, () => undefined);
    const b = queue.run(async () => {
      runs.push('b');
      db.abandon(); // e.g. an I/O error: SQLite rolled everything back
      throw new Error('disk');
    }, null, () => undefined);
    const c = queue.run(async () => void runs.push('c'), null, () => undefined);
    await tick();
    release();
    await expect(b).rejects.toThrow('disk');
    await Promise.all([a, c]);
    expect(runs).toEqual(['a', 'b', 'a', 'c']);
    expect(log.filter((s) => s === 'COMMIT')).toHaveLength(1);
  });
});

describe('group commit over SQLite', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('keeps the writes of the transactions that succeeded and undoes only the one that failed', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ctxvm-group-'));
    const db = await createBetterSqliteDriver({ path: join(dir, 'g.db') }).connect();
    try {
      await db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const held = db.transaction(async (tx) => {
        await tx.run("INSERT INTO t VALUES ('held')");
        await gate;
      });
      const others = ['a', 'b', 'c', 'd'].map((k) =>
        db.transaction(async (tx) => {
          await tx.run('INSERT INTO t VALUES (?)', [k]);
          if (k === 'b') {
            await tx.run("INSERT INTO t VALUES ('b2')");
            throw new Error('no b');
          }
          return k;
        }),
      );
      const reader = db.all<{ k: string }>('SELECT k FROM t ORDER BY k');
      await tick();
      release();
      const settled = await Promise.allSettled([held, ...others]);
      expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      // The read waited for the running group, and never sees the writes of a failed transaction.
      const seen = (await reader).map((r) => r.k);
      expect(seen).toContain('held');
      expect(seen).not.toContain('b2');
      expect((await db.all<{ k: string }>('SELECT k FROM t ORDER BY k')).map((r) => r.k)).toEqual(['a', 'c', 'd', 'held']);
    } finally {
      await db.close();
    }
  });
});
