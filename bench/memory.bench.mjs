// `npm run bench:memory`: the memory engine's benchmarks in turn — extraction on MASSIVE, retrieval
// on LoCoMo and MADial-Bench, latency at 100k memories. Select some with BENCH_MEMORY=extract,latency.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './lib.mjs';

const all = ['memory-extract', 'memory-retrieval', 'memory-latency'];
const chosen = process.env.BENCH_MEMORY ? process.env.BENCH_MEMORY.split(',').map((n) => (n.startsWith('memory-') ? n : `memory-${n}`)) : all;
let failed = 0;
for (const name of chosen) {
  const file = join(root, 'bench', `${name}.bench.mjs`);
  if (!existsSync(file)) {
    console.error(`bench:memory: ${name} is missing`);
    failed++;
    continue;
  }
  console.log(`\n=== ${name} ===`);
  const r = spawnSync(process.execPath, ['--expose-gc', file, ...process.argv.slice(2)], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
