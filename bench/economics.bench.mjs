// `npm run bench:economics`: the CMV paper's economics table (arXiv 2602.22402, 76 Claude Code
// sessions of one user) reproduced on ../shared/corpus/sessions, with ctxvm's trim at the default
// policy and the reference trimmer (../shared/reference/claude-code-cmv, trimJsonl, threshold 500)
// side by side on the same Claude Code files. The reference trims Claude Code files only: Codex
// rollouts get ctxvm's numbers alone. Both trims are measured the same way: the context Claude Code
// would resend, counted as the provider bills it (calibrated to the logs' usage), priced as each
// session's model with 5-minute cache writes (BENCH_ECONOMICS_TTL=1h for the 1-hour price).
// Nothing here is tuned, so there is no tune/check split; docs/benchmarks.md has the run.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { requireDist, root, sharedDir, table } from './lib.mjs';

requireDist();
const api = await import(join(root, 'dist', 'index.js'));
const corpus = join(sharedDir, 'corpus', 'sessions');
const referencePath = join(sharedDir, 'reference', 'claude-code-cmv', 'dist', 'core', 'trimmer.js');
if (!existsSync(corpus)) {
  console.error(`bench:economics needs the corpus at ${corpus} (../shared next to the repository)`);
  process.exit(2);
}
const ttl = process.env.BENCH_ECONOMICS_TTL ?? '5m';
const REFERENCE_THRESHOLD = 500; // the reference's default (cmv trim)

/** The paper's published table ("-" where it gives no number). */
const PAPER = {
  all: { n: 76, reductionMean: 0.2, reductionPeak: 0.86, breakEvenMean: 35, contextMean: 84_000, over30: 'break even within 15 turns' },
  mixed: { n: 12, reductionMean: 0.39, breakEvenMean: 10 },
  conversational: { n: 64, reductionMean: 0.17, breakEvenMean: 40 },
};

const started = Date.now();
const isTty = process.stderr.isTTY;
const ours = await api.sessionsEconomics([corpus], {
  ttl,
  onProgress: (done, total) => isTty && process.stderr.write(`\rctxvm ${done}/${total}\x1b[K`),
});
if (isTty) process.stderr.write('\r\x1b[K');

// the reference, on the Claude Code sessions ctxvm measured, counted the same way
let referenceRows = [];
const referenceErrors = [];
if (existsSync(referencePath)) {
  const { trimJsonl } = await import(pathToFileURL(referencePath).href);
  const dir = mkdtempSync(join(tmpdir(), 'ctxvm-bench-economics-'));
  try {
    for (const s of ours.sessions.filter((x) => x.agent === 'claude')) {
      const out = join(dir, 'reference.jsonl');
      try {
        await trimJsonl(s.file, out, { threshold: REFERENCE_THRESHOLD });
        const loaded = await api.loadSession(out);
        const counter = api.createTokenCounter(s.model ? { model: s.model } : {});
        const after = api.countContextTokens(loaded.context, counter).tokens;
        const reduction = s.tokens > 0 ? Math.round((1 - after / s.tokens) * 10_000) / 10_000 : 0;
        const money = api.trimEconomics({ beforeTokens: s.tokens, afterTokens: after, price: api.priceFor(s.pricedAs), ttl });
        const valid = !loaded.findings.some((f) => f.severity === 'error');
        referenceRows.push({ ...s, trimmedTokens: after, reduction, ...money, valid });
      } catch (e) {
        referenceErrors.push({ file: s.file, reason: String(e.message).split('\n')[0] });
      } finally {
        rmSync(out, { force: true });
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else {
  console.error(`reference trimmer not found at ${referencePath}: its column is empty`);
}

const claude = ours.sessions.filter((s) => s.agent === 'claude');
const codex = ours.sessions.filter((s) => s.agent === 'codex');
const columns = {
  'paper (76, one user)': PAPER,
  [`ctxvm, Claude Code (${claude.length})`]: api.economicsGroups(claude),
  [`reference, Claude Code (${referenceRows.length})`]: api.economicsGroups(referenceRows),
  [`ctxvm, Codex (${codex.length})`]: api.economicsGroups(codex),
};
const pct = (x) => (typeof x === 'number' ? `${(x * 100).toFixed(1)}%` : '-');
const num = (x, digits = 1) => (typeof x === 'number' ? x.toFixed(digits) : '-');
const metrics = [
  ['n', (g) => (g.n === undefined ? '-' : String(g.n))],
  ['reduction mean', (g) => pct(g.reductionMean)],
  ['reduction peak', (g) => pct(g.reductionPeak)],
  ['break-even mean (calls)', (g) => (g.breakEvenMean === undefined ? '-' : `${num(g.breakEvenMean)}${g.neverBreakEven ? ` (+${g.neverBreakEven} never)` : ''}`)],
  ['break-even median', (g) => num(g.breakEvenMedian)],
  ['context mean (tokens)', (g) => (typeof g.contextMean === 'number' ? String(Math.round(g.contextMean)) : '-')],
  ['reduced >30%: share (n)', (g) => (typeof g.over30 === 'object' ? `${pct(g.over30.share)} (${g.over30.n})` : '-')],
  ['reduced >30%: break-even', (g) => (typeof g.over30 === 'object' ? num(g.over30.breakEvenMean) : (g.over30 ?? '-'))],
];
const rows = [];
for (const cls of ['all', 'mixed', 'conversational']) {
  for (const [name, get] of metrics) {
    const row = { sessions: cls === 'mixed' ? 'mixed tool' : cls, metric: name };
    for (const [col, groups] of Object.entries(columns)) row[col] = groups[cls] ? get(groups[cls]) : '-';
    rows.push(row);
  }
}
console.log(`\nbench:economics, ${new Date(started).toISOString().slice(0, 10)}: ${ours.sessions.length} sessions of ${corpus} (${ours.skipped.length} skipped), ${ttl} cache writes, each session's model's prices`);
console.log(`tokens: ${Object.entries(ours.tokenizers).map(([a, m]) => `${a} ${m}`).join('; ')}`);
table(rows);

console.log(`\nClaude Code sessions side by side (reduction of the tokens resent; break-even call)`);
const refByFile = new Map(referenceRows.map((r) => [r.file, r]));
table(
  claude.map((s) => {
    const ref = refByFile.get(s.file);
    return {
      session: s.file.slice(corpus.length + 1).replace(/\.claude\/projects\/|projects\//, '').slice(-58),
      class: s.class,
      tokens: s.tokens,
      'ctxvm': pct(s.reduction),
      'reference': ref ? pct(ref.reduction) : 'error',
      'break-even ctxvm': s.breakEvenTurn ?? 'never',
      'break-even ref': ref ? (ref.breakEvenTurn ?? 'never') : '-',
      'ref output valid': ref ? (ref.valid ? 'yes' : 'NO') : '-',
    };
  }),
);
const both = claude.filter((s) => refByFile.has(s.file));
const ahead = both.filter((s) => s.reduction > refByFile.get(s.file).reduction + 1e-4).length;
const behind = both.filter((s) => s.reduction < refByFile.get(s.file).reduction - 1e-4).length;
console.log(`ctxvm removes more than the reference on ${ahead} of ${both.length} Claude Code sessions, less on ${behind}`);
for (const s of ours.skipped) console.log(`skipped (ctxvm): ${s.file.slice(corpus.length + 1)}: ${s.reason}`);
for (const s of referenceErrors) console.log(`reference failed: ${s.file.slice(corpus.length + 1)}: ${s.reason}`);
console.log(`(${((Date.now() - started) / 1000).toFixed(0)} s; no timing is compared here)`);
