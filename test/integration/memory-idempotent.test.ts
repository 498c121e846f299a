/**
 * A message id makes processMessage idempotent across processes: the same message sent to two
 * managers at once — a client retrying a request that landed on another worker — on one SQLite
 * file and on one PostgreSQL schema. Exactly one applies it; the others are refused with
 * E_CONFLICT or, finding it stored but not yet answered, answer it without applying it; one task
 * and one pair of turns are stored, and every answer given is the stored reply.
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
    // One applied it. A copy that found it stored but not yet answered answered it too, applying
    // nothing (resumed); one that raced the store itself was refused.
    const done = results.flatMap((x) => (x.ok ? [x.r] : []));
    expect(done.filter((r) => !r.resumed).map((r) => r.applied.length)).toEqual([1]);
    for (const r of done.filter((d) => d.resumed)) expect(r.applied).toEqual([]);
    for (const x of results) if (!x.ok) expect(CtxvmError.is(x.e) ? x.e.code : x.e).toBe('E_CONFLICT');
    const ann = stores[1]!.forUser('ann');
    expect((await ann.listTasks()).map((t) => t.title)).toEqual([expect.stringMatching(/lease/)]);
    const turns = (await ann.recentTurns(10)).filter((t) => t.id.startsWith('req-1'));
    expect(turns.map((t) => t.id)).toEqual(['req-1', 'req-1:reply']);
    // every answer given is the one stored
    for (const r of done) expect(r.response).toBe(turns[1]!.text);
    // a later retry, on either worker, is told what was answered
    for (const worker of workers) {
      const retry = await worker.processMessage({ userId: 'ann', text: 'remind me to renew the lease on friday', now: NOW + 5_000, id: 'req-1' }).catch((e: unknown) => e);
      expect((retry as CtxvmError).details).toMatchObject({ response: turns[1]!.text });
    }
  } finally {
    for (const h of hots) await h.close();
    for (const s of stores) await s.close();
    for (const db of dbs) await db.close();
  }
}

describe('the same message id sent to two workers at once', () => {
  it('is applied once on SQLite', async () => {
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
    it('is applied once on PostgreSQL', async () => {
      const schema = await createTempSchema(url, 'idempotent');
      try {
        await sameIdToTwoWorkers({ db: url, postgres: { searchPath: schema.name, poolSize: 4 } });
      } finally {
        await schema.drop();
      }
    });
  });
});
