/** The VectorStore contract against SQLite with sqlite-vec, in a temp file. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteVectorStore } from '../../src/memory/semantic/vector-store-sqlite.js';
import { vectorStoreContract } from './vector-store.contract.js';

vectorStoreContract('sqlite-vec', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ctxvm-vectors-'));
  const store = await openSqliteVectorStore({ path: join(dir, 'ctxvm.db') });
  return {
    store,
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
