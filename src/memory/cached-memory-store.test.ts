import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLruHotCache } from '../store/drivers/hot-lru.js';
import type { HotCache, HotCacheLogger } from '../store/hot-cache.js';
import { createCachedMemoryStore, isCachedMemoryStore, type CachedMemoryStore } from './cached-memory-store.js';
import { createMemoryManager, readCacheSaves } from './manager.js';
import type { MemoryStore, UserMemoryStore } from './memory-store.js';
import type { Task } from './model.js';
import { openMemoryStore, type SqlMemoryStore } from './store/sql-memory-store.js';

let dir: string;
let warm: SqlMemoryStore;
const caches: HotCache[] = [];
const lru = () => {
  const cache = createLruHotCache();
  caches.push(cache);
  return cache;
};
const turn = (id: string, text: string) => ({ id, role: 'user' as const, speaker: null, text, atMs: 1, sessionId: null });

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-cached-store-'));
  warm = await openMemoryStore({ db: join(dir, 'ctxvm.db'), analyzer: (t) => t.split(/\s+/).filter(Boolean) });
});
afterEach(async () => {
  for (const cache of caches.splice(0)) await cache.close();
  await warm.close();
  await rm(dir, { recursive: true, force: true });
  vi.restoreAllMocks();
});

describe('cached memory store', () => {
  it('answers repeated reads from the hot tier and batches the reads of one tick into one getMany', async () => {
    const hot = lru();
    const store = createCachedMemoryStore({ store: warm, hot, consistency: 'generation' });
    const u = store.forUser('alice');
    await u.createTask({ title: 'write report' });
    await u.setFact({ kind: 'preference', key: 'timeZone', text: 'Asia/Shanghai' });
    const getMany = vi.spyOn(hot, 'getMany');
    const readAll = () => Promise.all([u.listFacts(), u.listTasks(), u.listProjects(), u.listDecisions(), u.getFactByKey('timeZone'), u.version()]);
    const first = await readAll();
    expect(getMany).toHaveBeenCalledTimes(1);
    expect(store.readStats()).toEqual({ hits: 0, misses: 6, bypassed: 0 });
    const listTasks = vi.spyOn(warm, 'forUser');
    expect(await readAll()).toEqual(first);
    expect(getMany).toHaveBeenCalledTimes(2);
    expect(listTasks).not.toHaveBeenCalled(); // every value came from the hot tier
    expect(store.readStats()).toEqual({ hits: 6, misses: 6, bypassed: 0 });
    expect(first[4]?.text).toBe('Asia/Shanghai');
  });

  it('serves nothing a write has replaced, and keeps record lists across a turn append (generation)', async () => {
    const store = createCachedMemoryStore({ store: warm, hot: lru(), consistency: 'generation' });
    const u = store.forUser('alice');
    const task = await u.createTask({ title: 'a' });
    expect((await u.listTasks()).map((t) => t.status)).toEqual(['todo']);
    await u.updateTask(task.id, { status: 'done' });
    expect((await u.listTasks()).map((t) => t.status)).toEqual(['done']);
    const version = await u.version();
    await u.addTurns([turn('t1', 'hello')]);
    expect(await u.version()).toBe(version + 1);
    const before = store.readStats();
    await u.listTasks();
    expect(store.readStats().hits).toBe(before.hits + 1); // a turn does not retire the task list
    await u.deleteTask(task.id);
    expect(await u.listTasks()).toEqual([]);
    expect(await u.getFactByKey('timeZone')).toBeUndefined();
    await u.setFact({ kind: 'preference', key: 'timeZone', text: 'UTC' });
    expect((await u.getFactByKey('timeZone'))?.text).toBe('UTC');
  });

  it('caches what a rebuild reads: search hits, turns by id and their neighbourhoods, fresh after every write', async () => {
    const store = createCachedMemoryStore({ store: warm, hot: lru(), consistency: 'generation' });
    const u = store.forUser('alice');
    const at = (i: number) => ({ ...turn(`t${i}`, `report number${i}`), atMs: i * 1000 });
    await u.addTurns([at(1), at(2), at(4)]);
    const read = () => Promise.all([u.search('report'), u.getTurns(['t2', 't9', 't2']), u.turnNeighbourhoods!(['t2', 't9'], 1, 1)]);
    const [hits, turns, around] = await read();
    expect(hits.map((h) => h.id).sort()).toEqual(['t1', 't2', 't4']);
    expect(turns.map((t) => t.id)).toEqual(['t2', 't2']);
    expect([...around.keys()]).toEqual(['t2']);
    expect(around.get('t2')!.map((t) => t.id)).toEqual(['t1', 't2', 't4']);
    const misses = store.readStats().misses;
    expect(await read()).toEqual([hits, turns, around]);
    expect(store.readStats().misses).toBe(misses + 2); // only t9 (turn, neighbourhood): not stored, so not cached
    await u.addTurns([at(3), at(9)]);
    const [hits2, turns2, around2] = await read();
    expect(hits2.map((h) => h.id).sort()).toEqual(['t1', 't2', 't3', 't4', 't9']);
    expect(turns2.map((t) => t.id)).toEqual(['t2', 't9', 't2']);
    expect(around2.get('t2')!.map((t) => t.id)).toEqual(['t1', 't2', 't3']);
    expect(around2.get('t9')!.map((t) => t.id)).toEqual(['t4', 't9']);
    // searchMany shares the entries of search, and answers the same.
    const before = store.readStats().hits;
    const many = await u.searchMany!('report', [{ kinds: ['turn'] }, {}]);
    expect(many).toEqual([await warm.forUser('alice').search('report', { kinds: ['turn'] }), hits2]);
    expect(store.readStats().hits).toBe(before + 1); // the second search was cached by search()
  });

  it('with cacheVolatileReads false, serves cached searches and neighbourhoods but stores none; turns and record lists are still stored', async () => {
    const store = createCachedMemoryStore({ store: warm, hot: lru(), consistency: 'generation' });
    const normal = store.forUser('alice');
    const answering = store.forUser('alice', { cacheVolatileReads: false });
    await normal.addTurns([turn('t1', 'report one'), turn('t2', 'report two')]);
    await normal.createTask({ title: 'write report' });
    const volatile = (u: UserMemoryStore) => Promise.all([u.search('report'), u.searchMany!('two', [{ kinds: ['turn'] }]), u.turnNeighbourhoods!(['t1'], 1, 1)]);
    const expected = await volatile(warm.forUser('alice'));
    // answered as the warm store answers, but nothing of it is kept ...
    expect(await volatile(answering)).toEqual(expected);
    let before = store.readStats();
    expect(await volatile(normal)).toEqual(expected);
    expect(store.readStats().misses).toBe(before.misses + 3);
    // ... while what the normal handle stored is served to the answering one
    before = store.readStats();
    expect(await volatile(answering)).toEqual(expected);
    expect(store.readStats().hits).toBe(before.hits + 3);
    // stored turns and record lists are kept as always
    await Promise.all([answering.getTurns(['t2']), answering.listTasks()]);
    before = store.readStats();
    expect((await normal.getTurns(['t2'])).map((t) => t.id)).toEqual(['t2']);
    expect((await normal.listTasks()).map((t) => t.title)).toEqual(['write report']);
    expect(store.readStats().hits).toBe(before.hits + 2);
  });

  it('sees writes made behind its back by another process (warm-version, the default for a private cache)', async () => {
    const store = createCachedMemoryStore({ store: warm, hot: lru() });
    expect(store.consistency).toBe('warm-version');
    const u = store.forUser('alice');
    await u.createTask({ title: 'a' });
    expect(await u.listTasks()).toHaveLength(1);
    expect(await u.listTasks()).toHaveLength(1);
    expect(store.readStats().hits).toBe(1);
    await warm.forUser('alice').createTask({ title: 'b' }); // another process: no cache involved
    expect((await u.listTasks()).map((t) => t.title).sort()).toEqual(['a', 'b']);
  });

  it('keeps record lists across a turn append, and retires them on any record write (warm-version)', async () => {
    const store = createCachedMemoryStore({ store: warm, hot: lru() });
    const u = store.forUser('alice');
    const task = await u.createTask({ title: 'a' });
    await u.setFact({ kind: 'preference', key: 'timeZone', text: 'Asia/Shanghai' });
    const readRecords = () => Promise.all([u.listTasks(), u.getFactByKey('timeZone'), u.listProjects()]);
    const first = await readRecords();
    await u.addTurns([turn('t1', 'hello')]); // through the cache
    await warm.forUser('alice').addTurns([turn('t2', 'hello again')]); // another process
    const before = store.readStats();
    expect(await readRecords()).toEqual(first);
    expect(store.readStats().hits).toBe(before.hits + 3); // turns do not retire record lists
    expect(store.readStats().misses).toBe(before.misses);
    // ...but the version, which covers turns, moved with both appends
    expect(await u.version()).toBe((await warm.forUser('alice').version()));
    await warm.forUser('alice').updateTask(task.id, { status: 'done' }); // another process, a record
    expect((await u.listTasks()).map((t) => t.status)).toEqual(['done']);
    await warm.forUser('alice').ensureProject('Apollo');
    expect((await u.listProjects()).map((p) => p.name)).toEqual(['Apollo']);
    await warm.forUser('alice').deleteTask(task.id);
    expect(await u.listTasks()).toEqual([]);
  });

  it('never caches a value read before a concurrent write committed', async () => {
    const hot = lru();
    let gate: (() => void) | undefined;
    // A warm store whose task listing stalls after reading, while a write lands.
    const slow: MemoryStore = {
      ...warm,
      forUser(userId) {
        const inner = warm.forUser(userId);
        return {
          ...inner,
          async listTasks(options) {
            const tasks = await inner.listTasks(options);
            if (gate === undefined) await new Promise<void>((resolve) => (gate = resolve));
            return tasks;
          },
        } satisfies UserMemoryStore;
      },
    };
    const reader = createCachedMemoryStore({ store: slow, hot, consistency: 'generation' }).forUser('alice');
    const writer = createCachedMemoryStore({ store: warm, hot, consistency: 'generation' }).forUser('alice');
    await writer.createTask({ title: 'old' });
    const stale = reader.listTasks();
    await vi.waitFor(() => expect(gate).toBeDefined());
    await writer.createTask({ title: 'new' });
    gate!();
    expect((await stale).map((t) => t.title)).toEqual(['old']); // it overlapped the write: fine
    expect((await reader.listTasks()).map((t: Task) => t.title).sort()).toEqual(['new', 'old']);
  });

  it('keeps users apart under look-alike ids', async () => {
    const store = createCachedMemoryStore({ store: warm, hot: lru(), consistency: 'generation' });
    for (const id of ['a', 'a:b', 'a%3Ab', '{a}']) await store.forUser(id).setFact({ kind: 'fact', key: 'k', text: id });
    for (const id of ['a', 'a:b', 'a%3Ab', '{a}']) {
      expect((await store.forUser(id).getFactByKey('k'))?.text).toBe(id);
      expect((await store.forUser(id).getFactByKey('k'))?.text).toBe(id);
    }
  });

  it('reads uncacheable arguments from the warm store, which reports bad ones', async () => {
    const store = createCachedMemoryStore({ store: warm, hot: lru() });
    const u = store.forUser('alice');
    await u.listTasks({ limit: Number.NaN });
    await u.getFactByKey('');
    expect(store.readStats().bypassed).toBe(2);
    expect(() => store.forUser('')).toThrow(expect.objectContaining({ code: 'E_USAGE' }));
  });

  it('serves from the warm store while the hot tier throws, reports it once, and retries an owed retirement', async () => {
    const hot = lru();
    let down = false;
    const flaky: HotCache = {
      ...hot,
      getMany: (ns, keys) => (down ? Promise.reject(new Error('down')) : hot.getMany(ns, keys)),
      setMany: (ns, entries, options) => (down ? Promise.reject(new Error('down')) : hot.setMany(ns, entries, options)),
    };
    const calls = { error: 0, info: 0 };
    const logger: HotCacheLogger = { error: () => void calls.error++, info: () => void calls.info++ };
    const store = createCachedMemoryStore({ store: warm, hot: flaky, consistency: 'generation', logger });
    const u = store.forUser('alice');
    await u.createTask({ title: 'a' });
    expect(await u.listTasks()).toHaveLength(1); // now cached
    down = true;
    await u.createTask({ title: 'b' }); // the retirement fails: owed
    for (let i = 0; i < 3; i++) expect(await u.listTasks()).toHaveLength(2);
    expect(calls).toEqual({ error: 1, info: 0 });
    down = false;
    expect(await u.listTasks()).toHaveLength(2); // the owed retirement lands first
    expect(calls).toEqual({ error: 1, info: 1 });
    expect(await u.listTasks()).toHaveLength(2);
    expect(store.readStats()).toEqual({ hits: 1, misses: 2, bypassed: 3 });
  });
});

