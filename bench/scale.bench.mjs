// Scale benchmark of the memory engine (Step 5 targets: rebuild p95 < 20 ms on PostgreSQL + Redis
// at 1M memories; hot-tier hit rate >= 80% on a replayed workload). For each warm backend:
//   1. bulk load: SCALE_USERS users x SCALE_MEMORIES memories (93% raw turns through addTurns
//      batches of SCALE_BATCH in one transaction each, the rest tasks, facts, decisions and
//      projects through the store API, with history) -> ingest throughput and database size;
//   2. uncached rebuilds: buildContext with no hot tier for random users and questions -> the
//      cost of a miss, p50/p95/p99;
//   3. replay: SCALE_REQUESTS requests from Zipf-distributed users (s = 1.1), each asking one of
//      a few recurring questions (Zipf too), with a memory write (task created or completed,
//      preference changed, a turn) for SCALE_WRITE_PCT% of the requests; simulated time moves
//      SCALE_TICK_MS per request. Through the manager with the hot tier (Redis when reachable,
//      else the in-process LRU; SCALE_HOT=lru|redis forces one) -> rebuild latency p50/p95/p99
//      and hit rates (rebuild results, cached reads, every hot-tier lookup).
//
// Usage: npm run build && node bench/scale.bench.mjs            (1000 x 1000 = 1M per backend)
//        SCALE_USERS=100 node bench/scale.bench.mjs             (quick: 100k)
// Env: SCALE_BACKENDS=sqlite,postgres  DATABASE_URL (default postgres://postgres:postgres@127.0.0.1:5432/ctxvm_test)
//      REDIS_URL (default redis://127.0.0.1:6379)  SCALE_REQUESTS (20000)  SCALE_UNCACHED (300)
//      SCALE_WRITE_PCT (5)  SCALE_TICK_MS (50)  SCALE_BATCH (500)  CTXVM_DIST (default dist/)
//      SCALE_REFRESH=0 turns refresh-ahead off (the manager's default is on with a hot tier);
//      SCALE_REFRESH=both replays twice on the same data: with it, then without
//      SCALE_RATE (100) requests/s of the replay, 0 = saturated (next request as soon as one is
//      answered); a list such as 100,0 replays once per rate
//      KEEP=1 keeps the SQLite file and the PostgreSQL schema; SCALE_SCHEMA=<kept schema> replays on a
//      kept PostgreSQL schema without loading it again (and keeps it). --json prints one JSON document.
//
// Hit rates reported for the replay (each over the replayed rebuild requests or lookups):
//   rebuildResults  THE hot-tier hit rate of the target: rebuild requests answered with a cached
//                   context (no rebuild; the only warm work left is recording access statistics);
//   exactCeiling    the most an exact whole-context cache filled only by requests could reach on
//                   this stream: requests repeating an earlier (user, question) with no write by
//                   that user in between (TTL and clock ignored). Refresh-ahead goes past it by
//                   rebuilding a user's most asked questions in the background after a write;
//                   its background rebuilds are reported next to the rebuilds made on request;
//   cachedReads     lookups of cached warm reads (task/fact/project lists, search hits, turns,
//                   neighbourhoods, the version) that the hot tier answered;
//   values          rebuild results and cached reads together (every cached value looked up);
//   hotLookups      every key the hot tier was asked for, generation tokens included.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createBenchText, ZH_SUBJ as BENCH_ZH_SUBJ, ZH_VERB } from './bench-text.mjs';
import { percentile, root } from './lib.mjs';

const env = process.env;
const dist = env.CTXVM_DIST ?? join(root, 'dist');
const load = (path) => import(pathToFileURL(join(dist, path)).href);
const json = process.argv.includes('--json');
const log = (...a) => { if (!json) console.log(...a); };
const progress = (s) => { if (!json && process.stderr.isTTY) process.stderr.write(`\r${s}\x1b[K`); };

