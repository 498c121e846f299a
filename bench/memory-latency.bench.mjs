// Memory engine latency at scale (Step 4 targets: ingest p95 <= 2 ms, rebuild p95 <= 10 ms with
// 100k memories for one user). Builds one user with N memories (default 100,000: raw turns plus
// tasks, facts and decisions) in a SQLite file in a temp folder, then measures, in the same run:
//   - ingest: manager.ingest of one new user turn (store + extract + apply), p50/p95;
//   - rebuild: manager.buildContext for varied queries with no hot cache (every call a real
//     rebuild: full-text retrieval, scoring, packing with the real tokenizer), p50/p95;
//   - floor: one FTS query alone, to show where rebuild time goes.
// Each stage reports wall-clock percentiles and the process's CPU time per operation (user +
// system, from process.cpuUsage), which a busy machine disturbs far less.
// MEMORY_BENCH_N=20000 for a quick run. MEMORY_BENCH_WORDNET=0 indexes and queries without WordNet
// concepts (the analyzer's `wordnet: false`), to weigh what they cost. `--json` prints one JSON document.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchCounts, createBenchText, fillBenchStore, ingestText, rebuildQueries } from './bench-text.mjs';
import { percentile, median, requireDist, root, table } from './lib.mjs';

requireDist();
const json = process.argv.includes('--json');
const N = Number(process.env.MEMORY_BENCH_N ?? 100_000);
const log = (...a) => { if (!json) console.log(...a); };
const { openMemoryStore } = await import(join(root, 'dist/memory/store/sql-memory-store.js'));
const { createMemoryManager } = await import(join(root, 'dist/memory/manager.js'));
const { createTokenCounter } = await import(join(root, 'dist/text/tokens.js'));
const { createSearchAnalyzer, memoizeAnalyzer } = await import(join(root, 'dist/memory/analyzer.js'));
const { rebuildContext } = await import(join(root, 'dist/memory/rebuild/index.js'));
const wordnet = process.env.MEMORY_BENCH_WORDNET !== '0';
// Without WordNet the store and the rebuilder share one analyzer (the default one has it on).
const analyzer = wordnet ? undefined : memoizeAnalyzer(createSearchAnalyzer({ wordnet: false }));

// Deterministic pseudo-random text in Chinese and English (no corpus needed).
const text = createBenchText();

const dir = await mkdtemp(join(tmpdir(), 'ctxvm-bench-memory-'));
const dbPath = join(dir, 'memory.db');
const store = await openMemoryStore({ db: dbPath, ...(analyzer ? { analyzer } : {}) });
const userId = 'bench-user';
const u = store.forUser(userId);
const t0 = Date.parse('2026-01-01T00:00:00Z');
const buildStart = process.hrtime.bigint();
const { nTasks, nFacts, nDecisions, nTurns } = benchCounts(N);
await fillBenchStore(u, text, { n: N, t0, onTurns: (i) => !json && i % 20_000 === 0 && process.stderr.write(`\rbuilding: ${i}/${nTurns} turns`) });
const buildSeconds = Number(process.hrtime.bigint() - buildStart) / 1e9;
if (!json) process.stderr.write('\r');
log(`built ${N} memories for one user (${nTurns} turns, ${nTasks} tasks, ${nFacts} facts, ${nDecisions} decisions) in ${buildSeconds.toFixed(1)} s`);

const tokens = createTokenCounter();
const rebuild = analyzer ? (user, query, options) => rebuildContext(user, query, { ...options, analyzer }) : undefined;
const manager = createMemoryManager({ store, defaultTimeZone: 'Asia/Shanghai', tokens, ...(rebuild ? { rebuild } : {}) });
const now = t0 + N * 60_000;
const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;
// CPU time of this process (user + system), ms: steadier than wall time on a loaded machine.
const cpuMs = (start) => {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
};

// ingest: one new message at a time (warm-up 50)
const ingestMs = [];
const ingestCpu = [];
for (let i = 0; i < 550; i++) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await manager.ingest(userId, [{ id: `new${i}`, role: 'user', text: ingestText(text, i), atMs: now + i * 1000 }]);
  if (i >= 50) {
    ingestMs.push(ms(start));
    ingestCpu.push(cpuMs(cpu));
  }
}

// rebuild: varied queries, no hot cache (every call rebuilds)
const queries = rebuildQueries(text);
const rebuildMs = [];
const rebuildCpu = [];
let tokensSum = 0;
for (let i = 0; i < 330; i++) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const ctx = await manager.buildContext(userId, queries[i % queries.length] + (i >= queries.length ? ` ${i}` : ''), { now });
  if (i >= 30) {
    rebuildMs.push(ms(start));
    rebuildCpu.push(cpuMs(cpu));
    tokensSum += ctx.tokens;
  }
}

// floor: the full-text query alone
const searchMs = [];
const searchCpu = [];
for (let i = 0; i < 330; i++) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await u.search(queries[i % queries.length], { limit: 50 });
  if (i >= 30) {
    searchMs.push(ms(start));
    searchCpu.push(cpuMs(cpu));
  }
}

const dbBytes = (await stat(dbPath)).size + (await stat(dbPath + '-wal').catch(() => ({ size: 0 }))).size;
await store.close();
await rm(dir, { recursive: true, force: true });

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const row = (name, xs, cpu, target) => ({
  stage: name,
  p50_ms: median(xs).toFixed(2),
  p95_ms: percentile(xs, 95).toFixed(2),
  p99_ms: percentile(xs, 99).toFixed(2),
  cpu_mean_ms: mean(cpu).toFixed(2),
  cpu_p95_ms: percentile(cpu, 95).toFixed(2),
  target: target ?? '',
  met: target ? (percentile(xs, 95) <= Number(/<=\s*([\d.]+)/.exec(target)[1]) ? 'yes' : 'NO') : '',
});
const rows = [row('ingest (1 message)', ingestMs, ingestCpu, 'p95 <= 2 ms'), row('rebuild (no cache)', rebuildMs, rebuildCpu, 'p95 <= 10 ms'), row('full-text search alone', searchMs, searchCpu)];
// Wall-clock percentiles depend on what else runs on the machine: report its load with them.
const load = loadavg().map((x) => x.toFixed(2)).join(' ');
if (json) {
  console.log(JSON.stringify({ memories: N, wordnet, buildSeconds, dbBytes, meanContextTokens: tokensSum / rebuildMs.length, loadAverage: load, rows }, null, 2));
} else {
  table(rows);
  log(`load average ${load} (1/5/15 min) on ${(await import('node:os')).cpus().length} cores`);
  log(`WordNet concepts ${wordnet ? 'on' : 'off'}; mean context tokens ${(tokensSum / rebuildMs.length).toFixed(0)}; database ${(dbBytes / 1024 / 1024).toFixed(1)} MiB`);
}
