// Memory store benchmark (SQLite): ingest turns one addTurns call at a time, then search one user.
// Usage: npm run build && node bench/memory-store.bench.mjs [turns=100000] [users=1]
// Env: CTXVM_DIST (compiled sources, default ../dist), KEEP=<dir> keeps the database, SKIP_INGEST=1
// reuses it, NQ=<n> queries, SLOW=1 prints the slowest queries.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
const dist = process.env.CTXVM_DIST ?? join(fileURLToPath(new URL('.', import.meta.url)), '..', 'dist');
const { openMemoryStore } = await import(pathToFileURL(join(dist, 'memory/store/sql-memory-store.js')).href);

const require = createRequire(import.meta.url);
const TURNS = Number(process.argv[2] ?? 100_000);
const USERS = Number(process.argv[3] ?? 1);

// Deterministic PRNG.
let seed = 42;
const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);

// Vocabulary: the 20 000 most frequent multi-character words of jieba's dictionary, Zipf-sampled.
const text = Buffer.from(require('@node-rs/jieba/dict').dict).toString('utf8');
const words = text.split('\n').map((l) => l.split(' ')).filter((p) => p.length >= 2 && /^\p{Script=Han}{2,4}$/u.test(p[0]))
  .sort((a, b) => Number(b[1]) - Number(a[1])).slice(0, 20000).map((p) => p[0]);
const H = words.map((_, i) => 1 / (i + 1)); let total = H.reduce((a, b) => a + b, 0);
const cdf = []; let acc = 0; for (const h of H) cdf.push((acc += h / total));
const zipf = () => { const x = rnd(); let lo = 0, hi = cdf.length - 1; while (lo < hi) { const m = (lo + hi) >> 1; if (cdf[m] < x) lo = m + 1; else hi = m; } return words[lo]; };
const glue = ['的', '了', '我', '你', '把', '在', '和', '是', '，', '。', '吗', '也'];
const en = 'the a to of and meeting report budget deploy review friday tomorrow send please check release notes customer bug fix server database'.split(' ');
function sentence() {
  if (rnd() < 0.2) return Array.from({ length: 8 + Math.floor(rnd() * 12) }, () => en[Math.floor(rnd() * en.length)]).join(' ');
  let s = '';
  const n = 6 + Math.floor(rnd() * 14);
  for (let i = 0; i < n; i++) s += zipf() + (rnd() < 0.5 ? glue[Math.floor(rnd() * glue.length)] : '');
  return s;
}

const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]; };
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const fmt = (xs) => `p50 ${pct(xs, 50).toFixed(3)} ms  p95 ${pct(xs, 95).toFixed(3)} ms  p99 ${pct(xs, 99).toFixed(3)} ms  max ${Math.max(...xs).toFixed(2)} ms  (n=${xs.length})`;

const dir = process.env.KEEP ?? mkdtempSync(join(tmpdir(), 'ctxvm-membench-'));
const store = await openMemoryStore({ db: join(dir, 'memory.db') });
const users = Array.from({ length: USERS }, (_, i) => store.forUser(`user-${i}`));
const me = users[0];
me.search('预热'); // load jieba outside the timings
await me.search('预热');

const ingest = [];
const t0 = Date.now();
const start = Date.UTC(2025, 0, 1);
for (let i = 0; i < (process.env.SKIP_INGEST ? 0 : TURNS); i++) {
  const u = users[i % USERS];
  const turn = { id: `t${i}`, role: i % 2 ? 'assistant' : 'user', speaker: null, text: sentence(), atMs: start + i * 60_000, sessionId: `s${Math.floor(i / 50)}` };
  if (i === 1234) turn.text = '下班前把周报发给我';
  const t = process.hrtime.bigint();
  await u.addTurns([turn]);
  ingest.push(ms(t));
}
const ingestS = (Date.now() - t0) / 1000;
if (ingest.length) console.log(`ingest ${TURNS} turns, ${USERS} user(s): ${ingestS.toFixed(1)} s total; addTurns(1): ${fmt(ingest)}`);
if (ingest.length) console.log(`  last 10k: ${fmt(ingest.slice(-10_000))}`);
const bytes = statSync(join(dir, 'memory.db')).size + (statSync(join(dir, 'memory.db-wal'), { throwIfNoEntry: false })?.size ?? 0);
console.log(`  db size ${(bytes / 1e6).toFixed(1)} MB`);

// Queries: fixed phrases, plus 3-6 Zipf words (what a user message looks like), plus one from a random turn.
const fixed = ['下班前把周报发给我', '周报', '明天的会议记得提醒我', 'send the budget report by friday', '我们上次讨论的数据库方案是什么'];
const queries = [];
for (let i = 0; i < 1000; i++) {
  if (i < fixed.length * 20) queries.push(fixed[i % fixed.length]);
  else if (i % 2) queries.push(sentence());
  else queries.push(Array.from({ length: 2 + Math.floor(rnd() * 3) }, zipf).join(''));
}
const search = [];
let hits = 0;
const slow = [];
for (const q of queries.slice(0, Number(process.env.NQ ?? 1000))) {
  const t = process.hrtime.bigint();
  const r = await me.search(q, { limit: 20 });
  search.push(ms(t));
  hits += r.length;
  slow.push([ms(t), q]);
}
slow.sort((a, b) => b[0] - a[0]);
if (process.env.SLOW) for (const [t, q] of slow.slice(0, 15)) console.log('   slow', t.toFixed(2), q);
console.log(`search (limit 20): ${fmt(search)}  avg hits ${(hits / search.length).toFixed(1)}`);
// Shared machines preempt a process for whole scheduler slices (~4-8 ms); the minimum of three
// passes over the same queries shows the CPU cost without them.
const best = [...search];
for (let pass = 0; pass < 2; pass++) {
  for (const [i, q] of queries.slice(0, search.length).entries()) {
    const t = process.hrtime.bigint();
    await me.search(q, { limit: 20 });
    best[i] = Math.min(best[i], ms(t));
  }
}
console.log(`search, min of 3 passes: ${fmt(best)}`);
const fixedT = [];
for (const q of fixed) { const t = process.hrtime.bigint(); const r = await me.search(q, { limit: 20 }); fixedT.push(ms(t)); console.log(`  ${JSON.stringify(q)}: ${ms(t).toFixed(2)} ms, ${r.length} hits, top ${r[0]?.id} ${r[0]?.score.toFixed(2)}`); }
const other = [];
for (const q of queries.slice(0, 200)) { const t = process.hrtime.bigint(); await me.recentTurns(20); await me.turnNeighbours('t1234', 3, 3); other.push(ms(t)); }
console.log(`recentTurns(20)+turnNeighbours(3,3): ${fmt(other)}`);
await store.close();
if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true });
