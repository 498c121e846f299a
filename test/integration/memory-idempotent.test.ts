/**
 * A message id makes processMessage idempotent across processes: the same message sent to two
 * managers at once — a client retrying a request that landed on another worker — on one SQLite
 * file and on one PostgreSQL schema. Exactly one processes it; the others are refused with
 * E_CONFLICT; one task and one pair of turns are stored.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CtxvmError } from '../../src/errors.js';
import { createMemoryManager } from '../../src/memory/manager.js';
import { createSqlMemoryStore, type SqlMemoryStore } from '../../src/memory/store/sql-memory-store.js';
import { createLruHotCache } from '../../src/store/drivers/hot-lru.js';
import { openWarmDatabase, type OpenWarmDatabaseOptions } from '../../src/store/warm/open.js';
import { createTempSchema } from '../support/postgres.js';
import { describeWithService } from '../support/services.js';

const NOW = Date.UTC(2026, 2, 10, 9, 0);

async function sameIdToTwoWorkers(options: OpenWarmDatabaseOptions): Promise<void> {
  const dbs = [await openWarmDatabase(options), await openWarmDatabase(options)];
  const stores: SqlMemoryStore[] = dbs.map((db) => createSqlMemoryStore(db));
  const hots = stores.map(() => createLruHotCache());
  const workers = stores.map((store, i) => createMemoryManager({ store, hot: hots[i]!, defaultTimeZone: 'UTC', multiProcess: true }));
  try {
    await workers[0]!.processMessage({ userId: 'ann', text: 'hello', now: NOW - 60_000 }); // the schema and index exist before the race
    const send = (i: number) =>
      workers[i % 2]!.processMessage({ userId: 'ann', text: 'remind me to renew the lease on friday', now: NOW, id: 'req-1' }).then(
        (r) => ({ ok: true as const, r }),
        (e: unknown) => ({ ok: false as const, e }),
      );
    const results = await Promise.all([0, 1, 2, 3].map(send));
    const done = results.filter((x) => x.ok);
    expect(done).toHaveLength(1);
    for (const x of results) if (!x.ok) expect(CtxvmError.is(x.e) ? x.e.code : x.e).toBe('E_CONFLICT');
    const ann = stores[1]!.forUser('ann');
    expect((await ann.listTasks()).map((t) => t.title)).toEqual([expect.stringMatching(/lease/)]);
    expect((await ann.recentTurns(10)).map((t) => t.id).filter((id) => id.startsWith('req-1'))).toEqual(['req-1', 'req-1:reply']);
    // a later retry, on either worker, is told what the first one answered
    for (const worker of workers) {
      const retry = await worker.processMessage({ userId: 'ann', text: 'remind me to renew the lease on friday', now: NOW + 5_000, id: 'req-1' }).catch((e: unknown) => e);
      expect((retry as CtxvmError).details).toMatchObject({ response: done[0]!.r.response });
    }
  } finally {
    for (const h of hots) await h.close();
    for (const s of stores) await s.close();
    for (const db of dbs) await db.close();
  }
}

describe('the same message id sent to two workers at once', () => {
  it('is processed once on SQLite', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ctxvm-idempotent-'));
    try {
      await sameIdToTwoWorkers({ db: join(dir, 'ctxvm.db') });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describeWithService('postgres', process.env.DATABASE_URL, (url) => {
  describe('the same message id sent to two workers at once', () => {
    it('is processed once on PostgreSQL', async () => {
      const schema = await createTempSchema(url, 'idempotent');
      try {
        await sameIdToTwoWorkers({ db: url, postgres: { searchPath: schema.name, poolSize: 4 } });
      } finally {
        await schema.drop();
      }
    });
  });
});
