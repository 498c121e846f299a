// CPU profile of the memory latency benchmark's timed loops, one at a time, with the 100k-memory
// build kept out of it: the store is built as memory-latency.bench.mjs builds it, the benchmark's
// loops run as there (both from bench/bench-text.mjs: one generator and seed, the store fill, the
// ingested texts, the questions), and the inspector's profiler samples only the timed calls of
// one phase. Prints self time by function and by file (self time needs no stack, so await
// boundaries, which cut the stacks of async callers, do not distort it) and the time under each
// function (whole for synchronous code).
//
//   node bench/memory-latency-profile.mjs rebuild|ingest [--top 40] [--save out.cpuprofile]
//     [--sql] [--alloc] [--query TEXT]
//
// --sql also times every SQLite statement of the sampled calls (better-sqlite3's statement
// methods and `exec`, wrapped: the wrapper's own cost shows in the profile) and prints them by
// total time. --alloc also samples allocations (garbage included: what makes the young-generation
// collections that land in timed calls) and prints the bytes allocated per call by function.
// --query: the rebuilds ask only TEXT (numbered as the benchmark numbers its queries), to see
// what one kind of question costs. MEMORY_BENCH_N as in the benchmark. Not a timing: the
// sampler slows every call down.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createBenchText, fillBenchStore, ingestText, rebuildQueries } from './bench-text.mjs';
import { requireDist, root } from './lib.mjs';

requireDist();

const mode = process.argv[2];
if (mode !== 'rebuild' && mode !== 'ingest') {
  console.error('usage: node bench/memory-latency-profile.mjs rebuild|ingest [--top N] [--save file.cpuprofile] [--sql] [--alloc] [--query TEXT]');
  process.exit(2);
}
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const top = Number(arg('--top', 40));
const N = Number(process.env.MEMORY_BENCH_N ?? 100_000);
const { openMemoryStore } = await import(join(root, 'dist/memory/store/sql-memory-store.js'));
const { createMemoryManager } = await import(join(root, 'dist/memory/manager.js'));
const { createTokenCounter } = await import(join(root, 'dist/text/tokens.js'));

const dir = await mkdtemp(join(tmpdir(), 'ctxvm-latency-profile-'));
const store = await openMemoryStore({ db: join(dir, 'memory.db') });
const userId = 'bench-user';
const t0 = Date.parse('2026-01-01T00:00:00Z');
// One generator for the build and both loops, as in the benchmark: the messages ingested are
// mostly new texts (nothing memoized per text helps them), the queries come round again.
const text = createBenchText();
await fillBenchStore(store.forUser(userId), text, { n: N, t0 });
const manager = createMemoryManager({ store, defaultTimeZone: 'Asia/Shanghai', tokens: createTokenCounter() });
const now = t0 + N * 60_000;
const queries = arg('--query') ? [arg('--query')] : rebuildQueries(text);
const ingestOne = (i) => manager.ingest(userId, [{ id: `new${i}`, role: 'user', text: ingestText(text, i), atMs: now + i * 1000 }]);
const rebuildOne = (i) => manager.buildContext(userId, queries[i % queries.length] + (i >= queries.length ? ` ${i}` : ''), { now });

const sqlTimes = new Map();
if (process.argv.includes('--sql')) {
  const { createRequire } = await import('node:module');
  const Database = createRequire(join(root, 'package.json'))('better-sqlite3');
  const probe = new Database(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('SELECT 1'));
  probe.close();
  const timed = (owner, method, sqlOf) => {
    const original = owner[method];
    owner[method] = function (...params) {
      if (!sqlTimes.enabled) return original.apply(this, params);
      const start = process.hrtime.bigint();
      let result;
      try {
        return (result = original.apply(this, params));
      } finally {
        const flat = sqlOf(this, params).replace(/\s+/g, ' ');
        const key = flat.length > 220 ? `${flat.slice(0, 60)} … ${flat.slice(-150)}` : flat;
        const t = sqlTimes.get(key) ?? { calls: 0, ns: 0n, rows: 0 };
        t.calls++;
        if (Array.isArray(result)) t.rows += result.length;
        t.ns += process.hrtime.bigint() - start;
        sqlTimes.set(key, t);
      }
    };
  };
  for (const method of ['all', 'get', 'run']) timed(proto, method, (statement) => statement.source);
  timed(Database.prototype, 'exec', (_db, [sql]) => `exec ${sql}`);
}

