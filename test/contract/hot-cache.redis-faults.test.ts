/**
 * The redis driver when Redis is away, slow, or comes back. Outages are staged with a small TCP
 * relay in front of the real Redis (stopped, restarted, or stalled), not with a protocol mock.
 */
import { randomUUID } from 'node:crypto';
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createRedisHotCache } from '../../src/store/drivers/hot-redis.js';
import type { HotCache, HotCacheInvalidation, HotCacheLogger } from '../../src/store/hot-cache.js';
import { deleteRedisKeys, describeWithService, serviceAddress } from '../support/services.js';

const ns = { userId: 'u', kind: 'tasks' };
const LONG = { ttlMs: 60_000 };
const WAIT = { timeout: 10_000, interval: 20 };

function recordingLogger() {
  const calls = { error: [] as string[], warn: [] as string[], info: [] as string[] };
  const logger: HotCacheLogger = {
    error: (message) => calls.error.push(message),
    warn: (message) => calls.warn.push(message),
    info: (message) => calls.info.push(message),
  };
  return { logger, calls };
}

async function listen(server: Server, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/** A port nothing listens on: bound by us a moment ago, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await listen(server, 0);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A TCP relay to Redis that a test can stop, restart on the same port, or stall. */
class RedisRelay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private stalled = false;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(port = this.port): Promise<this> {
    this.server = createServer((client) => {
      const upstream = connect(this.target);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.on('data', (chunk) => upstream.write(chunk));
      // A stalled relay swallows Redis's replies: the connection stays up but nothing answers.
      upstream.on('data', (chunk) => this.stalled || client.write(chunk));
    });
    this.port = await listen(this.server, port);
    return this;
  }

  /** Cuts every connection and refuses new ones, like a Redis that went down. */
  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  stall(stalled: boolean): void {
    this.stalled = stalled;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }
}

describe('redis hot cache with nothing listening', () => {
  it('starts, misses, drops writes without throwing, and reports the outage once', async () => {
    const port = await closedPort();
    const { logger, calls } = recordingLogger();
    const consoleError = vi.spyOn(console, 'error');
    const consoleWarn = vi.spyOn(console, 'warn');
    const cache = await createRedisHotCache({ url: `redis://127.0.0.1:${port}`, logger, keyPrefix: 'faults' });
    try {
      expect(await cache.get(ns, 'k')).toBeUndefined();
      expect(await cache.getMany(ns, ['a', 'b'])).toEqual([undefined, undefined]);
      await expect(cache.set(ns, 'k', 1, LONG)).resolves.toBeUndefined();
      await expect(cache.setMany(ns, [['a', 1]], LONG)).resolves.toBeUndefined();
      await expect(cache.delete(ns, 'k')).resolves.toBeUndefined();
      await expect(cache.invalidateUser('u')).resolves.toBeUndefined();
      await sleep(400); // several reconnection attempts fail meanwhile
      expect(await cache.get(ns, 'k')).toBeUndefined();

      expect(calls.error).toHaveLength(1);
      expect(calls.error[0]).toContain(`127.0.0.1:${port}`);
      expect(calls.info).toEqual([]);
      expect(cache.stats()).toEqual({ hits: 0, misses: 4, sets: 0, errors: 7 });
      expect(consoleError).not.toHaveBeenCalled();
      expect(consoleWarn).not.toHaveBeenCalled();
    } finally {
      await cache.close();
      vi.restoreAllMocks();
    }
  });

  it('keeps the password out of the report', async () => {
    const port = await closedPort();
    const { logger, calls } = recordingLogger();
    const cache = await createRedisHotCache({ url: `redis://user:s3cret@127.0.0.1:${port}`, logger });
    await cache.get(ns, 'k');
    await cache.close();
    expect(calls.error.join('\n')).not.toContain('s3cret');
  });

  it('rejects a malformed configuration with a UsageError', async () => {
    await expect(createRedisHotCache({ url: 'not a url' })).rejects.toMatchObject({ code: 'E_USAGE' });
    await expect(createRedisHotCache({ url: 'http://127.0.0.1:6379' })).rejects.toMatchObject({ code: 'E_USAGE' });
    await expect(createRedisHotCache({ url: 'redis://127.0.0.1:1', keyPrefix: 'a{b}' })).rejects.toMatchObject({ code: 'E_USAGE' });
    await expect(createRedisHotCache({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 0 })).rejects.toMatchObject({ code: 'E_USAGE' });
  });
});

