// `npm run bench`: runs every benchmark in turn. Each prints its own table with ratios against a
// floor measured in the same run. Select some with BENCH=jsonl,trim.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { root } from './lib.mjs';

const all = ["jsonl", "trim", "dag", "memory", "http"];
const chosen = process.env.BENCH ? process.env.BENCH.split(',') : all;
let failed = 0;
for (const name of chosen) {
  const r = spawnSync(process.execPath, ['--expose-gc', join(root, 'bench', `${name}.bench.mjs`)], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