describe('memory manager with a hot tier', () => {
  it('reads through the cache unless told not to', async () => {
    const hot = lru();
    const getMany = vi.spyOn(hot, 'getMany');
    const manager = createMemoryManager({ store: warm, hot, cacheReads: true, defaultTimeZone: 'UTC' });
    await manager.processMessage({ userId: 'alice', text: 'remind me to send the report tomorrow', now: Date.UTC(2026, 0, 5, 9) });
    expect(getMany.mock.calls.some(([ns]) => ns.kind === 'memory')).toBe(true);
    expect((await manager.user('alice').listTasks()).map((t) => t.status)).toEqual(['todo']);
    getMany.mockClear();
    const plain = createMemoryManager({ store: warm, hot, cacheReads: false });
    expect(await plain.user('alice').listTasks()).toHaveLength(1);
    expect(getMany).not.toHaveBeenCalled();
    const before = manager.readStats()!;
    expect(before.misses).toBeGreaterThan(0);
    await manager.user('alice').listTasks(); // read above, no write since: a current cached value
    expect(manager.readStats()).toEqual({ ...before, hits: before.hits + 1 });
    expect(plain.readStats()).toBeUndefined();
    const wrapped: CachedMemoryStore = createCachedMemoryStore({ store: warm, hot });
    expect([isCachedMemoryStore(warm), isCachedMemoryStore(wrapped)]).toEqual([false, true]);
  });

  it('caches reads by default only where a cached read saves a round trip', async () => {
    const hot = lru();
    const getMany = vi.spyOn(hot, 'getMany');
    // SQLite with the in-process hot tier: reads go straight to SQLite, and nothing refreshes ahead
    const manager = createMemoryManager({ store: warm, hot, defaultTimeZone: 'UTC' });
    await manager.processMessage({ userId: 'alice', text: 'remind me to send the report tomorrow', now: Date.UTC(2026, 0, 5, 9) });
    expect(await manager.user('alice').listTasks()).toHaveLength(1);
    expect(getMany.mock.calls.some(([ns]) => ns.kind === 'memory')).toBe(false);
    expect([manager.readStats(), manager.refreshAhead]).toEqual([undefined, undefined]);
    const sqlite = { driver: 'sqlite' } as MemoryStore;
    const postgres = { driver: 'postgres' } as MemoryStore;
    expect(readCacheSaves(sqlite, hot)).toBe(false);
    expect(readCacheSaves(postgres, hot)).toBe(true);
    expect(readCacheSaves(sqlite, { ...hot, shared: true })).toBe(true);
  });

  it('processMessage stores no search or neighbourhood its own reply retires, but buildContext does', async () => {
    const hot = lru();
    const setMany = vi.spyOn(hot, 'setMany');
    const manager = createMemoryManager({ store: warm, hot, cacheReads: true, defaultTimeZone: 'UTC', refreshAhead: false });
    const now = Date.UTC(2026, 0, 5, 9);
    const storedKeys = () => setMany.mock.calls.flatMap(([ns, entries]) => (ns.kind === 'memory' ? [...entries].map(([key]) => key) : []));
    let last;
    for (const text of ['the report is about churn', 'send the report to Dana', 'what about the report?']) {
      last = await manager.processMessage({ userId: 'alice', text, now });
    }
    expect(last!.context.text).toContain('User: the report is about churn'); // the history layer found the earlier turns
    const keys = storedKeys();
    expect(keys.some((k) => k.startsWith('tasks:'))).toBe(true); // the per-turn reads were cached
    expect(keys.filter((k) => k.startsWith('search:') || k.startsWith('around:'))).toEqual([]);
    setMany.mockClear();
    await manager.buildContext('alice', 'the report', { now });
    expect(storedKeys().some((k) => k.startsWith('search:'))).toBe(true);
    expect(storedKeys().some((k) => k.startsWith('around:'))).toBe(true);
  });
});
