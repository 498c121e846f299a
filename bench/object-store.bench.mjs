#!/usr/bin/env node
// Codec throughput for the cold-tier object store: which codec can the session trimmer afford in
// its hot path? Measures gzip level 1/6 and brotli quality 1/4 two ways on a JSONL file:
//   whole  — one compress call over the whole file (streaming-put shape, large objects)
//   lines  — one compress call per line (many small-to-medium objects)
//   pages  — one call per line of >= 4 KiB (what the trimmer pages out: bulky tool output,
//            base64 images, thinking blocks; small lines stay inline)
// Speed is input MB/s (1 MB = 1e6 bytes), best of --runs; ratio is stored/original.
//
// Usage: node bench/object-store.bench.mjs [--file F] [--runs N]
//   default file: generated with
//   node /work/shared/tools/gen-claude-session.mjs --target-mb 50 --out /tmp/x.jsonl
import { readFileSync } from 'node:fs';
import { gzipSync, brotliCompressSync, constants } from 'node:zlib';
import { parseArgs } from 'node:util';
import { loadavg, availableParallelism } from 'node:os';

const { values } = parseArgs({
  options: { file: { type: 'string', default: '/tmp/x.jsonl' }, runs: { type: 'string', default: '3' } },
});
const runs = Number(values.runs);
const data = readFileSync(values.file);
const lines = data.toString('utf8').split('\n').filter((l) => l.length > 0).map((l) => Buffer.from(l, 'utf8'));

const pages = lines.filter((l) => l.length >= 4096);

const codecs = {
  'gzip-1': (b) => gzipSync(b, { level: 1 }),
  'gzip-6': (b) => gzipSync(b, { level: 6 }),
  'brotli-1': (b) => brotliCompressSync(b, brotliOptions(1, b.length)),
  'brotli-4': (b) => brotliCompressSync(b, brotliOptions(4, b.length)),
};

// Same parameters as src/store/object-codec.ts uses for whole buffers.
function brotliOptions(quality, size) {
  return {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: quality,
      [constants.BROTLI_PARAM_SIZE_HINT]: size,
    },
  };
}

function measure(compress, inputs) {
  let best = Infinity;
  let stored = 0;
  for (let r = 0; r < runs; r++) {
    stored = 0;
    const t0 = process.hrtime.bigint();
    for (const input of inputs) stored += compress(input).length;
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    best = Math.min(best, ms);
  }
  return { ms: best, stored };
}

const total = data.length;
console.log(`file ${values.file}: ${(total / 1e6).toFixed(1)} MB, ${lines.length} lines (${pages.length} >= 4 KiB), node ${process.version}, load ${loadavg()[0].toFixed(1)} on ${availableParallelism()} CPUs`);
console.log('codec      shape  MB/s    ratio');
for (const [name, compress] of Object.entries(codecs)) {
  for (const [shape, inputs] of [['whole', [data]], ['lines', lines], ['pages', pages]]) {
    const bytes = inputs.reduce((n, b) => n + b.length, 0);
    const { ms, stored } = measure(compress, inputs);
    const mbps = bytes / 1e6 / (ms / 1000);
    console.log(`${name.padEnd(10)} ${shape.padEnd(6)} ${mbps.toFixed(0).padStart(5)}  ${(stored / bytes).toFixed(3)}`);
  }
}
