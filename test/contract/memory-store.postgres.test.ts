/**
 * The MemoryStore contract against the PostgreSQL warm store (tsvector full-text dialect). Each
 * test gets a fresh schema (the driver's search_path), migrated by `openWarmDatabase`.
 */
import { createSqlMemoryStore } from '../../src/memory/store/sql-memory-store.js';
import { openWarmDatabase } from '../../src/store/warm/open.js';
import { createTempSchema, postgresReady } from '../support/postgres.js';
import { describeWithService } from '../support/services.js';
import { memoryStoreContract } from './memory-store.contract.js';

describeWithService(
  'postgres',
  process.env.DATABASE_URL,
  (url) => {
    memoryStoreContract('postgres', async ({ now }) => {
      const schema = await createTempSchema(url, 'memory');
      const db = await openWarmDatabase({ db: url, now, postgres: { searchPath: schema.name, poolSize: 4, settings: { synchronous_commit: 'off' } } });
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
  },
  { check: postgresReady },
);
