// The processMessage wiring of `ctxvm serve`, for the in-process benchmarks
// (process-message-cpu, write-amplification): the SQLite memory store over `db`, the in-process
// hot cache, and the cold archive behind its batching queue in `dir`/objects. `db` may be a
// wrapper of the warm database (to count statements or transactions).
import { join } from 'node:path';
import { root } from './lib.mjs';

const dist = (p) => import(join(root, 'dist', p));

/** `{ manager, queue, close }`: close() flushes the archive and closes the hot cache (not `db`). */
export async function createServeWiring(db, dir) {
  // loaded here, not at import: the benchmarks check for dist/ first (requireDist)
  const { createSqlMemoryStore } = await dist('memory/store/sql-memory-store.js');
  const { createMemoryManager } = await dist('memory/manager.js');
  const { createHotCache } = await dist('store/open-hot-cache.js');
  const { createFsObjectStore } = await dist('store/drivers/objects-fs.js');
  const { createTurnArchive } = await dist('memory/store/turn-archive.js');
  const { createArchiveQueue } = await dist('memory/store/archive-queue.js');
  const store = createSqlMemoryStore(db);
  const hot = await createHotCache({});
  const queue = createArchiveQueue({ archive: createTurnArchive({ objects: createFsObjectStore({ root: join(dir, 'objects') }), db }) });
  const manager = createMemoryManager({ store, hot, archive: { append: async (u, t) => queue.append(u, t) }, defaultTimeZone: 'Asia/Shanghai' });
  return {
    manager,
    queue,
    async close() {
      await queue.close();
      await hot.close();
    },
  };
}
