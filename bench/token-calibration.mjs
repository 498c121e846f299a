// Token calibration against the usage the logs record (issue 22, point 4). For every corpus
// session with at least two logged requests in its current context, the first request fixes
// the system prompt and tools (its billed input minus the estimate of the messages it sent) and
// the last one is predicted: its messages' estimate plus that. Two errors per session:
//   last request  (predicted / billed) - 1                       what a user sees
//   growth        (estimated growth / billed growth) - 1         the calibration itself, stricter
// Sessions are split by user folder (sorted names, every other one) into a tune half, on which the
// coefficients are fitted, and a check half the fit never reads; both are printed, for the
// coefficients in the code and for the fitted ones.
//
// `node bench/token-calibration.mjs` runs it alone; bench:trim runs it after its corpus table.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { mainSessionFiles, requireDist, root, sharedDir, table } from './lib.mjs';

/** Sessions whose billed input grew by less than this are left out of the fit (noise: hidden per-turn text dominates). */
const FIT_MIN_GROWTH = 2000;

const sessionFiles = mainSessionFiles;

async function profiles(agentDir, agent) {
  const profile = await import(join(root, 'dist', 'session', 'usage-profile.js'));
  const { loadSession } = await import(join(root, 'dist', 'index.js'));
  const out = [];
  for (const file of sessionFiles(agentDir)) {
    const user = file.slice(agentDir.length + 1).split('/')[0];
    try {
      const loaded = await loadSession(file);
      const p = agent === 'claude' ? await profile.claudeUsageProfile(file, loaded.context) : await profile.codexUsageProfile(file);
      const { createTokenCounter } = await import(join(root, 'dist', 'index.js'));
      const requests = profile.currentSegment(p, profile.calibrationParams(agent, createTokenCounter(loaded.context.model ? { model: loaded.context.model } : {})));
      if (requests.length < 2) continue;
      out.push({ file, user, model: loaded.context.model, first: requests[0], last: requests[requests.length - 1] });
    } catch (e) {
      console.error(`token calibration: ${file}: ${e.message}`);
    }
  }
  return out;
}

const sub = (a, b) => ({ textTokens: a.textTokens - b.textTokens, encryptedChars: a.encryptedChars - b.encryptedChars, fixedTokens: a.fixedTokens - b.fixedTokens, entries: a.entries - b.entries });
const est = (f, p) => f.textTokens * p.textFactor + f.encryptedChars * p.encryptedTokensPerChar + f.fixedTokens + f.entries * p.entryTokens;

function errors(s, p) {
  const growth = s.last.inputTokens - s.first.inputTokens;
  const system = s.first.inputTokens - est(s.first.features, p);
  const predicted = system + est(s.last.features, p);
  return { growth, estGrowth: est(sub(s.last.features, s.first.features), p), predicted, billed: s.last.inputTokens };
}

function summary(sessions, paramsOf) {
  let sumPred = 0, sumBilled = 0, sumEstGrowth = 0, sumGrowth = 0, absLast = 0, absGrowth = 0, nGrowth = 0;
  for (const s of sessions) {
    const e = errors(s, paramsOf(s));
    sumPred += e.predicted;
    sumBilled += e.billed;
    absLast += Math.abs(e.predicted / e.billed - 1);
    if (e.growth >= FIT_MIN_GROWTH) {
      sumEstGrowth += e.estGrowth;
      sumGrowth += e.growth;
      absGrowth += Math.abs(e.estGrowth / e.growth - 1);
      nGrowth++;
    }
  }
  const pct = (x) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
  return {
    sessions: sessions.length,
    'last request (all)': sessions.length ? pct(sumPred / sumBilled - 1) : '-',
    'mean |last|': sessions.length ? `${((absLast / sessions.length) * 100).toFixed(1)}%` : '-',
    [`growth (≥${FIT_MIN_GROWTH / 1000}k: n)`]: nGrowth ? `${pct(sumEstGrowth / sumGrowth - 1)} (${nGrowth})` : '-',
    'mean |growth|': nGrowth ? `${((absGrowth / nGrowth) * 100).toFixed(1)}%` : '-',
    raw: { last: sumBilled ? sumPred / sumBilled - 1 : NaN, growth: sumGrowth ? sumEstGrowth / sumGrowth - 1 : NaN },
  };
}

