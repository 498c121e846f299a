// `npm run bench:trim`: trim throughput against the naive readline + JSON.parse + JSON.stringify
// floor on the same generated files (measured in the same run), peak RSS, token reduction; then
// reduction, validity and restore over every real session in ../shared/corpus/sessions against
// the reference trimmer, per folder and by tune/check half (trim-reduction.mjs).
//
// BENCH_TRIM_MB (default 10,100,500) picks the generated sizes, BENCH_RUNS (default 3) the runs
// per size; naive and trim alternate, each in a fresh process, and the ratio is the median of the
// per-run ratios. Wall time is what the ratio uses; CPU time (user + system, all threads) is
// printed too, since it barely depends on how busy the machine is, and so is the load average.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, mbps, table, requireDist, root, sharedDir } from './lib.mjs';
import { runTokenCalibration } from './token-calibration.mjs';
import { runReductionComparison } from './trim-reduction.mjs';

requireDist();
const api = await import(join(root, 'dist', 'index.js'));
const sizes = (process.env.BENCH_TRIM_MB ?? '10,100,500').split(',').map(Number);
const runs = Number(process.env.BENCH_RUNS ?? 3);
const gen = join(sharedDir, 'tools', 'gen-claude-session.mjs');
if (!existsSync(gen)) {
  console.error(`bench:trim needs ${gen} (../shared next to the repository)`);
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'ctxvm-bench-trim-'));
const child = (mode, input, output, store) =>
  JSON.parse(execFileSync(process.execPath, [join(root, 'bench', 'trim-child.mjs'), mode, input, output, store ?? ''], { encoding: 'utf8', maxBuffer: 1 << 20 }));

const rows = [];
const loadBefore = loadavg()[0];
for (const mb of sizes) {
  const input = join(dir, `gen-${mb}mb.jsonl`);
  execFileSync(process.execPath, [gen, '--target-mb', String(mb), '--compactions', 'auto', '--images', 'on', '--edge-cases', 'on', '--seed', '7', '--out', input]);
  const bytes = statSync(input).size;
  const naive = [], trim = [], rss = [], naiveRss = [], naiveCpu = [], trimCpu = [];
  for (let i = 0; i < runs; i++) {
    const n = child('naive', input, join(dir, 'naive.jsonl'));
    naive.push(n.seconds);
    naiveCpu.push(n.cpuSeconds);
    naiveRss.push(n.maxRssMb);
    const store = join(dir, `store-${mb}-${i}`);
    const t = child('trim', input, join(dir, `trim-${mb}.jsonl`), store);
    trim.push(t.seconds);
    trimCpu.push(t.cpuSeconds);
    rss.push(t.maxRssMb);
    rmSync(store, { recursive: true, force: true });
  }
  rmSync(join(dir, 'naive.jsonl'), { force: true });
  // reduction of the tokens the agent would send, measured once (not timed)
  const loadedBefore = await api.loadSession(input);
  const loadedAfter = await api.loadSession(join(dir, `trim-${mb}.jsonl`));
  const counter = api.createTokenCounter();
  const before = api.countContextTokens(loadedBefore.context, counter).tokens;
  const after = api.countContextTokens(loadedAfter.context, counter).tokens;
  const valid = !loadedAfter.findings.some((f) => f.severity === 'error');
  const tn = median(trim), nn = median(naive);
  rows.push({
    input: `${(bytes / 1048576).toFixed(0)} MiB`,
    'naive MB/s': mbps(bytes, nn).toFixed(1),
    'trim MB/s': mbps(bytes, tn).toFixed(1),
    // each run's naive and trim ran back to back: the median of their ratios shrugs off load drift
    'trim/naive': median(naive.map((n, i) => n / trim[i])).toFixed(2) + 'x',
    'cpu s naive/trim': `${median(naiveCpu).toFixed(2)}/${median(trimCpu).toFixed(2)}`,
    'cpu ratio': median(naiveCpu.map((n, i) => n / trimCpu[i])).toFixed(2) + 'x',
    'trim peak RSS': `${median(rss).toFixed(0)} MB`,
    'naive peak RSS': `${median(naiveRss).toFixed(0)} MB`,
    tokens: `${before} → ${after}`,
    reduction: `${((1 - after / before) * 100).toFixed(1)}%`,
    valid: valid ? 'yes' : 'NO',
  });
  rmSync(input, { force: true });
}
console.log(`\nTrim vs naive parse+stringify (median of ${runs} runs; generated sessions with images, auto compaction, edge cases; load average ${loadBefore.toFixed(1)} → ${loadavg()[0].toFixed(1)} on ${availableParallelism()} CPUs)`);
table(rows);

// every real session in the corpus, against the reference, by half
await runReductionComparison();
rmSync(dir, { recursive: true, force: true });
await runTokenCalibration();
