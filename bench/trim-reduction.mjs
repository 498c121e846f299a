// Reduction of the tokens the agent would resend, ctxvm's trim at the default policy against the
// reference trimmer (../shared/reference/claude-code-cmv, trimJsonl, its default threshold 500) on
// the same real sessions of ../shared/corpus/sessions, per corpus folder (one folder = one user).
//
// The trim policy's defaults were tuned on the folders whose name hashes to an even first byte
// (sha256 of the folder name): the "tune" half. The other folders are the "check" half, never
// looked at while tuning; docs quote the check half. Every row also says whether the output is a
// session the agent resumes without a new finding and whether restore gives the input back.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { mainSessionFiles, root, sharedDir, table } from './lib.mjs';

const REFERENCE_THRESHOLD = 500;
// BENCH_TRIM_POLICY='{"tailPayloadTokens":500}' measures another policy (tune on the tune half only)
const policy = process.env.BENCH_TRIM_POLICY ? JSON.parse(process.env.BENCH_TRIM_POLICY) : undefined;

/** tune or check: the half a corpus folder belongs to. */
export function halfOf(folder) {
  return createHash('sha256').update(folder).digest()[0] % 2 === 0 ? 'tune' : 'check';
}


const pct = (x) => (typeof x === 'number' && Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : '-');
const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : undefined);

/** Measures every main session of both agents; prints the tables; returns the rows. */
export async function runReductionComparison() {
  const corpus = join(sharedDir, 'corpus', 'sessions');
  if (!existsSync(corpus)) {
    console.log(`\nreduction against the reference: skipped (no corpus at ${corpus})`);
    return [];
  }
  const api = await import(join(root, 'dist', 'index.js'));
  const referencePath = join(sharedDir, 'reference', 'claude-code-cmv', 'dist', 'core', 'trimmer.js');
  const reference = existsSync(referencePath) ? (await import(pathToFileURL(referencePath).href)).trimJsonl : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'ctxvm-bench-reduction-'));
  const store = api.createFsObjectStore({ root: join(dir, 'objects') });
  const counter = api.createTokenCounter();
  const tokensOf = async (file) => {
    const loaded = await api.loadSession(file);
    return { tokens: api.countContextTokens(loaded.context, counter).tokens, errors: loaded.findings.filter((f) => f.severity === 'error').length };
  };
  const rows = [];
  const isTty = process.stderr.isTTY;
  try {
    for (const agent of ['claude-code', 'codex']) {
      const agentDir = join(corpus, agent);
      if (!existsSync(agentDir)) continue;
      const files = mainSessionFiles(agentDir);
      for (const [i, file] of files.entries()) {
        if (isTty) process.stderr.write(`\rreduction: ${agent} ${i + 1}/${files.length}\x1b[K`);
        const folder = relative(agentDir, file).split('/')[0];
        const row = { agent, folder, half: halfOf(folder), file: relative(corpus, file) };
        try {
          const before = await tokensOf(file);
          row.tokens = before.tokens;
          const out = join(dir, 'ctxvm.jsonl');
          await api.trimSession({ input: file, output: out, store, measure: false, ...(policy ? { policy } : {}) });
          const after = await tokensOf(out);
          row.ctxvm = before.tokens ? 1 - after.tokens / before.tokens : 0;
          row.valid = after.errors <= before.errors;
          const back = join(dir, 'back.jsonl');
          const trimmed = readFileSync(out, 'utf8').includes('"ctxvm":{');
          await api.restoreSession({ input: out, output: back, store, allowUntrimmed: !trimmed });
          row.restored = readFileSync(back).equals(readFileSync(file));
          if (reference && agent === 'claude-code') {
            const refOut = join(dir, 'reference.jsonl');
            try {
              await reference(file, refOut, { threshold: REFERENCE_THRESHOLD });
              const ref = await tokensOf(refOut);
              row.reference = before.tokens ? 1 - ref.tokens / before.tokens : 0;
              row.referenceValid = ref.errors <= before.errors;
            } catch (e) {
              row.referenceError = String(e.message).split('\n')[0].slice(0, 80);
            }
          }
        } catch (e) {
          row.error = String(e.message).split('\n')[0].slice(0, 80);
        }
        rows.push(row);
      }
    }
  } finally {
    if (isTty) process.stderr.write('\r\x1b[K');
    rmSync(dir, { recursive: true, force: true });
  }
  printTables(rows, corpus);
  return rows;
}

function summary(rows) {
  const both = rows.filter((r) => typeof r.ctxvm === 'number' && typeof r.reference === 'number');
  return {
    n: rows.length,
    ctxvm: mean(rows.filter((r) => typeof r.ctxvm === 'number').map((r) => r.ctxvm)),
    reference: mean(both.map((r) => r.reference)),
    ctxvmOnBoth: mean(both.map((r) => r.ctxvm)),
    ahead: both.filter((r) => r.ctxvm > r.reference + 1e-4).length,
    both: both.length,
    invalid: rows.filter((r) => r.valid === false).length,
    notRestored: rows.filter((r) => r.restored === false).length,
    errors: rows.filter((r) => r.error).length,
  };
}

function printTables(rows, corpus) {
  const folders = [...new Set(rows.map((r) => `${r.agent}/${r.folder}`))];
  console.log(`\nReduction of the tokens resent on resume, per corpus folder: ctxvm (${policy ? `policy ${JSON.stringify(policy)}` : 'default policy'}) and the reference (threshold ${REFERENCE_THRESHOLD}) on the same files of ${corpus}`);
  table(
    folders.map((key) => {
      const [agent, folder] = key.split('/');
      const s = summary(rows.filter((r) => r.agent === agent && r.folder === folder));
      return {
        folder: key.slice(0, 44),
        half: halfOf(folder),
        sessions: s.n,
        ctxvm: pct(s.ctxvm),
        reference: agent === 'claude-code' ? pct(s.reference) : 'n/a',
        'ctxvm ahead': agent === 'claude-code' ? `${s.ahead}/${s.both}` : '-',
        'valid, restored': `${s.n - s.invalid - s.errors}/${s.n}, ${s.n - s.notRestored - s.errors}/${s.n}`,
      };
    }),
  );
  const halves = [];
  for (const agent of ['claude-code', 'codex']) {
    for (const half of ['tune', 'check', 'all']) {
      const s = summary(rows.filter((r) => r.agent === agent && (half === 'all' || r.half === half)));
      if (!s.n) continue;
      halves.push({ agent, half, sessions: s.n, 'ctxvm mean': pct(s.ctxvm), 'reference mean': agent === 'claude-code' ? pct(s.reference) : 'n/a', 'ctxvm ahead': agent === 'claude-code' ? `${s.ahead}/${s.both}` : '-', invalid: s.invalid, 'restore differs': s.notRestored, errors: s.errors });
    }
  }
  console.log('\nBy half (tune = the folders the defaults were tuned on; check = never tuned on)');
  table(halves);
  for (const r of rows.filter((x) => x.error || x.referenceError)) console.log(`${r.error ? 'ctxvm failed' : 'reference failed'}: ${r.file}: ${r.error ?? r.referenceError}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runReductionComparison();
