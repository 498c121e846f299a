/**
 * The memory manager over a warm store and a real Redis hot tier that goes away mid-run (the
 * Redis process is killed, then started again on the same port): every message is still
 * answered from the warm store, the outage is logged once, the cache works again once Redis is
 * back, nothing stale is served afterwards, and no memory is lost. See test/support/redis-server.ts
 * for how the outage is staged (a private redis-server, or a relay when there is no binary).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCachedMemoryStore } from '../../src/memory/cached-memory-store.js';
import { createMemoryManager, type MemoryManager } from '../../src/memory/manager.js';
import { openMemoryStore, type SqlMemoryStore } from '../../src/memory/store/sql-memory-store.js';
import { createRedisHotCache } from '../../src/store/drivers/hot-redis.js';
import type { HotCache, HotCacheLogger } from '../../src/store/hot-cache.js';
import { hasRedisServerBinary, startStoppableRedis, type StoppableRedis } from '../support/redis-server.js';
import { deleteRedisKeys, describeWithService, serviceUrl } from '../support/services.js';

const T0 = Date.UTC(2026, 2, 10, 1, 0);
const USER = 'alice';

function recordingLogger() {
  const calls = { error: [] as string[], warn: [] as string[], info: [] as string[] };
  const logger: HotCacheLogger = {
    error: (message) => calls.error.push(message),
    warn: (message) => calls.warn.push(message),
    info: (message) => calls.info.push(message),
  };
  return { logger, calls };
}

function faultsSuite(sharedUrl: string): void {
  let dir: string;
  let redis: StoppableRedis;
  let warm: SqlMemoryStore;
  let hot: HotCache;
  let manager: MemoryManager;
  const keyPrefix = `ctxvm-test-faults-${randomUUID()}`;
  const driverLog = recordingLogger();
  const cacheLog = recordingLogger();
  let minute = 0;
  const say = (text: string) => manager.processMessage({ userId: USER, text, now: T0 + ++minute * 60_000 });
  const warmTasks = async () => (await warm.forUser(USER).listTasks()).map((t) => `${t.title}:${t.status}`).sort();
  const cachedTasks = async () => (await manager.user(USER).listTasks()).map((t) => `${t.title}:${t.status}`).sort();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ctxvm-redis-faults-'));
    redis = await startStoppableRedis(sharedUrl);
    warm = await openMemoryStore({ db: join(dir, 'ctxvm.db') });
    hot = await createRedisHotCache({ url: redis.url, keyPrefix, logger: driverLog.logger, connectTimeoutMs: 500, commandTimeoutMs: 500, maxReconnectDelayMs: 200 });
    manager = createMemoryManager({ store: createCachedMemoryStore({ store: warm, hot, logger: cacheLog.logger }), hot, defaultTimeZone: 'UTC' });
  });

  afterAll(async () => {
    await hot?.close();
    await warm?.close();
    if (redis?.kind.startsWith('relay')) await deleteRedisKeys(sharedUrl, keyPrefix).catch(() => {});
    await redis?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves from warm through an outage, logs it once, recovers, and loses nothing', async () => {
    // Up: tasks are created and the per-turn reads start hitting.
    for (const what of ['write the weekly report', 'book the flight', 'call the bank']) await say(`remind me to ${what} tomorrow`);
    await cachedTasks();
    const hitsBefore = hot.stats().hits;
    expect(await cachedTasks()).toEqual(await warmTasks());
    expect(hot.stats().hits).toBeGreaterThan(hitsBefore);
    expect(driverLog.calls.error).toEqual([]);

    // Down: Redis is killed mid-run; the manager keeps answering from the warm store.
    await redis.stop();
    const during = [await say('remind me to renew the passport tomorrow'), await say('I finished the weekly report'), await say('what are my tasks?')];
    for (const r of during) expect(r.response.length).toBeGreaterThan(0);
    expect(during[1]!.applied.map((a) => a.action)).toEqual(['completed']);
    expect(await cachedTasks()).toEqual(await warmTasks());
    expect(await warmTasks()).toContain('write the weekly report:done');
    const context = await manager.buildContext(USER, 'what is left to do?', { now: T0 + 3_600_000 });
    expect(context.text).toContain('renew the passport');
    expect(driverLog.calls.error).toHaveLength(1); // once per outage, however many calls failed
    expect(cacheLog.calls.error).toEqual([]); // the driver never rejected: nothing more to report

    // Back: Redis answers again; reads hit again and nothing cached before the outage is served.
    await redis.start();
    await vi.waitFor(() => expect(driverLog.calls.info).toHaveLength(1), { timeout: 15_000, interval: 50 });
    expect(await cachedTasks()).toEqual(await warmTasks());
    await say('I finished the bank call');
    expect(await cachedTasks()).toEqual(await warmTasks());
    const hitsAfter = hot.stats().hits;
    expect(await cachedTasks()).toEqual(await warmTasks());
    expect(hot.stats().hits).toBeGreaterThan(hitsAfter);
    expect(driverLog.calls.error).toHaveLength(1);

    // Nothing lost: every turn, task and change is in the warm store.
    const u = warm.forUser(USER);
    expect(await u.countTurns()).toBe(2 * minute);
    expect(await warmTasks()).toEqual(['book the flight:todo', 'call the bank:done', 'renew the passport:todo', 'write the weekly report:done']);
    const history = await u.history({ kind: 'task' });
    expect(history.filter((h) => h.field === '*')).toHaveLength(4);
    expect(history.filter((h) => h.field === 'status').map((h) => h.newValue)).toEqual(['"done"', '"done"']);
  });
}

if (hasRedisServerBinary()) {
  describe('memory manager with a private redis-server that goes away', () => faultsSuite(serviceUrl('redis')));
} else {
  describeWithService('redis', process.env.REDIS_URL, (url) => describe('memory manager with a relayed redis that goes away', () => faultsSuite(url)));
}