const USERS = Number(env.SCALE_USERS ?? 1000);
const MEMORIES = Number(env.SCALE_MEMORIES ?? 1000);
const REQUESTS = Number(env.SCALE_REQUESTS ?? 20_000);
const UNCACHED = Number(env.SCALE_UNCACHED ?? 300);
const WRITE_PCT = Number(env.SCALE_WRITE_PCT ?? 5);
const TICK_MS = Number(env.SCALE_TICK_MS ?? 50);
const BATCH = Number(env.SCALE_BATCH ?? 500);
// Replays to run: with refresh-ahead ('1', the default), without ('0'), or both on the same data,
// one after the other, each with a fresh hot tier and the same request stream ('both').
// Request pacing of the replay, requests/s; 0 sends each request as soon as the previous one is
// answered (a saturated process: background work then competes with every request). A list
// ('100,0') replays once per rate.
const RATES = (env.SCALE_RATE ?? '100').split(',').map(Number);
const REFRESH_MODES = env.SCALE_REFRESH === 'both' ? [true, false] : [env.SCALE_REFRESH !== '0'];
const BACKENDS = (env.SCALE_BACKENDS ?? 'sqlite,postgres').split(',').map((s) => s.trim()).filter(Boolean);
const PG_URL = env.DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/ctxvm_test';
const REDIS_URL = env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const { openWarmDatabase } = await load('store/warm/open.js');
const { createSqlMemoryStore } = await load('memory/store/sql-memory-store.js');
const { createCachedMemoryStore } = await load('memory/cached-memory-store.js');
const { createMemoryManager } = await load('memory/manager.js');
const { createLruHotCache } = await load('store/drivers/hot-lru.js');
const { createRedisHotCache } = await load('store/drivers/hot-redis.js');
const { createTokenCounter } = await load('text/tokens.js');

// --- deterministic data ---------------------------------------------------------------------
const { rnd, pick, sentence, reseed, ZH_SUBJ } = createBenchText({ zhSubjects: [...BENCH_ZH_SUBJ, '数据库方案', '培训', '报销'] });
// Recurring and related questions: what users ask their assistant again and again.
const QUESTIONS = ['我今天有什么任务？', 'what are my open tasks?', '周报什么时候交？', 'when is the budget review?', '项目评审准备得怎么样了？', '上次讨论的数据库方案是什么？', 'what did we decide about the release notes?', '帮我总结一下本周的工作', 'remind me what is due this week', '客户会议的结论是什么？'];

/** Zipf sampler over 0..n-1 with exponent s (rank 0 most frequent). */
function zipf(n, s) {
  const cdf = [];
  let acc = 0;
  for (let i = 1; i <= n; i++) cdf.push((acc += 1 / i ** s));
  for (let i = 0; i < n; i++) cdf[i] /= acc;
  return () => {
    const x = rnd();
    let lo = 0, hi = n - 1;
    while (lo < hi) { const m = (lo + hi) >> 1; if (cdf[m] < x) lo = m + 1; else hi = m; }
    return lo;
  };
}

const T0 = Date.parse('2026-01-05T00:00:00Z');
const userId = (i) => `user-${String(i).padStart(5, '0')}`;
const stats = (xs) => ({ n: xs.length, p50: round(percentile(xs, 50)), p95: round(percentile(xs, 95)), p99: round(percentile(xs, 99)), max: round(Math.max(...xs)) });
const round = (x) => Math.round(x * 100) / 100;
const since = (t) => Number(process.hrtime.bigint() - t) / 1e6;

// --- backends -------------------------------------------------------------------------------
async function openBackend(name) {
  if (name === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'ctxvm-scale-'));
    const file = join(dir, 'ctxvm.db');
    const db = await openWarmDatabase({ db: file });
    return {
      db,
      where: file,
      async size() {
        let bytes = 0;
        for (const f of [file, `${file}-wal`]) bytes += (await stat(f).catch(() => ({ size: 0 }))).size;
        return bytes;
      },
      async dispose() {
        await db.close();
        if (!env.KEEP) await rm(dir, { recursive: true, force: true });
      },
    };
  }
  if (name === 'postgres') {
    const { default: pg } = await import('pg');
    const reuse = env.SCALE_SCHEMA ?? null;
    if (reuse !== null && !/^ctxvm_scale_[a-z0-9]+$/.test(reuse)) throw new Error(`SCALE_SCHEMA=${reuse}: expected a schema a KEEP=1 run left, such as ctxvm_scale_mf3k2a1b`);
    const schema = reuse ?? `ctxvm_scale_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    if (!reuse) await admin.query(`CREATE SCHEMA ${schema}`);
    const db = await openWarmDatabase({ db: PG_URL, postgres: { searchPath: schema, poolSize: 4 } });
    return {
      db,
      reused: reuse !== null,
      where: `${PG_URL.replace(/:[^:@/]+@/, ':***@')} schema ${schema}${reuse ? ' (kept from an earlier run, not loaded again)' : ''}`,
      async size() {
        const r = await admin.query(`SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')`, [schema]);
        return Number(r.rows[0].n);
      },
      // What autovacuum does shortly after a bulk load or a replay's writes anyway: without it the
      // first queries run on plans made for empty tables, scans wade through the dead rows of
      // updated tasks and access counters, and the numbers depend on when (or, on a server with
      // autovacuum off, whether) it gets to them. Run after the load and before every replay.
      async settle() {
        const { rows } = await admin.query(`SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`, [schema]);
        for (const { relname } of rows) await admin.query(`VACUUM (ANALYZE) ${schema}.${relname}`);
      },
      async autovacuum() {
        return (await admin.query('SHOW autovacuum')).rows[0].autovacuum;
      },
      async dispose() {
        await db.close();
        if (!env.KEEP && !reuse) await admin.query(`DROP SCHEMA ${schema} CASCADE`);
        await admin.end();
      },
    };
  }
  throw new Error(`unknown backend ${name}`);
}