// The benchmark's loops (550 ingests, then 330 rebuilds, the first 50 and 30 not timed there);
// only the timed calls of the phase asked for are sampled.
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 50 });
const alloc = process.argv.includes('--alloc');
const phases = { ingest: [550, 50, ingestOne], rebuild: [330, 30, rebuildOne] };
let calls = 0;
let start = 0n;
for (const [name, [count, warmUp, call]] of Object.entries(phases)) {
  for (let i = 0; i < count; i++) {
    if (name === mode && i === warmUp) {
      if (alloc) await session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
      await session.post('Profiler.start');
      sqlTimes.enabled = true;
      start = process.hrtime.bigint();
    }
    await call(i);
    if (name === mode && i >= warmUp) calls++;
  }
  if (name === mode) break;
}
const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
sqlTimes.enabled = false;
const { profile } = await session.post('Profiler.stop');
const heap = alloc ? (await session.post('HeapProfiler.stopSampling')).profile : undefined;
session.disconnect();
await store.close();
await rm(dir, { recursive: true, force: true });
const save = arg('--save');
if (save) await writeFile(save, JSON.stringify(profile));

// Self time per node from the sample deltas, then summed by function and by file.
const selfUs = new Map();
for (let i = 0; i < profile.samples.length; i++) selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + profile.timeDeltas[i]);
const where = (url) => (url ? relative(root, url.replace(/^file:\/\//, '')) : '(native)');
const keyOf = (node) => `${node.callFrame.functionName || '(anonymous)'}  ${where(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;
const byFunction = new Map();
const byFile = new Map();
let totalUs = 0;
for (const node of profile.nodes) {
  const us = selfUs.get(node.id) ?? 0;
  totalUs += us;
  const key = keyOf(node);
  byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  const file = where(node.callFrame.url);
  byFile.set(file, (byFile.get(file) ?? 0) + us);
}
// Time under each function (its own and its callees', each sample counted once per function):
// whole for synchronous code; for an async function only up to its first await.
const parentOf = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node);
const nodeById = new Map(profile.nodes.map((node) => [node.id, node]));
const inclusive = new Map();
for (const [id, us] of selfUs) {
  const seen = new Set();
  for (let node = nodeById.get(id); node; node = parentOf.get(node.id)) seen.add(keyOf(node));
  for (const key of seen) inclusive.set(key, (inclusive.get(key) ?? 0) + us);
}
const print = (title, map) => {
  console.log(`\n${title}`);
  for (const [k, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${(us / 1000 / calls).toFixed(3).padStart(8)} ms/op ${((100 * us) / totalUs).toFixed(1).padStart(5)}%  ${k}`);
};
console.log(`${mode}: ${calls} calls, ${(wallMs / calls).toFixed(2)} ms/call wall under the profiler, ${(totalUs / 1000 / calls).toFixed(2)} ms/call sampled`);
if (sqlTimes.size > 0) {
  console.log('\nSQLite statements by total time');
  let all = 0n;
  for (const t of sqlTimes.values()) all += t.ns;
  console.log(`${(Number(all) / 1e6 / calls).toFixed(3).padStart(8)} ms/op in all`);
  for (const [sql, t] of [...sqlTimes].sort((a, b) => Number(b[1].ns - a[1].ns)).slice(0, top)) console.log(`${(Number(t.ns) / 1e6 / calls).toFixed(3).padStart(8)} ms/op ${(t.calls / calls).toFixed(1).padStart(5)}/op ${(t.rows / calls).toFixed(0).padStart(5)} rows/op  ${sql}`);
}
if (heap) {
  const bytes = new Map();
  let all = 0;
  const walk = (node, parent) => {
    // A builtin (Map.set, an iterator's next) is named with the function that called it.
    const name = (n) => `${n.callFrame.functionName || '(anonymous)'}  ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
    const key = node.callFrame.url === '' && parent ? `${name(node)} ← ${name(parent)}` : name(node);
    bytes.set(key, (bytes.get(key) ?? 0) + node.selfSize);
    all += node.selfSize;
    for (const child of node.children) walk(child, node);
  };
  walk(heap.head);
  console.log(`\nallocated, by function: ${(all / 1024 / calls).toFixed(0)} KiB per call`);
  for (const [k, b] of [...bytes].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`${(b / 1024 / calls).toFixed(1).padStart(8)} KiB/op ${((100 * b) / all).toFixed(1).padStart(5)}%  ${k}`);
}
print('self time by function', byFunction);
print('self time by file', byFile);
print('time under function (synchronous parts)', new Map([...inclusive].filter(([key]) => !key.startsWith('(') && !key.includes('(native)'))));
