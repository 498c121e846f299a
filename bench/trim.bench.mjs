// `npm run bench:trim`: trim throughput and peak RSS on generated sessions of three shapes, each
// against the reference trimmer (../shared/reference/claude-code-cmv, `trimJsonl`, threshold 500)
// and the naive readline + JSON.parse + JSON.stringify floor, measured in the same run; then
// reduction, validity and restore over every real session in ../shared/corpus/sessions against
// the reference trimmer, per folder and by tune/check half (trim-reduction.mjs).
//
// Shapes: `auto` (compactions spread through the file: most bytes lie before the last boundary
// and are skimmed), `live0` and `live2` (0 and 2 compactions with a long tail after the last
// boundary, what sessions on 1M-token models look like: most bytes are live and trimmed).
// BENCH_TRIM_SHAPES (default auto,live0,live2) and BENCH_TRIM_MB (default 10,100,500) pick them,
// BENCH_RUNS (default 3) the runs; BENCH_TRIM_TOKENS=off skips counting tokens of the generated
// files and BENCH_TRIM_CORPUS=off the corpus and calibration tables. The trim is timed as the
// library's raw throughput (no token counts) and, as "counted", as `ctxvm session trim` runs it:
// with the exact token counts of both files it prints (BENCH_TRIM_COUNTED=off skips that). Each run measures the three
// in a fresh process each, in an order that rotates from run to run; a ratio is the median of the
// per-run ratios, so load drift hits both sides of it. Wall time is what the ratios use; CPU time
// (user + system, all threads) is printed too, since it depends less on how busy the machine is,
// and so is the load average.
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
const shapes = (process.env.BENCH_TRIM_SHAPES ?? 'auto,live0,live2').split(',');
const runs = Number(process.env.BENCH_RUNS ?? 3);
const countTokens = process.env.BENCH_TRIM_TOKENS !== 'off';
const corpusToo = process.env.BENCH_TRIM_CORPUS !== 'off';
const countedToo = process.env.BENCH_TRIM_COUNTED !== 'off';
const gen = join(sharedDir, 'tools', 'gen-claude-session.mjs');
if (!existsSync(gen)) {
  console.error(`bench:trim needs ${gen} (../shared next to the repository)`);
  process.exit(2);
}
const hasReference = existsSync(join(sharedDir, 'reference', 'claude-code-cmv', 'dist', 'core', 'trimmer.js'));
const generatorArgs = {
  auto: ['--compactions', 'auto', '--images', 'on', '--edge-cases', 'on'],
  // the edge cases include a compaction: live0 goes without them, to have none
  live0: ['--profile', 'mixed-tools', '--compactions', '0', '--images', 'on', '--edge-cases', 'off'],
  live2: ['--profile', 'mixed-tools', '--compactions', '2', '--images', 'on', '--edge-cases', 'on'],
};
const dir = mkdtempSync(join(tmpdir(), 'ctxvm-bench-trim-'));
const child = (mode, input, output, store) =>
  JSON.parse(execFileSync(process.execPath, [join(root, 'bench', 'trim-child.mjs'), mode, input, output, store ?? ''], { encoding: 'utf8', maxBuffer: 1 << 20 }));

const rows = [];
const loadBefore = loadavg()[0];
for (const shape of shapes) {
  if (!generatorArgs[shape]) throw new Error(`BENCH_TRIM_SHAPES: unknown shape ${shape} (auto, live0, live2)`);
  for (const mb of sizes) {
    const input = join(dir, `gen-${shape}-${mb}mb.jsonl`);
    execFileSync(process.execPath, [gen, '--target-mb', String(mb), ...generatorArgs[shape], '--seed', '7', '--out', input]);
    const bytes = statSync(input).size;
    const modes = ['trim', 'naive', ...(hasReference ? ['reference'] : []), ...(countedToo ? ['counted'] : [])];
    const m = Object.fromEntries(modes.map((k) => [k, { s: [], cpu: [], rss: [] }]));
    for (let i = 0; i < runs; i++) {
      for (let j = 0; j < modes.length; j++) {
        const mode = modes[(i + j) % modes.length];
        const store = join(dir, `store-${shape}-${mb}-${i}`);
        const r = child(mode, input, join(dir, `${mode}-${shape}-${mb}.jsonl`), mode === 'trim' || mode === 'counted' ? store : undefined);
        m[mode].s.push(r.seconds);
        m[mode].cpu.push(r.cpuSeconds);
        m[mode].rss.push(r.maxRssMb);
        rmSync(store, { recursive: true, force: true });
      }
    }
    for (const k of ['naive', 'reference', 'counted']) rmSync(join(dir, `${k}-${shape}-${mb}.jsonl`), { force: true });
    // reduction of the tokens the agent would send, measured once (not timed; BENCH_TRIM_TOKENS=off skips it)
    const trimmed = join(dir, `trim-${shape}-${mb}.jsonl`);
    let before = NaN, after = NaN, valid = true;
    if (countTokens) {
      const loadedBefore = await api.loadSession(input);
      const loadedAfter = await api.loadSession(trimmed);
      const counter = api.createTokenCounter();
      before = api.countContextTokens(loadedBefore.context, counter).tokens;
      after = api.countContextTokens(loadedAfter.context, counter).tokens;
      valid = !loadedAfter.findings.some((f) => f.severity === 'error');
    }
    const ratio = (other) => median(m[other].s.map((x, i) => x / m.trim.s[i])).toFixed(2) + 'x';
    rows.push({
      shape,
      input: `${(bytes / 1048576).toFixed(0)} MiB`,
      'trim MB/s': mbps(bytes, median(m.trim.s)).toFixed(1),
      'trim s (cpu)': `${median(m.trim.s).toFixed(2)} (${median(m.trim.cpu).toFixed(2)})`,
      ...(hasReference ? { 'ref s (cpu)': `${median(m.reference.s).toFixed(2)} (${median(m.reference.cpu).toFixed(2)})`, 'vs ref': ratio('reference') } : {}),
      'naive s (cpu)': `${median(m.naive.s).toFixed(2)} (${median(m.naive.cpu).toFixed(2)})`,
      'vs naive': ratio('naive'),
      'peak RSS trim/ref/naive MB': [m.trim, ...(hasReference ? [m.reference] : []), m.naive].map((x) => median(x.rss).toFixed(0)).join('/'),
      ...(countedToo ? { 'counted s (cpu), RSS MB': `${median(m.counted.s).toFixed(2)} (${median(m.counted.cpu).toFixed(2)}), ${median(m.counted.rss).toFixed(0)}` } : {}),
      tokens: countTokens ? `${before} → ${after}` : '-',
      reduction: countTokens ? `${((1 - after / before) * 100).toFixed(1)}%` : '-',
      valid: countTokens ? (valid ? 'yes' : 'NO') : '(checked by the trim)',
    });
    rmSync(input, { force: true });
    rmSync(trimmed, { force: true });
  }
}
console.log(`\nTrim vs the reference and the naive parse+stringify floor (median of ${runs} interleaved runs, fresh process each; "vs": how many times faster trim is, wall; generated sessions with images and edge cases; load average ${loadBefore.toFixed(1)} → ${loadavg()[0].toFixed(1)} on ${availableParallelism()} CPUs)`);
table(rows);

// every real session in the corpus, against the reference, by half
if (corpusToo) await runReductionComparison();
rmSync(dir, { recursive: true, force: true });
if (corpusToo) await runTokenCalibration();
