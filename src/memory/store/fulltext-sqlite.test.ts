import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openWarmDatabase } from '../../store/warm/open.js';
import type { SqlDatabase } from '../../store/warm/sql.js';
import { chooseTerms, createSqliteFullText, fts5Quote, MAX_SCORED_POSTINGS } from './fulltext-sqlite.js';
import { userKeyOf } from './context.js';
import { FTS_ONLY, turn, useTempDatabase, words } from './store-test-kit.js';
import { createSqlMemoryStore, openMemoryStore } from './sql-memory-store.js';

const temp = useTempDatabase('ctxvm-fts-');

describe('choosing query terms', () => {
  it('keeps the rarest terms within the postings budget and drops absent ones', () => {
    const df = new Map([['"common"', 900], ['"rare"', 3], ['"absent"', 0], ['"mid"', 200]]);
    expect(chooseTerms(df, 1000)).toEqual({ terms: ['"rare"', '"mid"'], newestOnly: false });
    expect(chooseTerms(df, 2000)).toEqual({ terms: ['"rare"', '"mid"', '"common"'], newestOnly: false });
    expect(chooseTerms(new Map([['"a"', 0]]))).toEqual({ terms: [], newestOnly: false });
    expect(chooseTerms(new Map([['"b"', 1001], ['"a"', 1001]]), 1000)).toEqual({ terms: ['"a"', '"b"'], newestOnly: true });
  });

  it('quotes terms so nothing in them is syntax', () => {
    expect(fts5Quote('a"b')).toBe('"a""b"');
    expect(fts5Quote('NEAR(')).toBe('"NEAR("');
  });
});

