/** The SessionCatalog contract against the SQLite warm store. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqlSessionCatalog } from '../../src/session/dag/sql-catalog.js';
import { openWarmDatabase } from '../../src/store/warm/open.js';
import { sessionCatalogContract } from './session-catalog.contract.js';

sessionCatalogContract('sqlite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ctxvm-catalog-'));
  const db = await openWarmDatabase({ db: join(dir, 'ctxvm.db') });
  return {
    catalog: createSqlSessionCatalog(db),
    async cleanup() {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
