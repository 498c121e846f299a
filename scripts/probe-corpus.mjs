#!/usr/bin/env node
// probe-corpus.mjs — run the real-CLI resume probes (../shared/tools/{claude,codex}-resume-probe.mjs)
// over session files and keep what each agent actually sent to the model, as ground truth for
// ctxvm's context reconstruction and validator.
//
//   node scripts/probe-corpus.mjs [--out DIR] [--jobs N] [--only SUBSTR] [FILE_OR_DIR ...]
//
// Defaults: every *.jsonl under ../shared/corpus/sessions/{claude-code,codex}, out
// /tmp/probe-ground-truth, 4 parallel jobs. The agent of a file is taken from its first line
// (Codex rollouts start with {type:"session_meta"}). Binaries: $CLAUDE_BIN / $CODEX_BIN, else the
// output of scripts/install-agent-clis.sh. Run from the project root so the probes resolve
// gpt-tokenizer (o200k counts instead of chars/4).
//
// Per session it writes <out>/<agent>__<rel-path-with-__>.json (the probe's --json report plus
// {elapsedMs, probeExitCode, stderr}) and, when a request was recorded, the same name with
// .request.json (the full request body). <out>/index.json summarises all runs.
import { spawn, execFileSync } from 'node:child_process';
import { readdirSync, statSync, readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { join, resolve, relative, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');
const shared = resolve(root, '../shared');
const argv = process.argv.slice(2);
let out = '/tmp/probe-ground-truth', jobs = 4, only;
const inputs = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--out') out = resolve(argv[++i]);
  else if (a === '--jobs') jobs = Number(argv[++i]);
  else if (a === '--only') only = argv[++i];
  else inputs.push(resolve(a));
}
if (!inputs.length) inputs.push(join(shared, 'corpus/sessions'));

function walk(p, acc = []) {
  const st = statSync(p);
  if (st.isFile()) { if (p.endsWith('.jsonl')) acc.push(p); return acc; }
  for (const n of readdirSync(p).sort()) walk(join(p, n), acc);
  return acc;
}
const files = inputs.flatMap(p => walk(p)).filter(f => !only || f.includes(only));

let bins = { CLAUDE_BIN: process.env.CLAUDE_BIN, CODEX_BIN: process.env.CODEX_BIN };
if (!bins.CLAUDE_BIN || !bins.CODEX_BIN) {
  const txt = execFileSync(join(here, 'install-agent-clis.sh'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  for (const l of txt.split('\n')) { const m = /^(CLAUDE_BIN|CODEX_BIN)=(.*)$/.exec(l); if (m) bins[m[1]] ||= m[2]; }
}

function agentOf(file) {
  const first = readFileSync(file, 'utf8').split('\n', 1)[0];
  try { return JSON.parse(first).type === 'session_meta' ? 'codex' : 'claude-code'; } catch { return 'claude-code'; }
}
function nameOf(file, agent) {
  const base = join(shared, 'corpus/sessions');
  const rel = file.startsWith(base) ? relative(base, file) : relative('/', file);
  return (rel.startsWith(agent + '/') ? rel : agent + '/' + rel).replace(/\.jsonl$/, '').replace(/\//g, '__');
}

function runOne(file) {
  const agent = agentOf(file);
  const name = nameOf(file, agent);
  const reqFile = join(out, name + '.request.json');
  const probe = join(shared, 'tools', agent === 'codex' ? 'codex-resume-probe.mjs' : 'claude-resume-probe.mjs');
  const args = [probe, file, agent === 'codex' ? '--codex' : '--claude', agent === 'codex' ? bins.CODEX_BIN : bins.CLAUDE_BIN, '--json', '--keep-request', reqFile];
  const t0 = Date.now();
  return new Promise(res => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let so = '', se = '';
    child.stdout.on('data', d => (so += d)); child.stderr.on('data', d => (se += d));
    child.on('close', code => {
      const elapsedMs = Date.now() - t0;
      let report;
      try { report = JSON.parse(so); } catch { report = { ok: false, error: 'probe printed no JSON', stdout: so.slice(-2000) }; }
      const rec = { ...report, agent, file, probeExitCode: code, elapsedMs, ...(se.trim() ? { stderr: se.slice(-2000) } : {}) };
      writeFileSync(join(out, name + '.json'), JSON.stringify(rec, null, 2) + '\n');
      const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
      process.stderr.write(`${(elapsedMs / 1000).toFixed(1).padStart(6)}s exit ${code} ${name} (${lines} lines) -> ${report.messages ?? report.items ?? '-'} ${agent === 'codex' ? 'items' : 'messages'}${report.findings?.length ? ', ' + report.findings.length + ' finding(s)' : ''}${report.error ? ', ' + report.error : ''}\n`);
      res({ name, agent, file, lines, probeExitCode: code, elapsedMs, ok: report.ok, sent: report.messages ?? report.items ?? null, findings: report.findings ?? [], error: report.error, request: existsSync(reqFile) ? reqFile : null });
    });
  });
}

mkdirSync(out, { recursive: true });
const results = [];
let next = 0;
await Promise.all(Array.from({ length: Math.max(1, jobs) }, async () => {
  while (next < files.length) { const f = files[next++]; results.push(await runOne(f)); }
}));
results.sort((a, b) => a.name.localeCompare(b.name));
writeFileSync(join(out, 'index.json'), JSON.stringify({ bins, generatedAt: new Date().toISOString(), results }, null, 2) + '\n');
process.stderr.write(`${results.length} sessions probed; ${results.filter(r => r.ok).length} clean; index at ${join(out, 'index.json')}\n`);
