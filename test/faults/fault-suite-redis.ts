/**
 * Hot-tier scenarios of the fault suite (./fault-suite.test.ts): a real redis-server killed,
 * rolled back to older data, failed over to a lagging replica, and paused, under the HTTP API
 * over a real SQLite warm store. Each adds one row to the table and fails if anything was lost
 * or served stale.
 */
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { openRedisApi, type RedisApi } from '../support/redis-api.js';
import { startRedisNode, startSwitchableRelay, until } from '../support/redis-lab.js';
import type { FaultTable } from './fault-table.js';

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.max(0, Math.ceil((p / 100) * xs.length) - 1))]!;
const AREA = 'hot tier (redis)';

/** Clients posting "remind me to …" messages back to back until `stop()`; what was acknowledged. */
function clients(app: RedisApi, users: string[], what: string) {
  let running = true;
  const acked = new Map(users.map((u) => [u, 0]));
  let failed = 0;
  const latencies: number[] = [];
  const done = Promise.all(
    users.map(async (user) => {
      for (let n = 0; running; n++) {
        const t0 = performance.now();
        try {
          await app.say(user, `remind me to ${what} ${n} tomorrow`);
          acked.set(user, acked.get(user)! + 1);
          latencies.push(performance.now() - t0);
        } catch {
          failed++;
        }
      }
    }),
  );
  return {
    acked,
    latencies,
    failed: () => failed,
    async stop() {
      running = false;
      await done;
    },
  };
}

/** Acknowledged messages missing from the warm store (a turn pair and a task each), and users the API lists differently. */
async function lostOf(app: RedisApi, acked: Map<string, number>, base = new Map<string, number>()): Promise<{ messages: number; stale: number }> {
  let messages = 0;
  let stale = 0;
  for (const [user, n] of acked) {
    const expected = n + (base.get(user) ?? 0);
    const tasks = (await app.warmTasks(user)).length;
    const turns = await app.services.store.forUser(user).countTurns();
    messages += Math.max(0, expected - tasks, expected - Math.floor(turns / 2));
    if (JSON.stringify(await app.tasks(user)) !== JSON.stringify(await app.warmTasks(user))) stale++;
  }
  return { messages, stale };
}

export async function redisKilledUnderLoad(table: FaultTable, dir: string, random: () => number): Promise<void> {
  const redis = await startRedisNode({ dir: join(dir, 'killed') });
  const app = await openRedisApi(redis.url);
  try {
    const users = ['k0', 'k1', 'k2', 'k3'];
    const load = clients(app, users, 'pay bill');
    const kills = 4;
    for (let i = 0; i < kills; i++) {
      await sleep(200 + random() * 600);
      await redis.kill();
      await sleep(50 + random() * 300);
      await redis.start();
    }
    await sleep(300);
    await load.stop();
    const total = [...load.acked.values()].reduce((a, b) => a + b, 0);
    const lost = await lostOf(app, load.acked);
    table.add({ area: AREA, fault: `kill -9 (restart empty) under ${users.length} clients`, tried: kills, held: lost.messages === 0 && lost.stale === 0 && load.failed() === 0 ? kills : 0, lost: `${lost.messages} of ${total} acknowledged messages; ${load.failed()} requests failed; ${lost.stale} users listed stale` });
    expect(lost).toEqual({ messages: 0, stale: 0 });
    expect(load.failed()).toBe(0);
    expect(total).toBeGreaterThan(0);
  } finally {
    await app.close();
    await redis.close();
  }
}

/** Redis restarted from an older RDB snapshot or AOF, `rounds` times each: stale task lists served. */
export async function redisRolledBack(table: FaultTable, dir: string, rounds: number): Promise<void> {
  for (const mode of ['rdb', 'aof'] as const) {
    const data = join(dir, `rollback-${mode}`);
    const redis = await startRedisNode({ dir: data, ...(mode === 'aof' ? { appendfsync: 'always' as const } : {}) });
    const app = await openRedisApi(redis.url);
    let stale = 0;
    try {
      for (let r = 0; r < rounds; r++) {
        await app.say('rb', `remind me to renew licence ${mode} ${r} tomorrow`);
        await app.tasks('rb');
        if (mode === 'rdb') redis.cli('SAVE');
        else cpSync(join(data, 'appendonlydir'), join(dir, `aof-copy-${r}`), { recursive: true });
        await app.say('rb', `remind me to file taxes ${mode} ${r} tomorrow`);
        await app.tasks('rb');
        const changes = app.services.hot!.health!().epochChanges;
        await redis.kill();
        if (mode === 'aof') {
          rmSync(join(data, 'appendonlydir'), { recursive: true });
          cpSync(join(dir, `aof-copy-${r}`), join(data, 'appendonlydir'), { recursive: true });
        }
        await redis.start();
        await until('the hot tier to notice the restart', () => app.services.hot!.health!().epochChanges > changes);
        for (let i = 0; i < 3; i++) if (JSON.stringify(await app.tasks('rb')) !== JSON.stringify(await app.warmTasks('rb'))) stale++;
      }
      table.add({ area: AREA, fault: `restart (kill -9) from an older ${mode === 'rdb' ? 'RDB snapshot' : 'append-only file'}`, tried: rounds, held: rounds - Math.min(rounds, stale), lost: `${stale} stale task lists served of ${rounds * 3} reads` });
      expect(stale).toBe(0);
    } finally {
      await app.close();
      await redis.close();
    }
  }
}

