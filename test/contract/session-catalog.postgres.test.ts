/**
 * The SessionCatalog contract against the PostgreSQL warm store. Each test gets a fresh schema
 * (the driver's search_path), migrated by `openWarmDatabase` and dropped afterwards.
 */
import { createSqlSessionCatalog } from '../../src/session/dag/sql-catalog.js';
import { openWarmDatabase } from '../../src/store/warm/open.js';
import { createTempSchema, postgresReady } from '../support/postgres.js';
import { describeWithService } from '../support/services.js';
import { sessionCatalogContract } from './session-catalog.contract.js';

describeWithService(
  'postgres',
  process.env.DATABASE_URL,
  (url) => {
    sessionCatalogContract('postgres', async () => {
      const schema = await createTempSchema(url, 'catalog');
      const db = await openWarmDatabase({ db: url, postgres: { searchPath: schema.name, poolSize: 4 } });
      return {
        catalog: createSqlSessionCatalog(db),
        async cleanup() {
          await db.close();
          await schema.drop();
        },
      };
    });
  },
  { check: postgresReady },
);
