import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkMigrations, runMigrations, schemaVersion, type Migration } from './migrations.js';
import { openWarmDatabase } from './open.js';
import { WARM_MIGRATIONS } from './schema.js';
import { isUniqueViolation, type SqlDatabase } from './sql.js';
import { createBetterSqliteDriver } from './sqlite-driver.js';

let dir: string;
const open: SqlDatabase[] = [];
const connect = async () => {
  const db = await createBetterSqliteDriver({ path: join(dir, 'w.db'), busyTimeoutMs: 2000 }).connect();
  open.push(db);
  return db;
};
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-warm-'));
});
afterEach(async () => {
  for (const db of open.splice(0)) await db.close();
  await rm(dir, { recursive: true, force: true });
});

const steps: Migration[] = [
  { version: 1, name: 'a', up: 'CREATE TABLE a (id TEXT PRIMARY KEY, n INTEGER NOT NULL)' },
  { version: 2, name: 'b', up: async (tx) => void (await tx.run("INSERT INTO a (id, n) VALUES ('seed', 1)")) },
];

describe('SQLite driver', () => {
  it('opens in WAL mode, creates the folder, and runs portable statements', async () => {
    const db = await createBetterSqliteDriver({ path: join(dir, 'nested', 'x.db') }).connect();
    open.push(db);
    expect(await db.get<{ journal_mode: string }>('PRAGMA journal_mode')).toEqual({ journal_mode: 'wal' });
    await db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v BIGINT)');
    await db.run('INSERT INTO t (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v', ['a', 1]);
    await db.run('INSERT INTO t (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v', ['a', 2]);
    expect(await db.all('SELECT * FROM t')).toEqual([{ k: 'a', v: 2 }]);
    const err = await db.run('INSERT INTO t (k, v) VALUES (?, ?)', ['a', 3]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'E_CONFLICT' });
    expect(isUniqueViolation(err)).toBe(true);
  });

  it('returns rows as plain objects keyed by column, the same after a schema change', async () => {
    const db = await connect();
    await db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v BIGINT)');
    await db.run('INSERT INTO t (k, v) VALUES (?, ?)', ['a', 1]);
    // Duplicate names: the last column wins, as in better-sqlite3's own row objects.
    const dup = await db.get<Record<string, unknown>>('SELECT 1 AS x, 2 AS x, 3 AS y');
    expect(dup).toEqual({ x: 2, y: 3 });
    expect(Object.keys(dup!)).toEqual(['x', 'y']);
    expect(Object.getPrototypeOf(dup)).toBe(Object.prototype);
    expect(await db.get('SELECT k, v FROM t WHERE k = ?', ['missing'])).toBeUndefined();
    expect(await db.all('SELECT k, v FROM t WHERE k = ?', ['missing'])).toEqual([]);
    // A "__proto__" column is left to the binding's own row objects.
    expect((await db.get<Record<string, unknown>>(`SELECT k, 'p' AS "__proto__" FROM t`))?.k).toBe('a');
    // The cached "SELECT *" is re-prepared by SQLite after the table gains a column.
    expect(await db.all('SELECT k, v FROM t')).toEqual([{ k: 'a', v: 1 }]);
    const star = 'SELECT * FROM t ORDER BY k';
    expect((await db.all<Record<string, unknown>>(star)).map((r) => Object.keys(r))).toEqual([['k', 'v']]);
    await db.exec('ALTER TABLE t ADD COLUMN w TEXT');
    await db.run("UPDATE t SET w = 'new'");
    const after = await db.all<Record<string, unknown>>(star);
    expect(after.map((r) => Object.keys(r))).toEqual([['k', 'v', 'w']]);
    expect(after[0]!.w).toBe('new');
  });

  it('rolls a failed transaction back and keeps other calls out of a running one', async () => {
    const db = await connect();
    await db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
    await expect(
      db.transaction(async (tx) => {
        await tx.run("INSERT INTO t VALUES ('x')");
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await db.all('SELECT * FROM t')).toEqual([]);
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const tx = db.transaction(async (t) => {
      await t.run("INSERT INTO t VALUES ('in-tx')");
      order.push('tx-insert');
      await gate;
      order.push('tx-end');
    });
    await new Promise((r) => setTimeout(r, 10));
    const outside = db.all('SELECT * FROM t').then((rows) => order.push(`outside saw ${rows.length}`));
    await new Promise((r) => setTimeout(r, 10));
    release();
    await Promise.all([tx, outside]);
    expect(order).toEqual(['tx-insert', 'tx-end', 'outside saw 1']);
  });

  it('shares one connection per file within a process, so two handles cannot deadlock', async () => {
    const a = await connect();
    const b = await connect();
    await a.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
    await Promise.all([
      a.transaction(async (tx) => {
        await new Promise((r) => setTimeout(r, 20));
        await tx.run("INSERT INTO t VALUES ('a')");
      }),
      b.transaction((tx) => tx.run("INSERT INTO t VALUES ('b')")),
    ]);
    expect((await a.all('SELECT k FROM t ORDER BY k')).map((r) => r.k)).toEqual(['a', 'b']);
    await a.close();
    expect(await b.all('SELECT COUNT(*) AS n FROM t')).toEqual([{ n: 2 }]);
  });

  it('waits for another process’s write lock instead of failing', async () => {
    const db = await connect();
    await db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
    const holder = [
      "const Database = require('better-sqlite3');",
      `const db = new Database(${JSON.stringify(join(dir, 'w.db'))});`,
      "db.exec('BEGIN IMMEDIATE'); db.exec(\"INSERT INTO t VALUES ('other')\");",
      "process.stdout.write('locked\\n');",
      'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 400);',
      "db.exec('COMMIT'); db.close();",
    ].join('\n');
    const child = spawn(process.execPath, ['-e', holder], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
      child.on('error', reject);
      child.on('exit', (code) => reject(new Error(`lock holder exited early (${code})`)));
    });
    const started = Date.now();
    await db.transaction((tx) => tx.run("INSERT INTO t VALUES ('mine')"));
    expect(Date.now() - started).toBeGreaterThan(100);
    expect((await db.all('SELECT k FROM t ORDER BY k')).map((r) => r.k)).toEqual(['mine', 'other']);
  });

  it('refuses calls after close', async () => {
    const db = await connect();
    await db.close();
    await expect(db.all('SELECT 1')).rejects.toMatchObject({ code: 'E_USAGE' });
    await db.close();
  });
});