async function openHot(tag) {
  const want = env.SCALE_HOT ?? 'auto';
  if (want !== 'lru') {
    const prefix = `ctxvm-scale-${tag}-${Date.now().toString(36)}`;
    const cache = await createRedisHotCache({ url: REDIS_URL, keyPrefix: prefix });
    // Probe: a Redis that is down still yields a cache (that only misses); fall back to the LRU.
    await cache.set({ userId: 'probe', kind: 'probe' }, 'k', 1, { ttlMs: 10_000 });
    if ((await cache.get({ userId: 'probe', kind: 'probe' }, 'k')) === 1) {
      return { cache, name: 'redis', async dispose() { await cache.close(); await deleteKeys(prefix); } };
    }
    await cache.close();
    if (want === 'redis') throw new Error(`SCALE_HOT=redis but ${REDIS_URL} does not answer`);
  }
  const cache = createLruHotCache({ maxEntries: 200_000, maxBytes: 512 * 1024 * 1024 });
  return { cache, name: 'lru', dispose: () => cache.close() };
}

async function deleteKeys(prefix) {
  const { createClient } = await import('redis');
  const client = createClient({ url: REDIS_URL });
  await client.connect();
  for await (const keys of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 1000 })) if (keys.length) await client.del(keys);
  client.destroy();
}

// --- phases ---------------------------------------------------------------------------------
async function bulkLoad(store) {
  const nRecords = Math.max(5, Math.round(MEMORIES * 0.07));
  const nTurns = MEMORIES - nRecords;
  const counts = { turns: 0, tasks: 0, facts: 0, decisions: 0, projects: 0 };
  const t = process.hrtime.bigint();
  let turnMs = 0;
  for (let ui = 0; ui < USERS; ui++) {
    const u = store.forUser(userId(ui));
    const at = (j) => T0 - (nTurns - j) * 600_000;
    const tt = process.hrtime.bigint();
    for (let i = 0; i < nTurns; i += BATCH) {
      const turns = [];
      for (let j = i; j < Math.min(nTurns, i + BATCH); j++) turns.push({ id: `t${j}`, role: j % 2 ? 'assistant' : 'user', speaker: null, text: sentence(), atMs: at(j), sessionId: `s${Math.floor(j / 50)}` });
      counts.turns += (await u.addTurns(turns)).added;
    }
    turnMs += since(tt);
    const projects = [];
    for (let i = 0; i < Math.max(1, Math.round(nRecords / 7)); i++, counts.projects++) projects.push(await u.ensureProject(`${pick(ZH_SUBJ)}项目${i}`));
    for (let i = 0; i < Math.round((nRecords * 3) / 7); i++, counts.tasks++) {
      const task = await u.createTask({ title: `${pick(ZH_VERB)}${pick(ZH_SUBJ)} ${i}`, dueAtMs: T0 + Math.floor(rnd() * 14 * 24) * 3_600_000, projectId: pick(projects).id, sourceTurnIds: [`t${i}`] });
      if (rnd() < 0.5) await u.updateTask(task.id, { status: 'done' });
    }
    for (let i = 0; i < Math.round((nRecords * 2) / 7); i++, counts.facts++) await u.setFact({ kind: i === 0 ? 'preference' : 'fact', key: i === 0 ? 'timeZone' : null, text: i === 0 ? 'Asia/Shanghai' : sentence() });
    for (let i = 0; i < Math.max(1, nRecords - Math.round((nRecords * 5) / 7) - projects.length); i++, counts.decisions++) await u.addDecision({ text: `决定${pick(ZH_VERB)}${pick(ZH_SUBJ)}`, rationale: sentence(), projectId: pick(projects).id });
    if (ui % 10 === 0) progress(`  loading: ${ui + 1}/${USERS} users, ${(counts.turns / (since(t) / 1000)).toFixed(0)} memories/s`);
  }
  progress('');
  const seconds = since(t) / 1000;
  const memories = Object.values(counts).reduce((a, b) => a + b, 0);
  return { seconds: round(seconds), memories, counts, memoriesPerSecond: Math.round(memories / seconds), turnsPerSecond: Math.round(counts.turns / (turnMs / 1000)) };
}

