/** The MemoryStore contract against the SQLite warm store (a real file, better-sqlite3). */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openMemoryStore } from '../../src/memory/store/sql-memory-store.js';
import { memoryStoreContract } from './memory-store.contract.js';

memoryStoreContract('sqlite', async ({ now }) => {
  const dir = await mkdtemp(join(tmpdir(), 'ctxvm-memory-'));
  const store = await openMemoryStore({ db: join(dir, 'ctxvm.db'), now });
  return {
    store,
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