/** Least squares on relative growth errors for the free coefficients (the others as given). */
function fit(sessions, base, free) {
  const rows = [];
  for (const s of sessions) {
    const g = s.last.inputTokens - s.first.inputTokens;
    if (g < FIT_MIN_GROWTH) continue;
    const d = sub(s.last.features, s.first.features);
    const x = { textFactor: d.textTokens, encryptedTokensPerChar: d.encryptedChars, entryTokens: d.entries };
    const fixed = d.fixedTokens + Object.keys(x).filter((k) => !free.includes(k)).reduce((acc, k) => acc + x[k] * base[k], 0);
    rows.push({ a: free.map((k) => x[k] / g), y: 1 - fixed / g });
  }
  const n = free.length;
  const ata = Array.from({ length: n }, () => new Array(n).fill(0));
  const aty = new Array(n).fill(0);
  for (const r of rows) for (let i = 0; i < n; i++) {
    aty[i] += r.a[i] * r.y;
    for (let j = 0; j < n; j++) ata[i][j] += r.a[i] * r.a[j];
  }
  const solved = n === 1 ? [aty[0] / ata[0][0]] : solve2(ata, aty);
  const out = { ...base };
  free.forEach((k, i) => (out[k] = Math.max(0, Number(solved[i].toFixed(3)))));
  return { params: out, sessions: rows.length };
}

function solve2(m, v) {
  const det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
  return [(v[0] * m[1][1] - m[0][1] * v[1]) / det, (m[0][0] * v[1] - m[1][0] * v[0]) / det];
}

/** Which coefficients are fitted for each agent (the rest keep the code's values). */
const FREE = process.env.BENCH_CALIBRATION_FREE ? JSON.parse(process.env.BENCH_CALIBRATION_FREE) : { claude: ['textFactor', 'encryptedTokensPerChar'], codex: ['entryTokens'] };

/** Runs the calibration report over `<shared>/corpus/sessions`; returns the numbers per agent. */
export async function runTokenCalibration() {
  const corpus = join(sharedDir, 'corpus', 'sessions');
  if (!existsSync(corpus)) {
    console.log(`\nToken calibration: skipped, no corpus at ${corpus}`);
    return undefined;
  }
  const { createTokenCounter } = await import(join(root, 'dist', 'index.js'));
  const { calibrationParams } = await import(join(root, 'dist', 'session', 'usage-profile.js'));
  const { findCalibration } = await import(join(root, 'dist', 'text', 'calibration.js'));
  const results = {};
  const rows = [];
  for (const [agent, folder] of [['claude', 'claude-code'], ['codex', 'codex']]) {
    const all = await profiles(join(corpus, folder), agent);
    // every user folder takes part in the split, whether or not its logs record usage
    const users = readdirSync(join(corpus, folder), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
    const tuneUsers = new Set(users.filter((_, i) => i % 2 === 0));
    const tune = all.filter((s) => tuneUsers.has(s.user));
    const check = all.filter((s) => !tuneUsers.has(s.user));
    const inCode = (s) => calibrationParams(agent, createTokenCounter(s.model ? { model: s.model } : {}));
    // the text factor is a property of the model's tokenizer: fit it on the sessions of the models it applies to
    const family = agent === 'claude' ? 'claude' : 'gpt-5';
    const ofFamily = (s) => findCalibration(s.model)?.prefix.startsWith(family.split('-')[0]) ?? false;
    const base = calibrationParams(agent, createTokenCounter({ model: family }));
    const fitted = fit(tune.filter(ofFamily), base, FREE[agent]);
    const withFitted = (s) => (ofFamily(s) ? fitted.params : inCode(s));
    for (const [half, set] of [['tune', tune], ['check', check]]) {
      rows.push({ agent, half, coefficients: 'in code', ...strip(summary(set, inCode)) });
      rows.push({ agent, half, coefficients: 'fitted on tune', ...strip(summary(set, withFitted)) });
    }
    if (process.env.BENCH_CALIBRATION_VERBOSE) {
      for (const s of all) {
        const e = errors(s, inCode(s));
        console.log(`  ${tuneUsers.has(s.user) ? 'tune ' : 'check'} ${s.file.slice(corpus.length + 1, corpus.length + 70).padEnd(69)} ${String(s.model).padEnd(26)} billed ${s.first.inputTokens}→${e.billed} predicted ${Math.round(e.predicted)} (${((e.predicted / e.billed - 1) * 100).toFixed(1)}%) growth ${e.growth} est ${Math.round(e.estGrowth)}`);
      }
    }
    results[agent] = { tuneUsers: [...tuneUsers], checkUsers: users.filter((u) => !tuneUsers.has(u)), code: base, fitted: fitted.params, fittedOn: fitted.sessions, check: summary(check, inCode).raw, tune: summary(tune, inCode).raw };
  }
  console.log(`\nToken estimate against the logs' own usage (first request fixes system + tools; last request predicted). Tune/check split by user folder.`);
  table(rows);
  for (const [agent, r] of Object.entries(results)) {
    const show = (p) => `text×${p.textFactor}, encrypted ${p.encryptedTokensPerChar}/char, +${p.entryTokens}/entry`;
    console.log(`${agent}: tune users ${r.tuneUsers.join(', ')}; check users ${r.checkUsers.join(', ')}`);
    console.log(`  in code: ${show(r.code)}; fitted on tune (${r.fittedOn} sessions growing ≥${FIT_MIN_GROWTH}): ${show(r.fitted)}`);
  }
  return results;
}

function strip({ raw: _raw, ...rest }) {
  return rest;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  requireDist();
  await runTokenCalibration();
}
