/**
 * The PostgreSQL driver against a real server: placeholders, transactions, numbers, errors,
 * and migrations from two "processes" (two pools) at once. Every test works in its own schema.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTempSchema, postgresReady, type TempSchema } from '../../../test/support/postgres.js';
import { describeWithService } from '../../../test/support/services.js';
import { CtxvmError } from '../../errors.js';
import { runMigrations, schemaVersion, type Migration } from './migrations.js';
import { openWarmDatabase } from './open.js';
import { createPostgresDriver, type PostgresDriverOptions } from './postgres-driver.js';
import { WARM_MIGRATIONS } from './schema.js';
import { isUniqueViolation, type SqlDatabase } from './sql.js';

/** Resolves when `n` callers have arrived. */
function barrier(n: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const all = new Promise<void>((r) => (open = r));
  return () => {
    if (++arrived === n) open();
    return all;
  };
}

describe('PostgreSQL driver without a server', () => {
  it('rejects a malformed or foreign URL with E_USAGE, never showing the password', async () => {
    const bad = await createPostgresDriver({ url: 'postgres://u:secret@[::1/db' }).connect().catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: 'E_USAGE', message: expect.stringContaining('not a valid PostgreSQL URL') });
    expect((bad as CtxvmError).message).not.toContain('secret');
    expect((bad as CtxvmError).hint).toContain('postgres://');
    const foreign = await createPostgresDriver({ url: 'mysql://u:secret@h/db' }).connect().catch((e: unknown) => e);
    expect(foreign).toMatchObject({ code: 'E_USAGE', message: 'mysql://u:***@h/db: not a PostgreSQL URL' });
    await expect(createPostgresDriver({ url: 'postgres://h/db', searchPath: 'x; DROP' }).connect()).rejects.toMatchObject({ code: 'E_USAGE' });
    await expect(createPostgresDriver({ url: 'postgres://h/db', poolSize: 0 }).connect()).rejects.toMatchObject({ code: 'E_USAGE' });
  });

  it('reports an unreachable server as E_UNAVAILABLE naming the redacted URL, with a hint', async () => {
    const url = 'postgres://u:secret@127.0.0.1:1/db?password=also-secret';
    const err = await openWarmDatabase({ db: url, postgres: { connectTimeoutMs: 2000 } }).catch((e: unknown) => e);
    expect(CtxvmError.is(err)).toBe(true);
    expect(err).toMatchObject({ code: 'E_UNAVAILABLE', message: expect.stringContaining('postgres://u:***@127.0.0.1:1/db?password=***: cannot connect to PostgreSQL') });
    expect((err as CtxvmError).message).not.toMatch(/secret/);
    expect((err as CtxvmError).hint).toContain('127.0.0.1:1');
  });
});

