/**
 * `atomically`'s writes on real databases (SQLite file, PostgreSQL schema): a write inside that
 * fails — even one the caller catches, even one that did half its work — rolls the whole unit
 * back, and nothing more runs in it; without a failure every write commits together.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bindToTransaction } from '../../src/memory/store/atomic.js';
import { openWarmDatabase } from '../../src/store/warm/open.js';
import type { SqlDatabase } from '../../src/store/warm/sql.js';
import { createTempSchema } from '../support/postgres.js';
import { describeWithService } from '../support/services.js';

async function failedWriteDecidesTheUnit(db: SqlDatabase): Promise<void> {
  await db.exec('CREATE TABLE atomic_probe (id INTEGER PRIMARY KEY, note TEXT NOT NULL)');
  await db.run('INSERT INTO atomic_probe (id, note) VALUES (1, ?)', ['before']);
  const failure = new Error('the write failed halfway');
  let refused: unknown;
  const outcome = db.transaction(async (tx) => {
    const unit = bindToTransaction(db, tx);
    await unit.db.transaction((t) => t.run('INSERT INTO atomic_probe (id, note) VALUES (2, ?)', ['first write']));
    // a write that did part of its work, then failed in the database
    await unit.db
      .transaction(async (t) => {
        await t.run('INSERT INTO atomic_probe (id, note) VALUES (3, ?)', ['half of a write']);
        await t.run('INSERT INTO atomic_probe (id, note) VALUES (1, ?)', ['duplicate key']);
      })
      .catch(() => undefined); // the caller swallows it...
    refused = await unit.db.run('INSERT INTO atomic_probe (id, note) VALUES (4, ?)', ['later']).catch((e: unknown) => e);
    // ...or a write throws on its own
    await unit.db
      .transaction(async () => {
        throw failure;
      })
      .catch(() => undefined);
    unit.check(); // the unit still fails, with the first failure
  });
  await expect(outcome).rejects.toBeDefined();
  expect(refused).toMatchObject({ code: 'E_USAGE' });
  expect((await db.all<{ id: number; note: string }>('SELECT id, note FROM atomic_probe ORDER BY id')).map((r) => [Number(r.id), r.note])).toEqual([[1, 'before']]);

  // without a failure, the unit commits every write
  await db.transaction(async (tx) => {
    const unit = bindToTransaction(db, tx);
    await unit.db.transaction((t) => t.run('INSERT INTO atomic_probe (id, note) VALUES (2, ?)', ['kept']));
    await unit.db.transaction((t) => t.run('INSERT INTO atomic_probe (id, note) VALUES (3, ?)', ['kept too']));
    unit.check();
  });
  expect((await db.all('SELECT id FROM atomic_probe')).length).toBe(3);
}

describe('atomically on SQLite', () => {
  it('rolls the unit back when a write inside fails, even if the caller caught it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ctxvm-atomic-'));
    const db = await openWarmDatabase({ db: join(dir, 'ctxvm.db') });
    try {
      await failedWriteDecidesTheUnit(db);
    } finally {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describeWithService('postgres', process.env.DATABASE_URL, (url) => {
  describe('atomically on PostgreSQL', () => {
    it('rolls the unit back when a write inside fails, even if the caller caught it', async () => {
      const schema = await createTempSchema(url, 'atomic');
      const db = await openWarmDatabase({ db: url, postgres: { searchPath: schema.name, poolSize: 2 } });
      try {
        await failedWriteDecidesTheUnit(db);
      } finally {
        await db.close();
        await schema.drop();
      }
    });
  });
});
