// Cold-tier object store: which codec can the session trimmer afford in its hot path, and what
// does a durable put cost? Input: ~50 MB of synthetic Claude Code JSONL (generated, or --file F).
//
// 1. Codecs (node:zlib only, same parameters as src/store/object-codec.ts), three input shapes:
//    whole  one call over the whole file (streaming-put shape, large objects)
//    lines  one call per line (many small-to-medium objects)
//    pages  one call per line of >= 4 KiB (what the trimmer pages out: bulky tool output, base64
//           images, thinking blocks; small lines stay inline)
//    Speed is input MB/s (1 MB = 1e6 bytes), best of --runs, so other jobs on a shared machine
//    distort it less; ratio is stored/original.
// 2. Store puts of the pages through dist/ (run `npm run build` first; skipped without dist/):
//    one at a time and 16 in flight, each an atomic write with fsync of file and directory.
//
// Usage: node bench/object-store.bench.mjs [--file F] [--runs N] [--mb M]
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { gzipSync, brotliCompressSync, constants } from 'node:zlib';
import { parseArgs } from 'node:util';
import { loadavg, availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { root, sharedDir, table } from './lib.mjs';

const { values } = parseArgs({
  options: { file: { type: 'string' }, runs: { type: 'string', default: '3' }, mb: { type: 'string', default: '50' } },
});
const runs = Number(values.runs);
const scratch = mkdtempSync(join(tmpdir(), 'ctxvm-bench-objects-'));
let file = values.file;
if (!file) {
  file = join(scratch, 'session.jsonl');
  const gen = join(sharedDir, 'tools', 'gen-claude-session.mjs');
  const r = spawnSync(process.execPath, [gen, '--target-mb', values.mb, '--out', file], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(1);
}

const data = readFileSync(file);
const lines = data.toString('utf8').split('\n').filter((l) => l.length > 0).map((l) => Buffer.from(l, 'utf8'));
const pages = lines.filter((l) => l.length >= 4096);
const sum = (bufs) => bufs.reduce((n, b) => n + b.length, 0);

// Same parameters as src/store/object-codec.ts uses for whole buffers.
const brotliOptions = (quality, size) => ({
  params: { [constants.BROTLI_PARAM_QUALITY]: quality, [constants.BROTLI_PARAM_SIZE_HINT]: size },
});
const codecs = {
  'gzip-1': (b) => gzipSync(b, { level: 1 }),
  'gzip-6': (b) => gzipSync(b, { level: 6 }),
  'brotli-1': (b) => brotliCompressSync(b, brotliOptions(1, b.length)),
  'brotli-4': (b) => brotliCompressSync(b, brotliOptions(4, b.length)),
};

function bestOf(compress, inputs) {
  let best = Infinity;
  let stored = 0;
  for (let r = 0; r < runs; r++) {
    stored = 0;
    const t0 = process.hrtime.bigint();
    for (const input of inputs) stored += compress(input).length;
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return { seconds: best, stored };
}

console.log(
  `${file}: ${(data.length / 1e6).toFixed(1)} MB, ${lines.length} lines (${pages.length} >= 4 KiB), ` +
    `node ${process.version}, load ${loadavg()[0].toFixed(1)} on ${availableParallelism()} CPUs, best of ${runs}`,
);
const rows = [];
for (const [name, compress] of Object.entries(codecs)) {
  const row = { codec: name };
  for (const [shape, inputs] of [['whole', [data]], ['lines', lines], ['pages', pages]]) {
    const { seconds, stored } = bestOf(compress, inputs);
    row[`${shape} MB/s`] = (sum(inputs) / 1e6 / seconds).toFixed(0);
    row[`${shape} ratio`] = (stored / sum(inputs)).toFixed(3);
  }
  rows.push(row);
}
table(rows);

const driver = join(root, 'dist', 'store', 'drivers', 'objects-fs.js');
if (existsSync(driver)) {
  const { createFsObjectStore } = await import(driver);
  const sample = pages.slice(0, 1000);
  const bytes = sum(sample);
  const putRows = [];
  for (const codec of ['brotli', 'none']) {
    for (const inFlight of [1, 16]) {
      const store = createFsObjectStore({ root: join(scratch, `objects-${codec}-${inFlight}`), codec });
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < sample.length; i += inFlight) await Promise.all(sample.slice(i, i + inFlight).map((p) => store.put(p)));
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      putRows.push({ codec, 'in flight': inFlight, objects: sample.length, 'MB/s': (bytes / 1e6 / seconds).toFixed(1), 'ms/put': ((seconds * 1000) / sample.length).toFixed(2) });
    }
  }
  console.log('\nstore.put of pages (atomic, fsync file + directory):');
  table(putRows);
} else {
  console.log('\n(store.put section skipped: run `npm run build` for dist/)');
}
rmSync(scratch, { recursive: true, force: true });