/** Failed over (virtual address switched) to a replica cut off before the last write. */
export async function redisFailedOver(table: FaultTable, dir: string, rounds: number): Promise<void> {
  let stale = 0;
  for (let r = 0; r < rounds; r++) {
    const master = await startRedisNode({ dir: join(dir, `fo-master-${r}`) });
    const replica = await startRedisNode({ dir: join(dir, `fo-replica-${r}`), replicaOf: master.port });
    const relay = await startSwitchableRelay(master.port);
    const app = await openRedisApi(relay.url);
    try {
      await app.say('fo', 'remind me to call the plumber tomorrow');
      await app.tasks('fo');
      await until('the replica to catch up', () => replica.info('master_link_status') === 'up' && replica.info('slave_repl_offset') === master.info('master_repl_offset'));
      replica.pause();
      master.cli('CLIENT', 'KILL', 'TYPE', 'replica');
      await until('the master to drop its replica', () => master.info('connected_slaves') === '0');
      await app.say('fo', 'remind me to pick up the parcel tomorrow');
      await app.tasks('fo');
      const changes = app.services.hot!.health!().epochChanges;
      await master.kill();
      replica.resume();
      replica.cli('REPLICAOF', 'NO', 'ONE');
      relay.switchTo(replica.port);
      await until('the hot tier to notice the failover', () => app.services.hot!.health!().epochChanges > changes);
      for (let i = 0; i < 3; i++) if (JSON.stringify(await app.tasks('fo')) !== JSON.stringify(await app.warmTasks('fo'))) stale++;
    } finally {
      await app.close();
      await relay.close();
      await master.close();
      await replica.close();
    }
  }
  table.add({ area: AREA, fault: 'failover to a replica that lagged', tried: rounds, held: rounds - Math.min(rounds, stale), lost: `${stale} stale task lists served of ${rounds * 3} reads` });
  expect(stale).toBe(0);
}

/** Paused (SIGSTOP) `rounds` times for `pauseMs` under one client: latency added per message. */
export async function redisPaused(table: FaultTable, dir: string, rounds: number, pauseMs: number): Promise<void> {
  const redis = await startRedisNode({ dir: join(dir, 'paused') });
  const app = await openRedisApi(redis.url);
  try {
    const warmup = clients(app, ['p0'], 'warm up');
    await sleep(1_000);
    await warmup.stop();
    const before = clients(app, ['p0'], 'buy milk');
    await sleep(1_500);
    await before.stop();
    const baseline = percentile(before.latencies, 50);
    const during: number[] = [];
    let failed = 0;
    let acked = 0;
    for (let r = 0; r < rounds; r++) {
      redis.pause();
      const load = clients(app, ['p0'], `pay rent ${r}`);
      await sleep(pauseMs);
      redis.resume();
      await load.stop();
      during.push(...load.latencies);
      failed += load.failed();
      acked += load.acked.get('p0')!;
      await until('the hot tier to be up again', () => app.services.hot!.health!().state === 'up', 5_000);
    }
    const lost = await lostOf(app, new Map([['p0', acked]]), new Map([['p0', warmup.acked.get('p0')! + before.acked.get('p0')!]]));
    const addedMax = Math.max(...during) - baseline;
    table.add({
      area: AREA,
      fault: `paused (SIGSTOP) ${pauseMs / 1000} s under 1 client`,
      tried: rounds,
      held: lost.messages === 0 && failed === 0 ? rounds : 0,
      lost: `${lost.messages} of ${acked} acknowledged messages; ${failed} requests failed`,
      notes: `message latency paused p50 ${percentile(during, 50).toFixed(0)} ms, max ${Math.max(...during).toFixed(0)} ms vs p50 ${baseline.toFixed(0)} ms before: max added ${addedMax.toFixed(0)} ms (goal ≤ 200); ${((during.length / (rounds * pauseMs)) * 1000).toFixed(0)} msg/s paused vs ${((before.latencies.length / 1500) * 1000).toFixed(0)} before`,
    });
    expect(lost.messages).toBe(0);
    expect(failed).toBe(0);
    // Loose on purpose (timing is measured, not asserted tightly): it was a whole stall, 14 s.
    expect(addedMax).toBeLessThan(1_000);
  } finally {
    await app.close();
    await redis.close();
  }
}
