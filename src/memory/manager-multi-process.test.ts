/**
 * `multiProcess`: two managers over one warm store, each with its own private hot cache — what
 * two workers of `ctxvm serve --workers 2` are. Whichever manager gets a message, it sees what
 * the other one wrote: task lists, rebuilt contexts, references to a task the other one created,
 * and the full-history token total.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLruHotCache } from '../store/drivers/hot-lru.js';
import type { HotCache } from '../store/hot-cache.js';
import { createTokenCounter } from '../text/tokens.js';
import { createMemoryManager, type MemoryManager } from './manager.js';
import type { MemoryStore } from './memory-store.js';
import { openMemoryStore } from './store/sql-memory-store.js';

let dir: string;
let stores: MemoryStore[];
let hots: HotCache[];
let managers: MemoryManager[];
const T0 = Date.UTC(2026, 2, 10, 1, 0);

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-multi-'));
  stores = [await openMemoryStore({ db: join(dir, 'memory.db') }), await openMemoryStore({ db: join(dir, 'memory.db') })];
  hots = [createLruHotCache(), createLruHotCache()];
  managers = stores.map((store, i) => createMemoryManager({ store, hot: hots[i]!, defaultTimeZone: 'UTC', multiProcess: true }));
});
afterEach(async () => {
  for (const h of hots) await h.close();
  for (const s of stores) await s.close();
  await rm(dir, { recursive: true, force: true });
});

describe('memory manager with multiProcess', () => {
  it('sees the writes of the other manager, whichever answers', async () => {
    const tokens = createTokenCounter();
    let now = T0;
    for (let i = 0; i < 6; i++) {
      const [a, b] = i % 2 ? [managers[0]!, managers[1]!] : [managers[1]!, managers[0]!];
      // both have read (and cached) the list and a context before the write
      for (const m of managers) {
        await m.user('alice').listTasks({ status: ['todo', 'doing'] });
        await m.buildContext('alice', `send report ${i}`, { now });
      }
      const created = await a.processMessage({ userId: 'alice', text: `Remind me to send report ${i} tomorrow at 3pm`, now: (now += 60_000) });
      const task = created.applied.find((c) => c.kind === 'task')!;
      expect(task).toBeDefined();
      expect((await b.user('alice').listTasks({ status: ['todo'] })).map((t) => t.id)).toContain(task.id);
      expect((await b.buildContext('alice', `send report ${i}`, { now })).text).toContain(task.text);
      // "it" is the task the other manager just created
      const done = await b.processMessage({ userId: 'alice', text: 'I finished it', now: (now += 60_000) });
      expect(done.applied).toEqual([expect.objectContaining({ kind: 'task', id: task.id, action: 'completed' })]);
      // the token total counts every stored turn, whoever stored it
      const all = await stores[0]!.forUser('alice').recentTurns(1000);
      expect(done.metrics.fullHistoryTokens).toBe(all.reduce((sum, t) => sum + tokens.count(t.text), 0));
    }
  });
});