describe('SQLite full-text index, FTS5 tier', () => {
  it('answers a query of common terms with the newest documents holding them all, then any', async () => {
    const u = createSqlMemoryStore(temp.db, { analyzer: words, fullText: FTS_ONLY }).forUser('alice');
    const n = 2 * MAX_SCORED_POSTINGS + 200;
    await u.addTurns(Array.from({ length: n }, (_, i) => turn(`c${i}`, i % 2 ? 'common other' : 'common', i)));
    await u.addTurns([turn('rare', 'common rare', n)]);
    const rare = await u.search('common rare');
    expect(rare[0]?.id).toBe('rare');
    const common = await u.search('common other', { limit: 5 });
    // both terms are in more documents than the budget: newest holding both first
    expect(common.map((h) => h.id)).toEqual([`c${n - 1}`, `c${n - 3}`, `c${n - 5}`, `c${n - 7}`, `c${n - 9}`]);
    for (const h of common) expect(h.score).toBeGreaterThan(0);
    expect(common.map((h) => h.score)).toEqual([...common.map((h) => h.score)].sort((a, b) => b - a));
    const any = await u.search('common', { limit: 3 });
    expect(any.map((h) => h.id)).toEqual(['rare', `c${n - 1}`, `c${n - 2}`]);
    expect(await u.search('common', { kinds: ['task'] })).toEqual([]);
  });

  it('answers the searches of one searchMany in the order and with the scores of FTS5 rank', async () => {
    const u = createSqlMemoryStore(temp.db, { analyzer: words, fullText: FTS_ONLY }).forUser('alice');
    const vocabulary = ['alpha', 'beta', 'gamma', 'delta', 'eps'];
    // Short texts over a small vocabulary: many documents tie on BM25.
    const text = (i: number) => vocabulary.filter((_, k) => (i >> k) % 2 === 1 || k === i % 5).join(' ');
    await u.addTurns(Array.from({ length: 40 }, (_, i) => turn(`t${i}`, text(i), i)));
    for (let i = 0; i < 30; i++) {
      if (i % 3 === 0) await u.createTask({ title: text(i * 7) });
      else if (i % 3 === 1) await u.addDecision({ text: text(i * 5) });
      else await u.setFact({ kind: 'fact', key: `k${i}`, text: text(i * 3) });
    }
    await createSqlMemoryStore(temp.db, { analyzer: words, fullText: FTS_ONLY }).forUser('bob').addTurns([turn('b1', 'alpha beta', 0)]);
    const key = userKeyOf('alice');
    // FTS5's own ranking, one statement per search (how searches were answered before searchMany shared one).
    const reference = async (query: string, kinds: readonly string[], limit: number) => {
      const match = [...new Set(words(query))].map((t) => fts5Quote(key + t)).join(' OR ');
      const rows = await temp.db.all<{ kind: string; record_id: string; rank: number }>(
        `SELECT d.kind AS kind, d.record_id AS record_id, f.rank AS rank FROM memory_search_fts f CROSS JOIN memory_search d ON d.doc_id = f.rowid
          WHERE memory_search_fts MATCH ? AND d.user_id = ? AND d.kind IN (${kinds.map(() => '?').join(', ')}) ORDER BY f.rank LIMIT ?`,
        [match, 'alice', ...kinds, limit],
      );
      return rows.map((r) => ({ kind: r.kind, id: r.record_id, score: -r.rank }));
    };
    let tied = 0;
    for (const query of ['alpha', 'beta gamma', 'eps delta alpha', 'gamma', 'alpha beta gamma delta eps']) {
      for (const limit of [1, 3, 7, 50]) {
        const searches = [{ kinds: ['task', 'decision', 'fact'] as const, limit }, { kinds: ['turn'] as const, limit: limit + 1 }, { kinds: ['decision'] as const, limit }];
        const got = await u.searchMany!(query, searches.map((s) => ({ kinds: [...s.kinds], limit: s.limit })));
        for (const [i, s] of searches.entries()) {
          const want = await reference(query, s.kinds, s.limit);
          expect(got[i]).toEqual(want);
          if (new Set(want.map((h) => h.score)).size < want.length) tied++;
        }
        expect(await u.search(query, { kinds: ['turn'], limit })).toEqual(await reference(query, ['turn'], limit));
      }
    }
    expect(tied).toBeGreaterThan(10);
  });

  it('counts term frequencies only for a user with enough documents to go over the budget, with the same hits either way', async () => {
    const statements: string[] = [];
    const spied: SqlDatabase = { ...temp.db, get: (sql, params) => (statements.push(sql), temp.db.get(sql, params)) };
    const store = createSqlMemoryStore(spied, { analyzer: words, fullText: FTS_ONLY });
    const text = (i: number) => ['alpha', 'beta', 'gamma', 'delta'].filter((_, k) => (i >> k) % 2 === 1).join(' ') || 'zeta';
    const counted = () => statements.filter((sql) => sql.includes('MATCH')).length;
    const query = 'alpha beta gamma absent';
    // light: 40 documents * 4 terms <= the budget; heavy: the same 40 and 300 more without these
    // terms, 340 * 4 > the budget. Their matching documents are the same, so are their hits.
    const light = store.forUser('light');
    const heavy = store.forUser('heavy');
    await light.addTurns(Array.from({ length: 40 }, (_, i) => turn(`l${i}`, text(i), i)));
    await heavy.addTurns(Array.from({ length: 40 }, (_, i) => turn(`l${i}`, text(i), i)));
    await heavy.addTurns(Array.from({ length: 300 }, (_, i) => turn(`z${i}`, 'zeta', 40 + i)));
    // first searches admit both users to FTS5 (its BM25 counts every document it holds)
    await light.search('zeta');
    await heavy.search('zeta');
    statements.length = 0;
    const lightHits = await light.search(query, { limit: 50 });
    expect(counted()).toBe(0); // nothing counted in the index
    const heavyHits = await heavy.search(query, { limit: 50 });
    expect(counted()).toBe(1);
    expect(lightHits.length).toBe(35); // the documents holding alpha, beta or gamma
    expect(heavyHits).toEqual(lightHits);
  });

  it('counts a user’s terms once between two changes of their documents, with the hits of a fresh count', async () => {
    const statements: string[] = [];
    const spied: SqlDatabase = { ...temp.db, get: (sql, params) => (statements.push(sql), temp.db.get(sql, params)) };
    const store = createSqlMemoryStore(spied, { analyzer: words, fullText: FTS_ONLY });
    const u = store.forUser('alice');
    const counted = () => statements.filter((sql) => sql.includes('MATCH')).length;
    // 400 documents * 3 terms > the budget: the terms are counted
    await u.addTurns(Array.from({ length: 400 }, (_, i) => turn(`t${i}`, i % 3 ? 'alpha zeta' : 'beta zeta', i)));
    const task = await u.createTask({ title: 'alpha beta' });
    const query = 'alpha beta gamma';
    // A store of its own over the same database, made per search: nothing kept from before.
    const fresh = () => createSqlMemoryStore(temp.db, { analyzer: words, fullText: FTS_ONLY }).forUser('alice').search(query, { limit: 20 });
    const search = async () => {
      statements.length = 0;
      const hits = await u.search(query, { limit: 20 });
      expect(hits).toEqual(await fresh());
      return counted();
    };
    expect(await search()).toBe(1);
    expect(await search()).toBe(0); // nothing changed: the counts are kept
    await u.addTurns([turn('g', 'gamma', 500)]); // a new document
    expect(await search()).toBe(1);
    expect(await search()).toBe(0);
    await u.updateTask(task.id, { title: 'gamma only' }); // a changed one
    expect(await search()).toBe(1);
    await u.deleteTask(task.id); // a deleted one
    expect(await search()).toBe(1);
    expect(await search()).toBe(0);
    // another store's write moves the user's documents as well
    await createSqlMemoryStore(temp.db, { analyzer: words, fullText: FTS_ONLY }).forUser('alice').addTurns([turn('g2', 'gamma beta', 501)]);
    expect(await search()).toBe(1);
  });

  it('reads where a user’s documents stand only for terms the query has not counted yet', async () => {
    const statements: string[] = [];
    const spied: SqlDatabase = { ...temp.db, get: (sql, params) => (statements.push(sql), temp.db.get(sql, params)) };
    // 400 documents * 3 terms > the budget: the terms are counted
    await createSqlMemoryStore(temp.db, { analyzer: words, fullText: FTS_ONLY }).forUser('alice').addTurns(Array.from({ length: 400 }, (_, i) => turn(`t${i}`, i % 3 ? 'alpha zeta' : 'beta zeta', i)));
    const dialect = createSqliteFullText(FTS_ONLY);
    await dialect.ensure(temp.db);
    const q = { userId: 'alice', userKey: userKeyOf('alice'), terms: ['alpha', 'beta', 'gamma'], kinds: undefined, limit: 20, frequencies: new Map<string, number>() };
    const read = (what: string) => statements.filter((sql) => sql.includes(what)).length;
    const first = await dialect.search(spied, q);
    expect([read('MATCH'), read('memory_search_epochs')]).toEqual([1, 1]);
    statements.length = 0;
    // (the searches of one query share `frequencies`: every term is counted in it now)
    expect(await dialect.search(spied, q)).toEqual(first);
    expect([read('MATCH'), read('memory_search_epochs')]).toEqual([0, 0]);
  });

  it('uses the given analyzer for both the index and queries', async () => {
    const bigrams = (text: string) => Array.from({ length: Math.max(0, text.length - 1) }, (_, i) => text.slice(i, i + 2));
    const u = createSqlMemoryStore(temp.db, { analyzer: bigrams, fullText: FTS_ONLY }).forUser('alice');
    await u.addTurns([turn('t1', 'abcdef', 0), turn('t2', 'xyz', 1)]);
    expect((await u.search('zcde')).map((h) => h.id)).toEqual(['t1']);
    expect((await u.search('xy')).map((h) => h.id)).toEqual(['t2']);
  });

  it('rebuilds a missing index from the stored terms', async () => {
    const first = createSqlMemoryStore(temp.db, { fullText: FTS_ONLY }).forUser('alice');
    await first.addTurns([turn('t1', '下班前把周报发给我', 0)]);
    await first.createTask({ title: '写周报' });
    expect((await first.search('周报')).length).toBe(2); // admits alice to FTS5
    await temp.db.exec('DROP TABLE memory_search_fts; DROP TRIGGER memory_search_fts_ai; DROP TRIGGER memory_search_fts_ad; DROP TRIGGER memory_search_fts_au;');
    const again = createSqlMemoryStore(temp.db, { fullText: FTS_ONLY }).forUser('alice');
    expect((await again.search('周报')).map((h) => h.kind).sort()).toEqual(['task', 'turn']);
    expect(await temp.db.get('SELECT COUNT(*) AS n FROM memory_search_fts')).toEqual({ n: 2 });
  });

  it('closes the database only when it opened it', async () => {
    const shared = createSqlMemoryStore(temp.db);
    expect(shared.driver).toBe('sqlite');
    await shared.close();
    await shared.close();
    expect(await temp.db.get('SELECT 1 AS one')).toEqual({ one: 1 });
    const owned = await openMemoryStore({ db: join(temp.dir, 'own.db') });
    await owned.forUser('a').addTurns([turn('t', 'x', 0)]);
    await owned.close();
    await expect(owned.forUser('a').countTurns()).rejects.toMatchObject({ code: 'E_USAGE' });
  });
});
