// Shared helpers for benchmarks: medians, MB/s, peak RSS sampling and table printing.
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const sharedDir = process.env.CTXVM_SHARED ?? join(root, '..', 'shared');

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/** Runs `fn` `runs` times (after one warm-up) and returns the median seconds. */
export async function timeMedian(fn, runs = 5) {
  await fn();
  const times = [];
  for (let i = 0; i < runs; i++) {
    globalThis.gc?.();
    const t0 = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return median(times);
}

export const mbps = (bytes, seconds) => bytes / 1024 / 1024 / seconds;

export function table(rows) {
  const cols = Object.keys(rows[0]);
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (vals) => vals.map((v, i) => String(v).padEnd(width[i])).join('  ');
  console.log(line(cols));
  console.log(line(width.map((w) => '-'.repeat(w))));
  for (const r of rows) console.log(line(cols.map((c) => r[c])));
}

export function requireDist() {
  if (!existsSync(join(root, 'dist', 'index.js'))) {
    console.error('bench: dist/ is missing; run `npm run build` first');
    process.exit(2);
  }
}

/** The main session files under `dir` (not subagents', tool-result files or journals), sorted. */
export function mainSessionFiles(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'subagents' && e.name !== 'tool-results') walk(p);
      } else if (e.name.endsWith('.jsonl') && !e.name.startsWith('agent-') && e.name !== 'journal.jsonl') out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}