async function uncachedRebuilds(store, tokens) {
  const manager = createMemoryManager({ store, tokens, defaultTimeZone: 'Asia/Shanghai' });
  const times = [];
  await manager.buildContext(userId(0), QUESTIONS[0], { now: T0 }); // loads the extractor, tokenizer, segmenter
  for (let i = 0; i < UNCACHED; i++) {
    const t = process.hrtime.bigint();
    await manager.buildContext(userId(Math.floor(rnd() * USERS)), pick(QUESTIONS), { now: T0 + i * 61_000 });
    times.push(since(t));
    if (i % 20 === 0) progress(`  uncached rebuilds: ${i}/${UNCACHED}`);
  }
  progress('');
  return stats(times);
}

async function replay(store, hot, tokens, refreshAhead, rate) {
  reseed(4242); // the same request stream for every replay
  const startedAt = performance.now();
  const cached = createCachedMemoryStore({ store, hot });
  // Simulated time: the manager's clock (refresh-ahead rebuilds as of it) follows the replay.
  let simNow = T0;
  const clock = { now: () => simNow };
  const manager = createMemoryManager({ store: cached, hot, tokens, clock, defaultTimeZone: 'Asia/Shanghai', ...(refreshAhead ? {} : { refreshAhead: false }) });
  const nextUser = zipf(USERS, 1.1);
  const nextQuestion = zipf(QUESTIONS.length, 1.0);
  const all = [], hits = [], misses = [], writes = [];
  let rebuildHits = 0;
  // exactCeiling: per user, writes so far; per (user, question), the write count at its last request.
  const userWrites = new Map(), lastAsked = new Map();
  let repeatable = 0;
  const before = hot.stats();
  for (let i = 0; i < REQUESTS; i++) {
    if (rate > 0) {
      const wait = startedAt + (i * 1000) / rate - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    const now = (simNow = T0 + i * TICK_MS);
    const uid = userId(nextUser());
    if (rnd() * 100 < WRITE_PCT) {
      userWrites.set(uid, (userWrites.get(uid) ?? 0) + 1);
      const u = manager.user(uid);
      const t = process.hrtime.bigint();
      const what = rnd();
      if (what < 0.3) await u.createTask({ title: `${pick(ZH_VERB)}${pick(ZH_SUBJ)} new ${i}`, dueAtMs: now + 86_400_000 });
      else if (what < 0.6) {
        const open = await u.listTasks({ status: ['todo', 'doing'], limit: 50 });
        if (open.length) await u.updateTask(pick(open).id, { status: 'done' });
      } else if (what < 0.7) await u.setFact({ kind: 'preference', key: 'drink', text: pick(['tea', 'coffee', 'water']) + i });
      else await u.addTurns([{ id: `r${i}`, role: 'user', speaker: null, text: sentence(), atMs: now, sessionId: null }]);
      writes.push(since(t));
      continue;
    }
    const question = QUESTIONS[nextQuestion()];
    const asked = `${uid}\u0000${question}`;
    if (lastAsked.get(asked) === (userWrites.get(uid) ?? 0)) repeatable++;
    lastAsked.set(asked, userWrites.get(uid) ?? 0);
    const t = process.hrtime.bigint();
    const context = await manager.buildContext(uid, question, { now });
    const ms = since(t);
    all.push(ms);
    (context.cached ? hits : misses).push(ms);
    if (context.cached) rebuildHits++;
    if (i % 200 === 0) progress(`  replay: ${i}/${REQUESTS}`);
  }
  progress('');
  await manager.refreshAhead?.settled();
  const refresh = manager.refreshAhead?.stats() ?? null;
  const after = hot.stats();
  const lookups = after.hits - before.hits + (after.misses - before.misses);
  const reads = cached.readStats();
  return {
    rebuild: stats(all),
    rebuildHit: hits.length ? stats(hits) : null,
    rebuildMiss: misses.length ? stats(misses) : null,
    writes: writes.length ? stats(writes) : null,
    // Definitions in the header. `values` leaves out the generation tokens fetched alongside the
    // values, as they almost always hit.
    hitRate: {
      rebuildResults: round((100 * rebuildHits) / all.length),
      exactCeiling: round((100 * repeatable) / all.length),
      values: round((100 * (reads.hits + rebuildHits)) / Math.max(1, reads.hits + reads.misses + all.length)),
      cachedReads: round((100 * reads.hits) / Math.max(1, reads.hits + reads.misses)),
      hotLookups: round((100 * (after.hits - before.hits)) / Math.max(1, lookups)),
    },
    counts: { rebuilds: all.length, rebuildHits, reads, hotHits: after.hits - before.hits, hotMisses: after.misses - before.misses },
    hotErrors: after.errors - before.errors,
    refreshAhead: refresh,
  };
}

// --- main -----------------------------------------------------------------------------------
const tokens = createTokenCounter();
const report = { users: USERS, memoriesPerUser: MEMORIES, requests: REQUESTS, writePct: WRITE_PCT, tickMs: TICK_MS, node: process.version, results: [] };
log(`scale: ${USERS} users x ${MEMORIES} memories = ${(USERS * MEMORIES).toLocaleString('en')} per backend; replay ${REQUESTS} requests (${WRITE_PCT}% writes)`);
for (const name of BACKENDS) {
  const backend = await openBackend(name);
  try {
    const store = createSqlMemoryStore(backend.db);
    log(`\n[${name}] ${backend.where}${backend.autovacuum ? `; autovacuum ${await backend.autovacuum()} (the bench vacuums after the load and before each replay)` : ''}`);
    const ingest = backend.reused ? null : await bulkLoad(store);
    await backend.settle?.();
    const bytes = await backend.size();
    if (ingest) log(`  ingest: ${ingest.memories.toLocaleString('en')} memories in ${ingest.seconds} s = ${ingest.memoriesPerSecond.toLocaleString('en')}/s overall, turns ${ingest.turnsPerSecond.toLocaleString('en')}/s (batches of ${BATCH}); database ${(bytes / 1e6).toFixed(1)} MB`);
    const uncached = await uncachedRebuilds(store, tokens);
    log(`  rebuild, uncached (no hot tier): p50 ${uncached.p50} ms  p95 ${uncached.p95} ms  p99 ${uncached.p99} ms  (n=${uncached.n})`);
    for (const [rate, refreshAhead] of RATES.flatMap((r) => REFRESH_MODES.map((m) => [r, m]))) {
      await backend.settle?.();
      const hot = await openHot(name);
      try {
        const replayed = await replay(store, hot.cache, tokens, refreshAhead, rate);
        log(`  replay rebuild (${hot.name}, ${rate > 0 ? `${rate} requests/s` : 'saturated'}, refresh-ahead ${refreshAhead ? 'on' : 'off'}): p50 ${replayed.rebuild.p50} ms  p95 ${replayed.rebuild.p95} ms  p99 ${replayed.rebuild.p99} ms  (n=${replayed.rebuild.n}; load ${loadavg()[0].toFixed(2)})`);
        if (replayed.rebuildHit) log(`    served from the hot tier: p50 ${replayed.rebuildHit.p50} ms  p95 ${replayed.rebuildHit.p95} ms  (n=${replayed.rebuildHit.n})`);
        if (replayed.rebuildMiss) log(`    rebuilt:                  p50 ${replayed.rebuildMiss.p50} ms  p95 ${replayed.rebuildMiss.p95} ms  (n=${replayed.rebuildMiss.n})`);
        log(`    hot-tier hit rate (rebuild results): ${replayed.hitRate.rebuildResults}% of ${replayed.rebuild.n} rebuilds; exact-cache ceiling of this stream ${replayed.hitRate.exactCeiling}%`);
        if (replayed.refreshAhead) log(`    refresh-ahead: ${replayed.refreshAhead.rebuilds} background rebuilds in ${replayed.refreshAhead.passes} passes after writes (${replayed.counts.rebuilds - replayed.counts.rebuildHits} rebuilt on request)${replayed.refreshAhead.failed ? `, ${replayed.refreshAhead.failed} failed` : ''}`);
        log(`    cached reads ${replayed.hitRate.cachedReads}%; cached values (results + reads) ${replayed.hitRate.values}%; every hot lookup incl. generation tokens ${replayed.hitRate.hotLookups}%${replayed.hotErrors ? `; ${replayed.hotErrors} hot errors` : ''}`);
        report.results.push({ backend: name, hot: hot.name, rate, refreshAhead, ingest, databaseBytes: bytes, uncachedRebuild: uncached, ...replayed });
      } finally {
        await hot.dispose();
      }
    }
  } finally {
    await backend.dispose();
  }
}
if (json) console.log(JSON.stringify(report, null, 2));
