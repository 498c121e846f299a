/**
 * The MemoryStore contract against the PostgreSQL warm store (tsvector full-text dialect), then
 * what only this dialect has to get right. Each test gets a fresh schema (the driver's
 * search_path), migrated by `openWarmDatabase` and dropped afterwards. Commits skip the WAL
 * flush (`synchronous_commit=off`): durability is not under test and the isolation property
 * runs thousands of write transactions.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_TERM_CHARS } from '../../src/memory/store/fulltext-postgres.js';
import { MAX_SCORED_POSTINGS } from '../../src/memory/store/fulltext-sqlite.js';
import { createSqlMemoryStore } from '../../src/memory/store/sql-memory-store.js';
import { openWarmDatabase } from '../../src/store/warm/open.js';
import type { SqlDatabase } from '../../src/store/warm/sql.js';
import { createTempSchema, postgresReady, type TempSchema } from '../support/postgres.js';
import { describeWithService } from '../support/services.js';
import { memoryStoreContract, turn } from './memory-store.contract.js';

const settings = { synchronous_commit: 'off' };
const words = (text: string) => text.split(/\s+/).filter(Boolean);

describeWithService(
  'postgres',
  process.env.DATABASE_URL,
  (url) => {
    memoryStoreContract('postgres', async ({ now }) => {
      const schema = await createTempSchema(url, 'memory');
      const db = await openWarmDatabase({ db: url, now, postgres: { searchPath: schema.name, poolSize: 4, settings } });
      const store = createSqlMemoryStore(db, { now });
      return {
        store,
        async cleanup() {
          await store.close();
          await db.close();
          await schema.drop();
        },
      };
    });

    describe('PostgreSQL full-text dialect', () => {
      let schema: TempSchema | undefined;
      const open: SqlDatabase[] = [];
      const connect = async () => {
        schema ??= await createTempSchema(url, 'fts');
        const db = await openWarmDatabase({ db: url, postgres: { searchPath: schema.name, poolSize: 2, settings } });
        open.push(db);
        return db;
      };
      afterEach(async () => {
        for (const db of open.splice(0)) await db.close();
        await schema?.drop();
        schema = undefined;
      });

      it('builds its column and index once when two processes start searching at once', async () => {
        const [a, b] = [await connect(), await connect()];
        const hits = await Promise.all([createSqlMemoryStore(a).forUser('u').search('x'), createSqlMemoryStore(b).forUser('u').search('x')]);
        expect(hits).toEqual([[], []]);
        expect(await a.all("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'memory_search_terms'")).toHaveLength(1);
      });

      it('matches analyzer terms exactly, whatever characters they hold', async () => {
        const store = createSqlMemoryStore(await connect(), { analyzer: words });
        const u = store.forUser('alice');
        await u.addTurns([turn('t1', "c++ node.js it's a\\b x:y 'q' É", 1), turn('t2', 'c node js', 2)]);
        for (const term of ['c++', 'node.js', "it's", 'a\\b', 'x:y', "'q'", 'É']) {
          expect((await u.search(term)).map((h) => h.id), term).toEqual(['t1']);
        }
        expect((await u.search('c')).map((h) => h.id)).toEqual(['t2']);
        expect(await u.search('é')).toEqual([]); // terms.ts folds ASCII only, as the SQLite dialect does
        expect(await store.forUser('bob').search('c++')).toEqual([]);
      });

      it('answers a query of common terms with the newest documents holding them all, then any', async () => {
        const u = createSqlMemoryStore(await connect(), { analyzer: words }).forUser('alice');
        const n = 2 * MAX_SCORED_POSTINGS + 200;
        await u.addTurns(Array.from({ length: n }, (_, i) => turn(`c${i}`, i % 2 ? 'common other' : 'common', i)));
        await u.addTurns([turn('rare', 'common rare', n)]);
        expect((await u.search('common rare'))[0]?.id).toBe('rare');
        const common = await u.search('common other', { limit: 5 });
        expect(common.map((h) => h.id)).toEqual([`c${n - 1}`, `c${n - 3}`, `c${n - 5}`, `c${n - 7}`, `c${n - 9}`]);
        for (const h of common) expect(h.score).toBeGreaterThan(0);
        expect(common.map((h) => h.score)).toEqual([...common.map((h) => h.score)].sort((a, b) => b - a));
        expect((await u.search('common', { limit: 3 })).map((h) => h.id)).toEqual(['rare', `c${n - 1}`, `c${n - 2}`]);
        expect(await u.search('common', { kinds: ['task'] })).toEqual([]);
      });

      it('rebuilds a missing index from the stored terms', async () => {
        const db = await connect();
        const first = createSqlMemoryStore(db).forUser('alice');
        await first.addTurns([turn('t1', '下班前把周报发给我', 0)]);
        await first.createTask({ title: '写周报' });
        await db.exec('DROP INDEX memory_search_terms; ALTER TABLE memory_search DROP COLUMN terms_vector;');
        const again = createSqlMemoryStore(db).forUser('alice');
        expect((await again.search('周报')).map((h) => h.kind).sort()).toEqual(['task', 'turn']);
      });

      it('leaves over-long terms out of the index instead of failing the write', async () => {
        const db = await connect();
        const u = createSqlMemoryStore(db, { analyzer: words }).forUser('alice');
        // 3 000 bytes: over PostgreSQL's lexeme limit, so indexing it would fail the insert
        const long = '长'.repeat(1000);
        await u.addTurns([turn('t1', `${long} 周报 ${'长'.repeat(MAX_TERM_CHARS + 1)} ${'x'.repeat(MAX_TERM_CHARS)}`, 1)]);
        expect((await u.search('周报')).map((h) => h.id)).toEqual(['t1']);
        expect((await u.search('x'.repeat(MAX_TERM_CHARS))).map((h) => h.id)).toEqual(['t1']);
        expect(await u.search(long)).toEqual([]);
        expect(await db.get('SELECT length(terms_vector) AS n FROM memory_search')).toEqual({ n: 2 });
      });
    });
  },
  { check: postgresReady },
);
