/**
 * A message id makes processMessage idempotent across processes: the same message sent to two
 * managers at once — a client retrying a request that landed on another worker — on one SQLite
 * file and on one PostgreSQL schema. Exactly one answers it, applying it once; every other copy
 * is refused with E_CONFLICT (the warm store's claim of the id: none is taken for a retry of a
 * failed first and answered again); one task and one pair of turns are stored. A claim left by a
 * process that died is taken over, and the message answered then.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
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
/** Above Linux's pid_max (2^22): no process has it. */
const DEAD_PID = 999_999_999;

async function sameIdToTwoWorkers(options: OpenWarmDatabaseOptions): Promise<void> {
  const dbs = [await openWarmDatabase(options), await openWarmDatabase(options)];
  const stores: SqlMemoryStore[] = dbs.map((db) => createSqlMemoryStore(db));
  const hots = stores.map(() => createLruHotCache());
  const workers = stores.map((store, i) => createMemoryManager({ store, hot: hots[i]!, defaultTimeZone: 'UTC', multiProcess: true }));
  try {
    await workers[0]!.processMessage({ userId: 'ann', text: 'hello', now: NOW - 60_000 }); // the schema and index exist before the race
    // a reply that takes a while, as a real LLM's does: copies sent meanwhile find the message
    // stored and not answered yet, the moment a copy used to be taken for a retry of a failed first
    const slowReply = async () => {
      await new Promise((r) => setTimeout(r, 400));
      return 'noted: renew the lease on friday';
    };
    const send = async (i: number) => {
      await new Promise((r) => setTimeout(r, i * 60));
      return workers[i % 2]!.processMessage({ userId: 'ann', text: 'remind me to renew the lease on friday', now: NOW, id: 'req-1' }, slowReply).then(
        (r) => ({ ok: true as const, r }),
        (e: unknown) => ({ ok: false as const, e }),
      );
    };
    const results = await Promise.all([0, 1, 2, 3, 4, 5].map(send));
    // One answered it and applied it; the others were refused while it was being answered (or,
    // when it was answered before they came, with its reply)
    const done = results.flatMap((x) => (x.ok ? [x.r] : []));
    expect(done.map((r) => ({ resumed: r.resumed, applied: r.applied.length }))).toEqual([{ resumed: false, applied: 1 }]);
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

    // a claim held by a live process is respected; one whose process is gone is taken over
    const ann2 = stores[0]!.forUser('ann');
    const alive = `${hostname()}~${process.pid}~other`;
    expect(await ann2.claimMessage('req-2', alive, Date.now(), () => false)).toBe(true);
    const held = await workers[1]!.processMessage({ userId: 'ann', text: 'what is due?', id: 'req-2' }).catch((e: unknown) => e);
    expect(held).toMatchObject({ code: 'E_CONFLICT', details: { response: null } });
    await ann2.releaseMessage('req-2', alive);
    expect(await ann2.claimMessage('req-3', `${hostname()}~${DEAD_PID}~crashed`, Date.now(), () => false)).toBe(true);
    const taken = await workers[1]!.processMessage({ userId: 'ann', text: 'what is due?', id: 'req-3' });
    expect(taken.resumed).toBe(false);
    expect((await ann2.getTurns(['req-3', 'req-3:reply'])).map((t) => t.id)).toEqual(['req-3', 'req-3:reply']);
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