describeWithService('redis', process.env.REDIS_URL, (url) => {
  const open: Array<HotCache | RedisRelay> = [];
  const runPrefix = `ctxvm-test-${randomUUID()}`;
  let prefixes = 0;
  const keyPrefix = () => `${runPrefix}:${++prefixes}`;

  async function relay(): Promise<RedisRelay> {
    const started = await new RedisRelay(serviceAddress('redis', url)).start();
    open.push(started);
    return started;
  }

  async function cacheAt(cacheUrl: string, options: { keyPrefix: string; logger?: HotCacheLogger; versionCacheMs?: number; commandTimeoutMs?: number }) {
    const cache = await createRedisHotCache({ url: cacheUrl, maxReconnectDelayMs: 100, ...options });
    open.push(cache);
    return cache;
  }

  afterEach(async () => {
    for (const thing of open.splice(0).reverse()) await (thing instanceof RedisRelay ? thing.stop() : thing.close());
  });
  afterAll(async () => {
    await deleteRedisKeys(url, runPrefix);
  });

  it('reports each outage once, recovers by itself, and repairs what failed meanwhile', async () => {
    const prefix = keyPrefix();
    const proxied = await relay();
    const { logger, calls } = recordingLogger();
    const cache = await cacheAt(proxied.url, { keyPrefix: prefix, logger });
    // Another process, connected directly, that never lost Redis and never remembers versions.
    const other = await cacheAt(url, { keyPrefix: prefix, versionCacheMs: 0 });
    const heard: HotCacheInvalidation[] = [];
    cache.onInvalidate!((event) => heard.push(event));

    await cache.set(ns, 'k', 'v1', LONG);
    await cache.set({ userId: 'u2', kind: 'tasks' }, 'x', 'old', LONG);
    expect(await other.get(ns, 'k')).toBe('v1');

    await proxied.stop();
    await vi.waitFor(() => expect(calls.error).toHaveLength(1), WAIT);
    // Both writes fail: without a repair, the other process would read v1 and 'old' forever.
    await cache.set(ns, 'k', 'v2', LONG);
    await cache.invalidateUser('u2');
    expect(await cache.get(ns, 'k')).toBeUndefined();
    expect(await other.get(ns, 'k')).toBe('v1');

    await proxied.start();
    await vi.waitFor(() => expect(calls.info).toHaveLength(1), WAIT);
    await vi.waitFor(async () => expect(await other.get(ns, 'k')).toBeUndefined(), WAIT);
    await vi.waitFor(async () => expect(await other.get({ userId: 'u2', kind: 'tasks' }, 'x')).toBeUndefined(), WAIT);
    await cache.set(ns, 'k', 'v3', LONG);
    expect(await other.get(ns, 'k')).toBe('v3');
    expect(calls.error).toHaveLength(1);
    // Messages may have been missed while away: layered caches are told to drop everything.
    await vi.waitFor(() => expect(heard).toContainEqual({ scope: 'all' }), WAIT);

    await proxied.stop();
    await vi.waitFor(() => expect(calls.error).toHaveLength(2), WAIT);
  });

  it('starts while Redis is away and subscribes once it is back', async () => {
    const prefix = keyPrefix();
    const proxied = await relay();
    await proxied.stop();
    const { logger, calls } = recordingLogger();
    const cache = await cacheAt(proxied.url, { keyPrefix: prefix, logger, versionCacheMs: 60_000 });
    const other = await cacheAt(url, { keyPrefix: prefix });
    const heard: HotCacheInvalidation[] = [];
    cache.onInvalidate!((event) => heard.push(event));
    expect(calls.error).toHaveLength(1);

    await proxied.start();
    // Told to drop everything once subscribed: from then on no invalidation can be missed.
    await vi.waitFor(() => expect(heard).toEqual([{ scope: 'all' }]), WAIT);
    await vi.waitFor(async () => {
      await cache.set(ns, 'k', 'v', LONG);
      expect(await cache.get(ns, 'k')).toBe('v');
    }, WAIT);
    await other.invalidateUser(ns.userId);
    await vi.waitFor(() => expect(heard).toContainEqual({ scope: 'user', userId: ns.userId }), WAIT);
    expect(await cache.get(ns, 'k')).toBeUndefined();
  });

  it('answers a miss when Redis stops replying, once the command times out', async () => {
    const proxied = await relay();
    const { logger, calls } = recordingLogger();
    const cache = await cacheAt(proxied.url, { keyPrefix: keyPrefix(), logger, commandTimeoutMs: 100 });
    await cache.set(ns, 'k', 'v', LONG);
    proxied.stall(true);
    expect(await cache.get(ns, 'k')).toBeUndefined();
    await expect(cache.set(ns, 'k', 'w', LONG)).resolves.toBeUndefined();
    expect(cache.stats().errors).toBe(2);
    expect(calls.error).toHaveLength(1);
  });
});