describe('migrations', () => {
  it('applies steps in order once, each with its row, and is idempotent', async () => {
    const db = await connect();
    expect(await runMigrations(db, steps, { now: () => 42 })).toEqual({ applied: [1, 2], version: 2 });
    expect(await runMigrations(db, steps)).toEqual({ applied: [], version: 2 });
    expect(await db.all('SELECT version, name, applied_at_ms FROM ctxvm_migrations ORDER BY version')).toEqual([
      { version: 1, name: 'a', applied_at_ms: 42 },
      { version: 2, name: 'b', applied_at_ms: 42 },
    ]);
    expect(await db.all('SELECT * FROM a')).toEqual([{ id: 'seed', n: 1 }]);
  });

  it('rolls back a failing step entirely', async () => {
    const db = await connect();
    const failing: Migration[] = [steps[0]!, { version: 2, name: 'bad', up: "CREATE TABLE b (x TEXT); INSERT INTO nowhere VALUES (1)" }];
    await expect(runMigrations(db, failing)).rejects.toMatchObject({ code: 'E_IO' });
    expect(await schemaVersion(db)).toBe(1);
    expect(await db.all("SELECT name FROM sqlite_master WHERE name = 'b'")).toEqual([]);
  });

  it('runs safely from two connections at once', async () => {
    const [a, b] = [await connect(), await connect()];
    const [ra, rb] = await Promise.all([runMigrations(a, steps), runMigrations(b, steps)]);
    expect([...ra.applied, ...rb.applied].sort()).toEqual([1, 2]);
    expect(await a.all('SELECT * FROM a')).toEqual([{ id: 'seed', n: 1 }]);
  });

  it('refuses a database from a newer or different build, and unordered steps', async () => {
    const db = await connect();
    await runMigrations(db, steps);
    await expect(runMigrations(db, steps.slice(0, 1))).rejects.toMatchObject({ code: 'E_UNSUPPORTED' });
    await expect(runMigrations(db, [steps[0]!, { ...steps[1]!, name: 'renamed' }])).rejects.toMatchObject({ code: 'E_INTEGRITY' });
    expect(() => checkMigrations([steps[1]!, steps[0]!])).toThrow(/greater than/);
  });

  it('applies only the parts asked for, and the others when a later call asks', async () => {
    const parted: Migration[] = [
      { version: 1, name: 'a', up: 'CREATE TABLE a (x TEXT)', part: 'sessions' },
      { version: 2, name: 'b', up: 'CREATE TABLE b (x TEXT)', part: 'memory' },
      { version: 3, name: 'c', up: 'CREATE TABLE c (x TEXT)', part: 'sessions' },
      { version: 4, name: 'd', up: 'CREATE TABLE d (x TEXT)' },
    ];
    const db = await connect();
    const tables = async () => (await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'ctxvm_migrations' ORDER BY name")).map((r) => r.name);
    expect(await runMigrations(db, parted, { parts: ['sessions'] })).toEqual({ applied: [1, 3, 4], version: 4 });
    expect(await tables()).toEqual(['a', 'c', 'd']);
    // the newest recorded step (4) is not newer than this list knows, though 2 is missing
    expect(await runMigrations(db, parted)).toEqual({ applied: [2], version: 4 });
    expect(await tables()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('a sessions-only warm database holds no memory tables until the memory store opens it', async () => {
    const path = join(dir, 'parts.db');
    const sessionsOnly = await openWarmDatabase({ db: path, parts: ['sessions'] });
    const names = async (d: typeof sessionsOnly) => (await d.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")).map((r) => r.name);
    expect(await names(sessionsOnly)).toEqual(expect.arrayContaining(['snapshots', 'branches', 'catalog_objects']));
    expect((await names(sessionsOnly)).filter((n) => n.startsWith('memory_') || n === 'api_keys')).toEqual([]);
    await sessionsOnly.close();
    const full = await openWarmDatabase({ db: path });
    open.push(full);
    expect(await names(full)).toEqual(expect.arrayContaining(['snapshots', 'memory_turns', 'memory_tasks', 'reminder_deliveries', 'api_keys', 'memory_message_claims']));
    expect(await schemaVersion(full)).toBe(WARM_MIGRATIONS[WARM_MIGRATIONS.length - 1]!.version);
  });

  it('openWarmDatabase applies the warm schema, and routes postgres:// URLs to PostgreSQL', async () => {
    const db = await openWarmDatabase({ db: join(dir, 'ctxvm.db') });
    open.push(db);
    expect(await schemaVersion(db)).toBeGreaterThanOrEqual(1);
    expect(await db.all("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'snapshots'")).toHaveLength(1);
    // nothing listens on port 1: the PostgreSQL driver answers, naming the URL without its password
    await expect(openWarmDatabase({ db: 'postgresql://u:secret@127.0.0.1:1/db' })).rejects.toMatchObject({
      code: 'E_UNAVAILABLE',
      message: expect.stringMatching(/^postgresql:\/\/u:\*\*\*@127\.0\.0\.1:1\/db: cannot connect/),
    });
  });
});
