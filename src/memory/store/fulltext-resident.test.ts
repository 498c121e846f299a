import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openWarmDatabase } from '../../store/warm/open.js';
import type { SqlDatabase } from '../../store/warm/sql.js';
import type { SearchHit, SearchOptions, UserMemoryStore } from '../memory-store.js';
import type { SqliteFullTextOptions } from './fulltext-sqlite.js';
import { MAX_SCORED_POSTINGS } from './fulltext-terms.js';
import { FTS_ONLY, turn, useTempDatabase, words } from './store-test-kit.js';
import { createSqlMemoryStore } from './sql-memory-store.js';

const temp = useTempDatabase('ctxvm-resident-');
const store = (fullText?: SqliteFullTextOptions, on: SqlDatabase = temp.db) => createSqlMemoryStore(on, { analyzer: words, ...(fullText ? { fullText } : {}) });
const ids = (hits: readonly SearchHit[]) => hits.map((h) => h.id);
/** Statements that read FTS5 (a MATCH), through a spy on `db`. */
function spied(): { db: SqlDatabase; matches: () => number } {
  const seen: string[] = [];
  const spy: SqlDatabase = { ...temp.db, all: (sql, p) => (seen.push(sql), temp.db.all(sql, p)), get: (sql, p) => (seen.push(sql), temp.db.get(sql, p)) };
  return { db: spy, matches: () => seen.filter((sql) => sql.includes('MATCH')).length };
}
const ftsRowsOf = async (userId: string) =>
  (await temp.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM memory_search_fts f JOIN memory_search d ON d.doc_id = f.rowid WHERE d.user_id = ?', [userId]))!.n;

/** A user's mixed documents over a small vocabulary: many BM25 ties. */
async function fill(u: UserMemoryStore): Promise<void> {
  const vocabulary = ['alpha', 'beta', 'gamma', 'delta', 'eps'];
  const text = (i: number) => vocabulary.filter((_, k) => (i >> k) % 2 === 1 || k === i % 5).join(' ');
  await u.addTurns(Array.from({ length: 40 }, (_, i) => turn(`t${i}`, `${text(i)} ${i % 7 === 0 ? 'alpha alpha' : ''}`, i)));
  for (let i = 0; i < 30; i++) {
    if (i % 3 === 0) await u.createTask({ title: text(i * 7) });
    else if (i % 3 === 1) await u.addDecision({ text: text(i * 5) });
    else await u.setFact({ kind: 'fact', key: `k${i}`, text: text(i * 3) });
  }
}

describe('SQLite full-text index, resident tier', () => {
  it('ranks as FTS5 does over the same documents: same hits, same order of ties, same scores', async () => {
    // Two users, both admitted to FTS5 by the FTS5 store's searches: its BM25 counts every
    // document it holds, the resident index the same statistics (memory_search_stats).
    await fill(store().forUser('alice'));
    await store().forUser('bob').addTurns(Array.from({ length: 25 }, (_, i) => turn(`b${i}`, i % 3 ? 'alpha zeta zeta' : 'beta', i)));
    await store(FTS_ONLY).forUser('bob').search('zeta');
    const resident = spied();
    const viaResident = store(undefined, resident.db).forUser('alice');
    const viaFts = store(FTS_ONLY).forUser('alice');
    let compared = 0;
    for (const query of ['alpha', 'beta gamma', 'eps delta alpha', 'gamma', 'alpha beta gamma delta eps', 'absent', 'absent beta']) {
      for (const limit of [1, 3, 7, 50]) {
        const searches: SearchOptions[] = [{ kinds: ['task', 'decision', 'fact'], limit }, { kinds: ['turn'], limit: limit + 1 }, {}];
        const got = await viaResident.searchMany!(query, searches);
        const want = await viaFts.searchMany!(query, searches);
        for (const [i, hits] of got.entries()) {
          expect(ids(hits)).toEqual(ids(want[i]!));
          for (const [k, h] of hits.entries()) expect(h.score).toBeCloseTo(want[i]![k]!.score, 9);
          compared += hits.length;
        }
      }
    }
    expect(compared).toBeGreaterThan(500);
    expect(resident.matches()).toBe(0); // FTS5 never read
    expect(await ftsRowsOf('alice')).toBeGreaterThan(0); // the FTS5 store's searches admitted alice
  });

  it('answers a query of common terms with the newest documents holding them all, then any, as FTS5 does', async () => {
    const u = store().forUser('alice');
    const n = 2 * MAX_SCORED_POSTINGS + 200;
    await u.addTurns(Array.from({ length: n }, (_, i) => turn(`c${i}`, i % 2 ? 'common other' : 'common', i)));
    await u.addTurns([turn('rare', 'common rare', n)]);
    const fts = store(FTS_ONLY).forUser('alice');
    const asked: Array<[string, SearchOptions]> = [['common rare', {}], ['common other', { limit: 5 }], ['common', { limit: 3 }], ['common', { kinds: ['task'] }]];
    for (const [query, options] of asked) expect(await u.search(query, options)).toEqual(await fts.search(query, options));
    expect(ids(await u.search('common other', { limit: 3 }))).toEqual([`c${n - 1}`, `c${n - 3}`, `c${n - 5}`]);
  });

  it('keeps the statistics of all users in step with the table through inserts, changes and deletes', async () => {
    const u = store().forUser('alice');
    await fill(u);
    const task = await u.createTask({ title: 'one two three' });
    await u.updateTask(task.id, { title: 'four' });
    await u.addTurns([turn('empty', '', 99)]);
    await store().forUser('bob').addTurns([turn('b', 'x y', 0)]);
    await u.deleteTask(task.id);
    const recount = await temp.db.get(`SELECT COUNT(*) AS docs, SUM(CASE WHEN tokens = '' THEN 0 ELSE length(tokens) - length(replace(tokens, ' ', '')) + 1 END) AS terms FROM memory_search`);
    expect(await temp.db.get('SELECT docs, terms FROM memory_search_stats')).toEqual(recount);
    expect((recount as { docs: number }).docs).toBe(72);
  });

  it('sees what another store handle writes: new documents, changed ones, deleted ones', async () => {
    const reader = store().forUser('alice');
    const writer = store().forUser('alice');
    await writer.addTurns([turn('t1', 'kiwi mango', 0)]);
    expect(ids(await reader.search('kiwi'))).toEqual(['t1']);
    // new
    const task = await writer.createTask({ title: 'buy kiwi' });
    expect(ids(await reader.search('kiwi')).sort()).toEqual(['t1', task.id].sort());
    // changed: the old terms are gone, the new ones found
    await writer.updateTask(task.id, { title: 'buy papaya' });
    expect(ids(await reader.search('kiwi'))).toEqual(['t1']);
    expect(ids(await reader.search('papaya'))).toEqual([task.id]);
    const fact = await writer.setFact({ kind: 'fact', key: 'fruit', text: 'likes kiwi' });
    await writer.setFact({ kind: 'fact', key: 'fruit', text: 'likes lychee' });
    expect(ids(await reader.search('lychee'))).toEqual([fact.id]);
    expect(ids(await reader.search('kiwi'))).toEqual(['t1']);
    // deleted
    expect(await writer.deleteTask(task.id)).toBe(true);
    expect(await reader.search('papaya')).toEqual([]);
    // and another user's documents never show
    await store().forUser('bob').addTurns([turn('b1', 'kiwi', 1)]);
    expect(ids(await reader.search('kiwi'))).toEqual(['t1']);
  });

  it('sees what another connection to the file commits (another process), in commit order', async () => {
    const other = await openWarmDatabase({ db: join(temp.dir, 'ctxvm.db') });
    try {
      const reader = store().forUser('alice');
      const writer = store(undefined, other).forUser('alice');
      await writer.addTurns([turn('t1', 'kiwi', 0)]);
      expect(ids(await reader.search('kiwi'))).toEqual(['t1']);
      const task = await writer.createTask({ title: 'kiwi task' });
      await writer.updateTask(task.id, { title: 'mango task' });
      await writer.addTurns([turn('t2', 'kiwi mango', 1)]);
      expect(ids(await reader.search('mango')).sort()).toEqual([task.id, 't2'].sort());
      expect(ids(await reader.search('kiwi')).sort()).toEqual(['t1', 't2']);
      await writer.deleteTask(task.id);
      expect(ids(await reader.search('mango'))).toEqual(['t2']);
    } finally {
      await other.close();
    }
  });

  it('admits a user to FTS5 once they hold more documents than the limit, with the same hits', async () => {
    const limits: SqliteFullTextOptions = { resident: { maxUserDocs: 5 } };
    const small = store(limits).forUser('alice');
    await small.addTurns(Array.from({ length: 4 }, (_, i) => turn(`t${i}`, `kiwi ${'x'.repeat(i + 1)}`, i)));
    expect(ids(await small.search('kiwi'))).toHaveLength(4);
    expect(await ftsRowsOf('alice')).toBe(0); // nothing written to FTS5 for a resident user
    await small.addTurns(Array.from({ length: 4 }, (_, i) => turn(`u${i}`, `kiwi mango ${i}`, 10 + i)));
    const spy = spied();
    const hits = await store(limits, spy.db).forUser('alice').search('kiwi mango');
    expect(spy.matches()).toBeGreaterThan(0); // answered by FTS5
    expect(await ftsRowsOf('alice')).toBe(8); // admitted: every document filled in
    expect(ids(hits)).toEqual(ids(await store().forUser('alice').search('kiwi mango'))); // same hits as a resident index (alone in FTS5: same statistics)
    await small.addTurns([turn('v', 'kiwi', 20)]);
    expect(await ftsRowsOf('alice')).toBe(9); // the triggers keep it from then on
    expect(await ftsRowsOf('bob')).toBe(0);
  });

  it('searches inside a transaction see its own writes, which stay out of the shared index if it rolls back', async () => {
    const s = createSqlMemoryStore(temp.db, { analyzer: words });
    const u = s.forUser('alice');
    await u.addTurns([turn('t1', 'kiwi', 0)]);
    expect(ids(await u.search('kiwi'))).toEqual(['t1']);
    await expect(
      u.atomically!(async (tx) => {
        await tx.addTurns([turn('t2', 'kiwi', 1)]);
        expect(ids(await tx.search('kiwi')).sort()).toEqual(['t1', 't2']);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(ids(await u.search('kiwi'))).toEqual(['t1']);
    // the rolled-back document's doc_id is taken again by the next write: it must be found
    await u.addTurns([turn('t3', 'kiwi', 2)]);
    expect(ids(await u.search('kiwi')).sort()).toEqual(['t1', 't3']);
  });

  it('drops the least recently searched users past the postings budget and reads them again', async () => {
    const s = createSqlMemoryStore(temp.db, { analyzer: words, fullText: { resident: { maxPostings: 30 } } });
    for (let u = 0; u < 6; u++) await s.forUser(`u${u}`).addTurns(Array.from({ length: 5 }, (_, i) => turn(`t${i}`, `kiwi u${u} n${i}`, i)));
    for (let round = 0; round < 2; round++) {
      for (let u = 0; u < 6; u++) {
        const hits = await s.forUser(`u${u}`).search(`kiwi u${u}`);
        expect(ids(hits).sort()).toEqual(['t0', 't1', 't2', 't3', 't4']);
      }
    }
  });
});

describe('SQLite full-text layout', () => {
  it('moves a database of the layout before resident indexes: every user stays in FTS5, kept in step', async () => {
    const u = store().forUser('alice');
    await u.addTurns([turn('t1', 'kiwi', 0)]);
    await store().forUser('bob').addTurns([turn('b1', 'kiwi mango', 0)]);
    // the old layout: FTS5 holding everyone's documents, unconditional triggers, no users table
    await temp.db.exec(`
      DROP TRIGGER memory_search_fts_ai; DROP TRIGGER memory_search_fts_ad; DROP TRIGGER memory_search_fts_au; DROP TRIGGER memory_search_epoch_ad;
      DROP TRIGGER memory_search_stats_ai; DROP TRIGGER memory_search_stats_au;
      DROP TABLE memory_search_fts_users; DROP TABLE memory_search_epochs; DROP TABLE memory_search_stats; DROP INDEX memory_search_user_doc;
      DELETE FROM memory_search_fts;
      INSERT INTO memory_search_fts (rowid, tokens) SELECT doc_id, user_key || replace(tokens, ' ', ' ' || user_key) FROM memory_search;
      CREATE TRIGGER memory_search_ai AFTER INSERT ON memory_search BEGIN
        INSERT INTO memory_search_fts (rowid, tokens) VALUES (new.doc_id, new.user_key || replace(new.tokens, ' ', ' ' || new.user_key));
      END;
      CREATE TRIGGER memory_search_ad AFTER DELETE ON memory_search BEGIN DELETE FROM memory_search_fts WHERE rowid = old.doc_id; END;
      CREATE TRIGGER memory_search_au AFTER UPDATE ON memory_search BEGIN DELETE FROM memory_search_fts WHERE rowid = old.doc_id; END;`);
    const moved = store(FTS_ONLY).forUser('alice');
    expect(ids(await moved.search('kiwi'))).toEqual(['t1']);
    const triggers = (await temp.db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")).map((r) => r.name);
    expect(triggers).toEqual(['memory_search_epoch_ad', 'memory_search_fts_ad', 'memory_search_fts_ai', 'memory_search_fts_au', 'memory_search_stats_ai', 'memory_search_stats_au']);
    expect(await temp.db.get('SELECT docs, terms FROM memory_search_stats')).toEqual({ docs: 2, terms: 3 });
    expect((await temp.db.all<{ user_id: string }>('SELECT user_id FROM memory_search_fts_users ORDER BY user_id')).map((r) => r.user_id)).toEqual(['alice', 'bob']);
    await moved.addTurns([turn('t2', 'kiwi', 1)]);
    expect(await ftsRowsOf('alice')).toBe(2);
    expect(ids(await moved.search('kiwi')).sort()).toEqual(['t1', 't2']);
    expect(ids(await store().forUser('bob').search('mango'))).toEqual(['b1']);
  });
});
