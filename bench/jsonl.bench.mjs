// JSONL reader throughput on a generated ~100 MB file, next to a plain fs.createReadStream read
// and a naive readline + JSON.parse pass, all in the same run. Prints medians of 5 runs.
import { createReadStream, createWriteStream, statSync, rmSync, mkdtempSync } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { timeMedian, mbps, table, requireDist, root } from './lib.mjs';

requireDist();
const { readLines, readJsonl } = await import(join(root, 'dist', 'index.js'));

const targetMb = Number(process.env.BENCH_JSONL_MB ?? 100);
const dir = mkdtempSync(join(tmpdir(), 'ctxvm-bench-jsonl-'));
const file = join(dir, 'input.jsonl');

async function generate() {
  // mixed line sizes like an agent log: many small lines, some tool outputs of 10-200 KB
  const out = createWriteStream(file);
  let bytes = 0, i = 0;
  const blob = 'lorem ipsum dolor sit amet, 周报 consectetur '.repeat(5000);
  while (bytes < targetMb * 1024 * 1024) {
    const size = i % 50 === 0 ? 10_000 + ((i * 7919) % 190_000) : 100 + ((i * 31) % 900);
    const line = JSON.stringify({ type: i % 3 ? 'assistant' : 'user', uuid: `u-${i}`, parentUuid: `u-${i - 1}`, message: { content: blob.slice(0, size) } }) + '\n';
    if (!out.write(line)) await once(out, 'drain');
    bytes += Buffer.byteLength(line);
    i++;
  }
  out.end();
  await once(out, 'finish');
}

await generate();
const bytes = statSync(file).size;
const runs = Number(process.env.BENCH_RUNS ?? 5);

const floor = await timeMedian(async () => {
  let n = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) n += chunk.length;
  if (n !== bytes) throw new Error('short read');
}, runs);
const lines = await timeMedian(async () => {
  let n = 0;
  for await (const l of readLines(file)) n += l.bytes.length;
}, runs);
const parsed = await timeMedian(async () => {
  let n = 0;
  for await (const r of readJsonl(file)) if (r.value) n++;
}, runs);
const naive = await timeMedian(async () => {
  let n = 0;
  const rl = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const l of rl) if (l) { JSON.parse(l); n++; }
}, runs);

console.log(`\nJSONL reader on ${(bytes / 1024 / 1024).toFixed(1)} MiB (median of ${runs} runs)`);
table([
  { pass: 'fs.createReadStream (floor)', 'MB/s': mbps(bytes, floor).toFixed(0), 'vs floor': '1.00x' },
  { pass: 'ctxvm readLines', 'MB/s': mbps(bytes, lines).toFixed(0), 'vs floor': (floor / lines).toFixed(2) + 'x' },
  { pass: 'ctxvm readJsonl (parse)', 'MB/s': mbps(bytes, parsed).toFixed(0), 'vs floor': (floor / parsed).toFixed(2) + 'x' },
  { pass: 'readline + JSON.parse', 'MB/s': mbps(bytes, naive).toFixed(0), 'vs floor': (floor / naive).toFixed(2) + 'x' },
]);
rmSync(dir, { recursive: true, force: true });
