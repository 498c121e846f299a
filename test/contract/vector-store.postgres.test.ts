/** The VectorStore contract against PostgreSQL, each test in a fresh schema. */
import { openPostgresVectorStore } from '../../src/memory/semantic/vector-store-postgres.js';
import { openWarmDatabase } from '../../src/store/warm/open.js';
import { createTempSchema } from '../support/postgres.js';
import { describeWithService } from '../support/services.js';
import { vectorStoreContract } from './vector-store.contract.js';

describeWithService('postgres', process.env.DATABASE_URL, (url) => {
  vectorStoreContract('postgres', async () => {
    const schema = await createTempSchema(url, 'vectors');
    const db = await openWarmDatabase({ db: url, migrations: [], postgres: { searchPath: schema.name, poolSize: 2, settings: { synchronous_commit: 'off' } } });
    const store = await openPostgresVectorStore(db);
    return {
      store,
      async cleanup() {
        await store.close();
        await db.close();
        await schema.drop();
      },
    };
  });
});
