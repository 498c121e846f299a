/**
 * Issue 23 point 2: the hot tier never serves what the warm store no longer says, even when Redis
 * comes back with OLDER data — restarted from an older RDB snapshot, from an older AOF, or failed
 * over to a replica that lagged. Each case drives the HTTP API over a real SQLite warm store and a
 * real redis-server started by the test on its own port: task A is posted, Redis's persisted (or
 * replicated) state is frozen, task B is posted and acknowledged, Redis goes back to the frozen
 * state, and the API must list both tasks — as the warm store does — as soon as Redis answers
 * again, and its cache must work again (hits) afterwards.
 */
import { cpSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openRedisApi, type RedisApi } from '../support/redis-api.js';
import { describeWithRedisLab, startRedisNode, startSwitchableRelay, until, type RedisNode, type SwitchableRelay } from '../support/redis-lab.js';

const USER = 'u';

describeWithRedisLab('hot tier after Redis comes back with older data', () => {
  let dir: string;
  let nodes: RedisNode[];
  let relay: SwitchableRelay | undefined;
  let app: RedisApi | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ctxvm-redis-rollback-'));
    nodes = [];
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await relay?.close();
    relay = undefined;
    for (const node of nodes) await node.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Posts A, lets the cache hold A, returns once the API lists it (and answers it from the hot tier). */
  async function postA(api: RedisApi): Promise<void> {
    await api.say(USER, 'remind me to call the bank tomorrow');
    expect(await api.tasks(USER)).toEqual(await api.warmTasks(USER));
    const hits = api.services.manager.readStats()!.hits;
    expect(await api.tasks(USER)).toHaveLength(1);
    expect(api.services.manager.readStats()!.hits).toBeGreaterThan(hits);
  }

  /** Posts B, and checks the API lists A and B from the (still current) hot tier. */
  async function postB(api: RedisApi): Promise<void> {
    await api.say(USER, 'remind me to book the flight tomorrow');
    expect(await api.tasks(USER)).toHaveLength(2);
    expect(await api.tasks(USER)).toEqual(await api.warmTasks(USER));
  }

  /** After the rollback: both tasks, while the hot tier answers, and the cache hits again. */
  async function expectCurrent(api: RedisApi, backBefore: number): Promise<void> {
    await until('the hot tier to answer again', () => api.log.info.length > backBefore);
    const warm = await api.warmTasks(USER);
    expect(warm).toHaveLength(2);
    for (let i = 0; i < 5; i++) expect(await api.tasks(USER)).toEqual(warm);
    const hits = api.services.manager.readStats()!.hits;
    expect(await api.tasks(USER)).toEqual(warm);
    expect(api.services.manager.readStats()!.hits).toBeGreaterThan(hits);
    const context = await api.services.manager.buildContext(USER, 'what do I have to do?');
    expect(context.text).toContain('book the flight');
  }

  it('restarted (kill -9) from an RDB snapshot taken before the last write', async () => {
    const redis = await startRedisNode({ dir: join(dir, 'rdb') });
    nodes.push(redis);
    app = await openRedisApi(redis.url);
    await postA(app);
    redis.cli('SAVE');
    await postB(app);
    const back = app.log.info.length;
    await redis.kill();
    await redis.start(); // loads dump.rdb: the state right after A
    await expectCurrent(app, back);
  });

  it('restarted (kill -9) from an append-only file that ends before the last write', async () => {
    const redis = await startRedisNode({ dir: join(dir, 'aof'), appendfsync: 'always' });
    nodes.push(redis);
    app = await openRedisApi(redis.url);
    await postA(app);
    // The AOF as a crash (lost page cache) or a backup restore would leave it: everything up to A.
    cpSync(join(dir, 'aof', 'appendonlydir'), join(dir, 'aof-after-a'), { recursive: true });
    await postB(app);
    const back = app.log.info.length;
    await redis.kill();
    rmSync(join(dir, 'aof', 'appendonlydir'), { recursive: true });
    cpSync(join(dir, 'aof-after-a'), join(dir, 'aof', 'appendonlydir'), { recursive: true });
    await redis.start();
    expect(Number(redis.info('aof_enabled'))).toBe(1);
    await expectCurrent(app, back);
  });

  it('failed over to a replica that had not received the last write', async () => {
    const master = await startRedisNode({ dir: join(dir, 'master') });
    const replica = await startRedisNode({ dir: join(dir, 'replica'), replicaOf: master.port });
    nodes.push(master, replica);
    relay = await startSwitchableRelay(master.port);
    app = await openRedisApi(relay.url);
    await postA(app);
    await until('the replica to catch up', () => replica.info('master_link_status') === 'up' && replica.info('slave_repl_offset') === master.info('master_repl_offset'));
    // Lags from here on: paused, and cut off by the master, so not even bytes already on their
    // way (in the paused replica's socket buffer) can carry B to it.
    replica.pause();
    master.cli('CLIENT', 'KILL', 'TYPE', 'replica');
    await until('the master to drop its replica', () => master.info('connected_slaves') === '0');
    await postB(app);
    const back = app.log.info.length;
    await master.kill();
    replica.resume();
    replica.cli('REPLICAOF', 'NO', 'ONE');
    relay.switchTo(replica.port);
    await expectCurrent(app, back);
  });
});
