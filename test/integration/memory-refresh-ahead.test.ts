/**
 * Refresh-ahead on real components: after a write, the questions a user keeps asking are rebuilt
 * in the background, so the next request is served from the hot tier, and what it serves is
 * exactly what a fresh rebuild gives. SQLite warm store with the in-process hot tier, and with
 * Redis shared by two managers (as two server processes would share it).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryManager, type MemoryManager, type MemoryManagerOptions } from '../../src/memory/manager.js';
import type { MemoryStore } from '../../src/memory/memory-store.js';
import { openMemoryStore } from '../../src/memory/store/sql-memory-store.js';
import { createLruHotCache } from '../../src/store/drivers/hot-lru.js';
import { createRedisHotCache } from '../../src/store/drivers/hot-redis.js';
import type { HotCache } from '../../src/store/hot-cache.js';
import { deleteRedisKeys, describeWithService, serviceUrl } from '../support/services.js';

const T0 = Date.parse('2026-03-10T01:00:00Z');
const QUESTION = 'what are my open tasks?';
const USER = 'alice';

let dir: string;
let store: MemoryStore;
let now: number;
const clock = { now: () => now };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-refresh-'));
  store = await openMemoryStore({ db: join(dir, 'memory.db') });
  now = T0;
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

function managerOver(hot: HotCache, extra: Partial<MemoryManagerOptions> = {}): MemoryManager {
  return createMemoryManager({ store, hot, cacheReads: true, clock, defaultTimeZone: 'UTC', ...extra });
}

/** What a rebuild with no cache at all gives for the question now. */
const fresh = () => createMemoryManager({ store, clock, defaultTimeZone: 'UTC' }).buildContext(USER, QUESTION, { now });

async function seed(manager: MemoryManager): Promise<void> {
  await manager.processMessage({ userId: USER, text: 'remind me to send the budget review by Friday', now });
  await manager.processMessage({ userId: USER, text: 'I need to book flights for the offsite tomorrow', now: (now += 60_000) });
}

describe('refresh-ahead with the in-process hot tier', () => {
  let hot: HotCache;
  beforeEach(() => void (hot = createLruHotCache()));
  afterEach(async () => hot.close());

  it('serves the next request after a write from the hot tier, identical to a fresh rebuild, and touches nothing ahead of use', async () => {
    const manager = managerOver(hot);
    await seed(manager);
    expect((await manager.buildContext(USER, QUESTION, { now })).cached).toBe(false);
    expect((await manager.buildContext(USER, QUESTION, { now })).cached).toBe(true);

    now += 60_000;
    const added = await manager.user(USER).createTask({ title: 'renew the passport' });
    await manager.refreshAhead!.settled();
    expect(manager.refreshAhead!.stats()).toMatchObject({ passes: 1, rebuilds: 1, failed: 0 });
    // built ahead, not used yet: the new task's access count is still zero
    expect((await store.forUser(USER).accessStats('task', [added.id])).get(added.id)?.count ?? 0).toBe(0);

    now += 60_000;
    const served = await manager.buildContext(USER, QUESTION, { now });
    expect(served.cached).toBe(true);
    expect(served.text).toContain('renew the passport');
    expect((await store.forUser(USER).accessStats('task', [added.id])).get(added.id)?.count).toBe(1);
    expect({ ...served, cached: false }).toEqual(await fresh());
  });

  it('refreshes after a message that changes memory, too', async () => {
    const manager = managerOver(hot);
    await seed(manager);
    for (let i = 0; i < 2; i++) await manager.buildContext(USER, QUESTION, { now });
    const done = await manager.processMessage({ userId: USER, text: 'I booked the flights for the offsite, mark it done', now: (now += 60_000) });
    expect(done.applied.map((c) => c.action)).toEqual(['completed']);
    await manager.refreshAhead!.settled();
    const served = await manager.buildContext(USER, QUESTION, { now: (now += 60_000) });
    expect(served.cached).toBe(true);
    expect({ ...served, cached: false }).toEqual(await fresh());
  });

  it('does nothing for a question asked once, or when turned off', async () => {
    const once = managerOver(hot);
    await seed(once);
    await once.buildContext(USER, 'asked only once?', { now });
    await once.user(USER).createTask({ title: 'water the plants' });
    await once.refreshAhead!.settled();
    expect(once.refreshAhead!.stats().rebuilds).toBe(0);

    const off = managerOver(hot, { refreshAhead: false });
    expect(off.refreshAhead).toBeUndefined();
    for (let i = 0; i < 2; i++) await off.buildContext(USER, QUESTION, { now });
    await off.user(USER).createTask({ title: 'call the bank' });
    expect((await off.buildContext(USER, QUESTION, { now: (now += 60_000) })).cached).toBe(false);
  });
});

describeWithService('redis', serviceUrl('redis'), (url) => {
  describe('refresh-ahead through a shared Redis', () => {
    const keyPrefix = `ctxvm-test-refresh-${randomBytes(4).toString('hex')}`;
    const caches: HotCache[] = [];
    const redis = async () => {
      const hot = await createRedisHotCache({ url, keyPrefix });
      caches.push(hot);
      return hot;
    };
    afterEach(async () => {
      for (const hot of caches.splice(0)) await hot.close();
      await deleteRedisKeys(url, keyPrefix);
    });

    it('a context refreshed by one manager serves the other manager’s next request', async () => {
      const writer = managerOver(await redis());
      const reader = managerOver(await redis());
      await seed(writer);
      for (let i = 0; i < 2; i++) await writer.buildContext(USER, QUESTION, { now });
      now += 60_000;
      await writer.user(USER).updateTask((await writer.user(USER).listTasks({ status: ['todo'] }))[0]!.id, { priority: 'high' });
      await writer.refreshAhead!.settled();
      expect(writer.refreshAhead!.stats().rebuilds).toBe(1);
      const served = await reader.buildContext(USER, QUESTION, { now: (now += 60_000) });
      expect(served.cached).toBe(true);
      expect({ ...served, cached: false }).toEqual(await fresh());
    });
  });
});
