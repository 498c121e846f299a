// Fingerprint of the contexts this checkout rebuilds from one fixed store: for a change that
// must not change what a rebuild produces (a speedup of the store's reads, of ranking
// internals), run it on both checkouts against the same store file and compare the digests.
//
//   node bench/memory-rebuild-fingerprint.mjs STORE.db [--build] [--out contexts.jsonl]
//
// --build makes STORE.db first from bench/bench-text.mjs's generator and seed: the memories of
// the latency benchmark's store (MEMORY_BENCH_N, default 100,000; the same counts and texts, in
// the same order) with a clock per record, high priority on every 17th task and a project holding
// every 25th decision, then the benchmark's 550 ingested messages (a third of them reminders: a
// few hundred open tasks). Record ids are random, so a store is built once and then shared: each
// run works on a copy. A run asks the latency benchmark's questions and a few more (finished
// tasks, dates, a project, nothing), 400 rebuilds at fixed instants, in order (each records what
// it used, which weighs in the next), and prints one SHA-256 over every context's text, tokens
// and layers. --out writes the contexts, one JSON line each, to diff.
import { createHash } from 'node:crypto';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchCounts, createBenchText, ingestText, rebuildQueries, ZH_SUBJ, ZH_VERB } from './bench-text.mjs';
import { requireDist, root } from './lib.mjs';

requireDist();
const storePath = process.argv[2];
if (!storePath || storePath.startsWith('--')) {
  console.error('usage: node bench/memory-rebuild-fingerprint.mjs STORE.db [--build] [--out contexts.jsonl]');
  process.exit(2);
}
const outIndex = process.argv.indexOf('--out');
const outPath = outIndex > 0 ? process.argv[outIndex + 1] : undefined;
const { openMemoryStore } = await import(join(root, 'dist/memory/store/sql-memory-store.js'));
const { createMemoryManager } = await import(join(root, 'dist/memory/manager.js'));
const { createTokenCounter } = await import(join(root, 'dist/text/tokens.js'));

const N = Number(process.env.MEMORY_BENCH_N ?? 100_000);
const userId = 'bench-user';
const t0 = Date.parse('2026-01-01T00:00:00Z');
const now = t0 + N * 60_000;
const manager = (store) => createMemoryManager({ store, defaultTimeZone: 'Asia/Shanghai', tokens: createTokenCounter() });

if (process.argv.includes('--build')) {
  // The latency benchmark's generator and seed, drawn from in the order its fillBenchStore draws.
  const text = createBenchText();
  const { rnd, pick, sentence } = text;
  let clock = t0;
  const store = await openMemoryStore({ db: storePath, now: () => clock });
  const u = store.forUser(userId);
  const { nTasks, nFacts, nDecisions, nTurns } = benchCounts(N);
  for (let i = 0; i < nTurns; i += 1000) {
    const turns = [];
    for (let j = i; j < Math.min(nTurns, i + 1000); j++) turns.push({ id: `b${j}`, role: j % 2 ? 'assistant' : 'user', speaker: null, text: sentence(), atMs: t0 + j * 60_000, sessionId: `s${Math.floor(j / 200)}` });
    await u.addTurns(turns);
  }
  for (let i = 0; i < nTasks; i++) {
    clock = t0 + i * 60_000;
    await u.createTask({ title: `${pick(ZH_VERB)}${pick(ZH_SUBJ)} ${i}`, status: rnd() < 0.8 ? 'done' : 'todo', priority: i % 17 === 0 ? 'high' : 'normal', dueAtMs: t0 + Math.floor(rnd() * N) * 60_000, sourceTurnIds: [`b${i}`] });
  }
  for (let i = 0; i < nFacts; i++) {
    clock = t0 + i * 60_000;
    await u.setFact({ kind: 'fact', text: sentence(), sourceTurnIds: [`b${i}`] });
  }
  const project = await u.ensureProject('服务器迁移');
  for (let i = 0; i < nDecisions; i++) {
    clock = t0 + i * 60_000;
    await u.addDecision({ text: `决定${pick(ZH_VERB)}${pick(ZH_SUBJ)}`, sourceTurnIds: [`b${i}`], ...(i % 25 === 0 ? { projectId: project.id } : {}) });
  }
  const m = manager(store);
  for (let i = 0; i < 550; i++) {
    clock = now + i * 1000;
    await m.ingest(userId, [{ id: `new${i}`, role: 'user', text: ingestText(text, i), atMs: clock }]);
  }
  await store.close();
  console.error(`built ${storePath}`);
}

const dir = await mkdtemp(join(tmpdir(), 'ctxvm-fingerprint-'));
const copy = join(dir, 'memory.db');
await copyFile(storePath, copy);
const store = await openMemoryStore({ db: copy, now: () => now });
const m = manager(store);
const queries = [
  ...rebuildQueries({ ZH_SUBJ }),
  'which tasks did I finish?',
  '上周完成了哪些任务？',
  'what did we decide on 3 March 2026?',
  '服务器迁移项目的决定',
  '',
];
const hash = createHash('sha256');
const lines = [];
for (let i = 0; i < 400; i++) {
  const query = queries[i % queries.length] + (i >= queries.length ? ` ${i}` : '');
  const at = now + Math.floor(i / 40) * 3_600_000;
  const ctx = await m.buildContext(userId, query, { now: at });
  const record = { query, at, text: ctx.text, tokens: ctx.tokens, dropped: ctx.dropped.length, layers: ctx.layers.map((l) => [l.name, l.tokens, l.items.map((it) => `${it.kind}:${it.id}:${it.compressed ? 'compressed' : 'full'}`)]) };
  hash.update(JSON.stringify(record));
  if (outPath) lines.push(JSON.stringify(record));
}
await store.close();
await rm(dir, { recursive: true, force: true });
if (outPath) await writeFile(outPath, `${lines.join('\n')}\n`);
console.log(hash.digest('hex'));
