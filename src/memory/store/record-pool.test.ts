import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqlMemoryStore, openMemoryStore, type SqlMemoryStore } from './sql-memory-store.js';

let dir: string;
let store: SqlMemoryStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-pool-'));
  store = await openMemoryStore({ db: join(dir, 'ctxvm.db') });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the task pool’s open titles, remembered per memory version', () => {
  it('sees every change to the open tasks, of this store or another over the same database', async () => {
    const u = store.forUser('alice');
    const about = (t: { title: string }) => t.title.includes('report');
    const pooled = async (s = u) => ((await s.recordPool!({ perOrder: 1, tasks: { perOrder: 1, about } })).tasks ?? []).map((t) => t.title).sort();
    for (let i = 0; i < 3; i++) await u.createTask({ title: `chore ${i}` });
    await u.createTask({ title: 'old report' });
    expect(await pooled()).toContain('old report');
    const added = await u.createTask({ title: 'new report' });
    expect(await pooled()).toEqual(expect.arrayContaining(['old report', 'new report']));
    await u.updateTask(added.id, { title: 'new summary' });
    expect(await pooled()).not.toContain('new report');
    // A second store over the same database (another process, say) writes: the version tells.
    const other = createSqlMemoryStore(store.db).forUser('alice');
    await other.createTask({ title: 'third report' });
    expect(await pooled()).toContain('third report');
  });
});