describeWithService(
  'postgres',
  process.env.DATABASE_URL,
  (url) => {
    let schema: TempSchema;
    const open: SqlDatabase[] = [];
    const connect = async (options: Partial<PostgresDriverOptions> = {}) => {
      const db = await createPostgresDriver({ url, searchPath: schema.name, poolSize: 4, ...options }).connect();
      open.push(db);
      return db;
    };
    beforeEach(async () => {
      schema = await createTempSchema(url, 'driver');
    });
    afterEach(async () => {
      for (const db of open.splice(0)) await db.close();
      await schema.drop();
    });

    describe('statements', () => {
      it('translates placeholders, skipping literals, and checks their number', async () => {
        const db = await connect();
        expect(db.dialect).toBe('postgres');
        expect(await db.get("SELECT ?::text AS a, '?' AS b, ?::int AS \"c?\"", ['x', 7])).toEqual({ a: 'x', b: '?', 'c?': 7 });
        await expect(db.get('SELECT ?::text AS a', [])).rejects.toMatchObject({ code: 'E_USAGE', message: expect.stringContaining('1 placeholder(s) but 0 parameter(s)') });
      });

      it('runs scripts, upserts and reports changes, inside the search path schema', async () => {
        const db = await connect();
        await db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v BIGINT); CREATE INDEX t_v ON t (v);');
        const upsert = 'INSERT INTO t (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v';
        expect(await db.run(upsert, ['a', 1])).toEqual({ changes: 1 });
        await db.run(upsert, ['a', 2]);
        await db.run(upsert, ['b', 3]);
        expect(await db.all('SELECT * FROM t ORDER BY k')).toEqual([
          { k: 'a', v: 2 },
          { k: 'b', v: 3 },
        ]);
        expect(await db.run('DELETE FROM t WHERE v > ?', [0])).toEqual({ changes: 2 });
        expect(await db.get('SELECT * FROM t')).toBeUndefined();
        expect(await db.get('SELECT table_schema FROM information_schema.tables WHERE table_name = ?', ['t'])).toEqual({ table_schema: schema.name });
      });

      it('returns BIGINT and integer aggregates as numbers, and as bigint beyond 2^53', async () => {
        const db = await connect();
        await db.exec('CREATE TABLE n (id INTEGER PRIMARY KEY, v BIGINT, b BYTEA)');
        const values = [0, -1, 1_767_225_600_000, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
        for (const [i, v] of values.entries()) await db.run('INSERT INTO n (id, v) VALUES (?, ?)', [i, v]);
        expect((await db.all<{ v: unknown }>('SELECT v FROM n ORDER BY id')).map((r) => r.v)).toEqual(values);
        await db.run('INSERT INTO n (id, v, b) VALUES (?, ?, ?)', [9, 2n ** 62n, new Uint8Array([1, 2, 255])]);
        const big = await db.get<{ v: unknown; b: Uint8Array }>('SELECT v, b FROM n WHERE id = ?', [9]);
        expect(big?.v).toBe(2n ** 62n);
        expect([...big!.b]).toEqual([1, 2, 255]);
        expect(await db.get('SELECT COUNT(*) AS c, SUM(v) AS s, MAX(v) AS m, AVG(id) AS a FROM n WHERE id < ?', [3])).toEqual({
          c: 3,
          s: 1_767_225_599_999,
          m: 1_767_225_600_000,
          a: 1,
        });
        expect(await db.get('SELECT SUM(v) AS s FROM n WHERE id IN (?, ?)', [3, 9])).toEqual({ s: BigInt(Number.MAX_SAFE_INTEGER) + 2n ** 62n });
        expect(await db.get('SELECT AVG(v) AS a FROM n WHERE id IN (?, ?)', [0, 1])).toEqual({ a: -0.5 });
      });

      it('detects unique violations through the wrapped error', async () => {
        const db = await connect();
        await db.exec('CREATE TABLE u (k TEXT PRIMARY KEY)');
        await db.run('INSERT INTO u VALUES (?)', ['a']);
        const err = await db.run('INSERT INTO u VALUES (?)', ['a']).catch((e: unknown) => e);
        expect(err).toMatchObject({ code: 'E_CONFLICT', message: expect.stringContaining('duplicate key') });
        expect((err as CtxvmError).message.startsWith(db.location)).toBe(true);
        expect(isUniqueViolation(err)).toBe(true);
        const other = await db.run('INSERT INTO u VALUES (NULL)').catch((e: unknown) => e);
        expect(other).toMatchObject({ code: 'E_CONFLICT' });
        expect(isUniqueViolation(other)).toBe(false);
        await expect(db.get('SELECT * FROM missing_table')).rejects.toMatchObject({ code: 'E_IO', message: expect.stringContaining('missing_table') });
        // SQLite stores U+0000 in TEXT, PostgreSQL refuses it: say so
        await expect(db.run('INSERT INTO u VALUES (?)', ['a\u0000b'])).rejects.toMatchObject({ code: 'E_INVALID', hint: expect.stringContaining('U+0000') });
      });

      it('redacts the location, closes idempotently and refuses later calls', async () => {
        const withPassword = url.replace(/^(postgres(?:ql)?:\/\/)([^:@/]+)(?::[^@/]*)?@/, '$1$2:pw-should-not-show@');
        const db = await connect({ url: withPassword });
        expect(db.location).not.toContain('pw-should-not-show');
        expect(db.location).toMatch(/^postgres(ql)?:\/\//);
        await Promise.all([db.close(), db.close()]);
        await db.close();
        await expect(db.get('SELECT 1')).rejects.toMatchObject({ code: 'E_USAGE', message: expect.stringContaining('closed') });
        await expect(db.transaction(async () => 1)).rejects.toMatchObject({ code: 'E_USAGE' });
      });

      it('names a missing database with a createdb hint', async () => {
        const missing = url.replace(/\/[^/?]*(\?|$)/, '/ctxvm_no_such_database$1');
        const err = await createPostgresDriver({ url: missing }).connect().catch((e: unknown) => e);
        expect(err).toMatchObject({ code: 'E_NOT_FOUND', message: expect.stringContaining('ctxvm_no_such_database') });
        expect((err as CtxvmError).hint).toContain('createdb ctxvm_no_such_database');
      });
    });

    describe('transactions', () => {
      it('commits, rolls back on throw and passes fn errors through unchanged', async () => {
        const db = await connect();
        await db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
        expect(await db.transaction(async (tx) => (await tx.run('INSERT INTO t VALUES (?)', ['kept'])).changes)).toBe(1);
        const boom = new Error('boom');
        const thrown = await db
          .transaction(async (tx) => {
            await tx.run('INSERT INTO t VALUES (?)', ['gone']);
            throw boom;
          })
          .catch((e: unknown) => e);
        expect(thrown).toBe(boom);
        expect(await db.all('SELECT k FROM t')).toEqual([{ k: 'kept' }]);
      });

      it('undoes only a failed statement, so fn can recover and commit (as on SQLite)', async () => {
        const db = await connect();
        await db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
        await db.run('INSERT INTO t VALUES (?)', ['a']);
        const result = await db.transaction(async (tx) => {
          await tx.run('INSERT INTO t VALUES (?)', ['b']);
          const dup = await tx.run('INSERT INTO t VALUES (?)', ['a']).catch((e: unknown) => e);
          expect(isUniqueViolation(dup)).toBe(true);
          await tx.run('INSERT INTO t VALUES (?)', ['c']);
          return (await tx.all<{ k: string }>('SELECT k FROM t ORDER BY k')).map((r) => r.k);
        });
        expect(result).toEqual(['a', 'b', 'c']);
        expect(await db.all('SELECT k FROM t ORDER BY k')).toEqual([{ k: 'a' }, { k: 'b' }, { k: 'c' }]);
      });

      it('keeps uncommitted changes invisible to other calls, and refuses a leaked tx', async () => {
        const db = await connect();
        await db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        let inserted!: () => void;
        const didInsert = new Promise<void>((r) => (inserted = r));
        let leaked: Parameters<Parameters<SqlDatabase['transaction']>[0]>[0] | undefined;
        const tx = db.transaction(async (t) => {
          leaked = t;
          await t.run('INSERT INTO t VALUES (?)', ['in-tx']);
          inserted();
          await gate;
        });
        await didInsert;
        expect(await db.all('SELECT * FROM t')).toEqual([]);
        release();
        await tx;
        expect(await db.all('SELECT * FROM t')).toEqual([{ k: 'in-tx' }]);
        await expect(leaked!.get('SELECT 1')).rejects.toMatchObject({ code: 'E_USAGE', message: expect.stringContaining('transaction has ended') });
      });

      it('runs statements issued concurrently inside one transaction one at a time', async () => {
        const db = await connect();
        await db.exec('CREATE TABLE t (k INTEGER PRIMARY KEY)');
        await db.transaction(async (tx) => {
          const results = await Promise.allSettled([tx.run('INSERT INTO t VALUES (?)', [1]), tx.run('INSERT INTO t VALUES (?)', [1]), tx.run('INSERT INTO t VALUES (?)', [2])]);
          expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
        });
        expect(await db.all('SELECT k FROM t ORDER BY k')).toEqual([{ k: 1 }, { k: 2 }]);
      });

      it('runs one transaction of a database object at a time by default, so they never conflict', async () => {
        const db = await connect();
        await db.exec('CREATE TABLE c (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)');
        await db.run('INSERT INTO c VALUES (1, 0)');
        let runs = 0;
        await Promise.all(
          Array.from({ length: 10 }, () =>
            db.transaction(async (tx) => {
              runs++;
              const row = await tx.get<{ n: number }>('SELECT n FROM c WHERE id = 1');
              await new Promise((r) => setTimeout(r, 2));
              await tx.run('UPDATE c SET n = ? WHERE id = 1', [row!.n + 1]);
            }),
          ),
        );
        expect(await db.get('SELECT n FROM c')).toEqual({ n: 10 });
        expect(runs).toBe(10);
      });

      it('retries a serialization failure, so concurrent read-modify-writes both count', async () => {
        const db = await connect({ maxConcurrentTransactions: 2 });
        await db.exec('CREATE TABLE c (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)');
        await db.run('INSERT INTO c VALUES (1, 0)');
        let runs = 0;
        const bothRead = barrier(2);
        const increment = () =>
          db.transaction(async (tx) => {
            runs++;
            const row = await tx.get<{ n: number }>('SELECT n FROM c WHERE id = 1');
            await bothRead();
            await tx.run('UPDATE c SET n = ? WHERE id = 1', [row!.n + 1]);
          });
        await Promise.all([increment(), increment()]);
        expect(await db.get('SELECT n FROM c WHERE id = 1')).toEqual({ n: 2 });
        expect(runs).toBe(3);
      });

      it('makes conflicting writers of several processes take turns (lockAfterConflicts)', async () => {
        const setup = await connect();
        await setup.exec('CREATE TABLE c (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)');
        await setup.run('INSERT INTO c VALUES (1, 0)');
        const incrementFrom = async (processes: SqlDatabase[], each: number) => {
          let runs = 0;
          const jobs = processes.flatMap((db) =>
            Array.from({ length: each }, () =>
              db.transaction(async (tx) => {
                runs++;
                const row = await tx.get<{ n: number }>('SELECT n FROM c WHERE id = 1');
                await new Promise((r) => setTimeout(r, 2));
                await tx.run('UPDATE c SET n = ? WHERE id = 1', [row!.n + 1]);
              }),
            ),
          );
          await Promise.all(jobs);
          return runs;
        };
        // always locked: one writer at a time across "processes", never a retry
        expect(await incrementFrom([await connect({ lockAfterConflicts: 0 }), await connect({ lockAfterConflicts: 0 })], 5)).toBe(10);
        expect(await setup.get('SELECT n FROM c')).toEqual({ n: 10 });
        // default: optimistic first, locked after a conflict; every increment counts
        const runs = await incrementFrom([await connect(), await connect(), await connect()], 5);
        expect(runs).toBeGreaterThanOrEqual(15);
        expect(await setup.get('SELECT n FROM c')).toEqual({ n: 25 });
      });

      it('gives up after maxTransactionAttempts, and read committed loses the update', async () => {
        const strict = await connect({ maxTransactionAttempts: 1, maxConcurrentTransactions: 2 });
        await strict.exec('CREATE TABLE c (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)');
        await strict.run('INSERT INTO c VALUES (1, 0)');
        const race = async (db: SqlDatabase) => {
          const bothRead = barrier(2);
          const increment = () =>
            db.transaction(async (tx) => {
              const row = await tx.get<{ n: number }>('SELECT n FROM c WHERE id = 1');
              await bothRead();
              await tx.run('UPDATE c SET n = ? WHERE id = 1', [row!.n + 1]);
            });
          return Promise.allSettled([increment(), increment()]);
        };
        const outcomes = await race(strict);
        const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
        expect(failed).toHaveLength(1);
        expect(failed[0]!.reason).toMatchObject({ code: 'E_UNAVAILABLE', message: expect.stringContaining('(1 attempts): could not serialize access') });
        expect(await strict.get('SELECT n FROM c')).toEqual({ n: 1 });

        const loose = await connect({ isolation: 'read committed', maxConcurrentTransactions: 2 });
        expect((await race(loose)).map((o) => o.status)).toEqual(['fulfilled', 'fulfilled']);
        expect(await loose.get('SELECT n FROM c')).toEqual({ n: 2 }); // 1 + 1, not 1 + 2
      });

      it('fails a transaction whose connection dies and keeps serving from the pool', async () => {
        const db = await connect({ poolSize: 2 });
        const killer = await connect();
        const err = await db
          .transaction(async (tx) => {
            const me = await tx.get<{ pid: number }>('SELECT pg_backend_pid() AS pid');
            await killer.get('SELECT pg_terminate_backend(?)', [me!.pid]);
            await tx.get('SELECT 1');
          })
          .catch((e: unknown) => e);
        expect(err).toMatchObject({ code: 'E_UNAVAILABLE' });
        expect(await db.get('SELECT 1 AS one')).toEqual({ one: 1 });
        expect(await db.transaction((tx) => tx.get('SELECT 2 AS two'))).toEqual({ two: 2 });
      });
    });

    describe('migrations', () => {
      const steps: Migration[] = [
        { version: 1, name: 'a', up: 'CREATE TABLE a (id TEXT PRIMARY KEY, n INTEGER NOT NULL); CREATE INDEX a_n ON a (n);' },
        { version: 2, name: 'b', up: async (tx) => void (await tx.run("INSERT INTO a (id, n) VALUES ('seed', 1)")) },
        { version: 3, name: 'c', up: async (tx) => void (await tx.run("UPDATE a SET n = n + 1 WHERE id = 'seed'")) },
      ];

      it('applies each step once when two processes migrate at the same time', async () => {
        const [a, b, c] = [await connect(), await connect(), await connect()];
        const results = await Promise.all([runMigrations(a, steps), runMigrations(b, steps), runMigrations(c, steps)]);
        expect(results.flatMap((r) => r.applied).sort()).toEqual([1, 2, 3]);
        expect(results.map((r) => r.version)).toEqual([3, 3, 3]);
        expect(await a.all('SELECT * FROM a')).toEqual([{ id: 'seed', n: 2 }]);
        expect(await schemaVersion(b)).toBe(3);
      });

      it('openWarmDatabase runs the warm schema on PostgreSQL, concurrently and repeatedly', async () => {
        const options = { db: url, postgres: { searchPath: schema.name, poolSize: 2 } };
        const dbs = await Promise.all([openWarmDatabase(options), openWarmDatabase(options)]);
        open.push(...dbs);
        const latest = WARM_MIGRATIONS[WARM_MIGRATIONS.length - 1]!.version;
        expect(await schemaVersion(dbs[0]!)).toBe(latest);
        const again = await openWarmDatabase(options);
        open.push(again);
        expect(await again.all('SELECT version FROM ctxvm_migrations ORDER BY version')).toEqual(WARM_MIGRATIONS.map((m) => ({ version: m.version })));
        expect(await again.get("SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = ? AND table_name = 'snapshots'", [schema.name])).toEqual({ n: 1 });
      });
    });
  },
  { check: postgresReady },
);
