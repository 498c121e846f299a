/**
 * The fault-injection suite (issue 23 point 9), part of `npm test`: real redis-servers started on
 * their own ports, the real PostgreSQL of the test environment, SIGKILL at random moments of real
 * child processes, flipped bytes in object files, hostile archives. It prints a table — what was
 * tried, how often, how often it held, what was lost (the goal: nothing) — and fails on any loss.
 * Random choices come from a seed the table names; `FAULT_SEED=<n>` repeats a run.
 *
 * The detailed tests of single faults live next to it (redis-rollback, redis-stall,
 * hot-cache-redis-lab) and elsewhere (snapshot-crash, branch.crash, object-store.fs, import);
 * this suite repeats the faults with random timing and counts the outcomes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { bundleScript } from '../support/bundle-script.js';
import { createDagEnv } from '../support/dag-env.js';
import { createTempSchema, postgresReady } from '../support/postgres.js';
import { describeWithRedisLab, redisLabSkipReason, startRedisNode, type RedisNode } from '../support/redis-lab.js';
import { describeWithService } from '../support/services.js';
import { redisFailedOver, redisKilledUnderLoad, redisPaused, redisRolledBack } from './fault-suite-redis.js';
import { archivesHostile, objectsCorrupted, writersKilled } from './fault-suite-stores.js';
import { createFaultTable, seededRandom } from './fault-table.js';

const SEED = Number(process.env.FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
const random = seededRandom(SEED);
const table = createFaultTable();
const WRITER = fileURLToPath(new URL('./fixtures/acked-writer.ts', import.meta.url));
let dir: string;
let writer: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-faults-'));
  writer = await bundleScript(WRITER, 'acked-writer');
});
afterAll(async () => {
  if (table.rows().length > 0) console.log(`\n${table.render(`Fault injection (seed ${SEED}; repeat with FAULT_SEED=${SEED})`)}\n`);
  await rm(dir, { recursive: true, force: true });
});

describe('fault injection', () => {
  describeWithRedisLab('hot tier', () => {
    it('kill -9 of Redis under load loses no acknowledged message', () => redisKilledUnderLoad(table, dir, random));
    it('a restart from an older RDB or AOF serves nothing stale', () => redisRolledBack(table, dir, 3));
    it('a failover to a lagging replica serves nothing stale', () => redisFailedOver(table, dir, 2));
    it('a paused Redis adds a bounded delay and loses nothing', () => redisPaused(table, dir, 2, 3_000));
  });

  describe('warm store', () => {
    let redis: RedisNode | undefined;
    beforeAll(async () => {
      if (redisLabSkipReason() === undefined) redis = await startRedisNode({ dir: join(dir, 'writers-redis') });
    });
    afterAll(async () => {
      await redis?.close();
    });

    it('SQLite: kill -9 of writers at random moments loses no acknowledged write', () => writersKilled(table, writer, { name: 'sqlite', db: join(dir, 'killed.db') }, redis?.url, 6, random));

    describeWithService(
      'postgres',
      process.env.DATABASE_URL,
      (url) => {
        it('PostgreSQL: kill -9 of writers at random moments loses no acknowledged write', async () => {
          const schema = await createTempSchema(url, 'faults');
          try {
            await writersKilled(table, writer, { name: 'postgresql', db: url, searchPath: schema.name }, redis?.url, 6, random);
          } finally {
            await schema.drop();
          }
        });
      },
      { check: postgresReady },
    );
  });

  describe('cold store and archives', () => {
    it('every flipped byte of an object file is caught', () => objectsCorrupted(table, join(dir, 'objects'), 40, random));
    it('every hostile archive is refused and writes nothing', async () => {
      const env = await createDagEnv();
      try {
        await archivesHostile(table, env);
      } finally {
        await env.close();
      }
    });
  });
});
