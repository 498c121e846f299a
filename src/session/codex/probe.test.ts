/**
 * The real Codex CLI against trimmed rollouts (opt-in: CTXVM_CODEX_PROBE=1; ~10 s per probe run).
 * For every corpus rollout, the resume probe records what Codex 0.169 sends for the original and
 * for the trimmed file; the history parts must agree item for item (trimmed items equal, or the
 * same call with a stubbed payload; only whole reasoning items missing), the parts Codex injects
 * must be the same, and the trimmed history must be exactly our reconstruction of the trimmed
 * file. Writes a markdown table to $CTXVM_CODEX_PROBE_REPORT (default: a temp file, printed).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createFsObjectStore } from '../../store/drivers/objects-fs.js';
import { createTokenCounter } from '../../text/tokens.js';
import { resolvePolicy } from '../trim/policy.js';
import { reconstructCodexContext } from './context.js';
import { scanCodexSession } from './scan.js';
import { codexCorpusRollouts } from './testing.js';
import { trimCodexSession } from './trim.js';
import type { CodexItem } from './types.js';
import { codexErrorFindings, validateCodexFile } from './validate.js';

const run = promisify(execFile);
const root = process.cwd();
const probe = resolve(root, '..', 'shared', 'tools', 'codex-resume-probe.mjs');
const codex = process.env.CTXVM_CODEX_BIN ?? join(homedir(), '.cache', 'ctxvm-agents', 'codex-0.169.0', 'node_modules', '.bin', 'codex');
const corpus = codexCorpusRollouts(root);
// CI runs it (.ci/run installs the CLIs first); a missing CLI there is a failure, not a skip
const inCi = process.env.CI === 'true';
const skip =
  process.env.CTXVM_CODEX_PROBE !== '1' && !inCi
    ? 'set CTXVM_CODEX_PROBE=1 to run the real Codex CLI'
    : !existsSync(probe)
      ? `${probe} not found`
      : !existsSync(codex) && !inCi
        ? `${codex} not found (bash scripts/install-agent-clis.sh, or set CTXVM_CODEX_BIN)`
        : corpus.length === 0
          ? '../shared/corpus/sessions/codex not found'
          : undefined;
if (skip) console.log(`skipping the Codex resume probe: ${skip}`);

interface ProbeReport {
  ok: boolean;
  codexExitCode: number;
  items: number;
  inputTokens: number;
  findings: unknown[];
}
type Item = Record<string, unknown>;

async function probeRequest(file: string, keep: string): Promise<{ report: ProbeReport; input: Item[] }> {
  const { stdout } = await run(process.execPath, [probe, file, '--codex', codex, '--json', '--keep-request', keep], { cwd: root, maxBuffer: 64 << 20 }).catch(
    (e: { stdout?: string }) => ({ stdout: e.stdout ?? '{}' }),
  );
  const report = JSON.parse(stdout) as ProbeReport;
  const input = existsSync(keep) ? ((JSON.parse(readFileSync(keep, 'utf8')) as { input?: Item[] }).input ?? []) : [];
  return { report, input };
}

/** Strips what differs between two runs of the same request: ids, passthrough metadata, temp paths. */
function canon(it: Item): string {
  const { id: _id, internal_chat_message_metadata_passthrough: _m, ...rest } = it;
  return JSON.stringify(rest).replace(/cxprobe-[A-Za-z0-9]+/g, 'cxprobe-X');
}

const injectedBefore = (it: Item) =>
  it.type === 'additional_tools' || (it.type === 'message' && it.role === 'developer' && JSON.stringify(it.internal_chat_message_metadata_passthrough ?? '').includes('model.base_instructions'));

function split(input: Item[], historyLength: number) {
  let start = 0;
  while (start < input.length && injectedBefore(input[start]!)) start++;
  return { before: input.slice(0, start), history: input.slice(start, start + historyLength), after: input.slice(start + historyLength) };
}

const isStubbed = (a: Item, b: Item) =>
  a.type === b.type && a.call_id === b.call_id && a.role === b.role && JSON.stringify(b).includes('[ctxvm paged out') && JSON.stringify(b).length < JSON.stringify(a).length;

async function pool<T>(items: T[], width: number, fn: (x: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(Array.from({ length: width }, async () => {
    for (let x = queue.shift(); x !== undefined; x = queue.shift()) await fn(x);
  }));
}

describe.skipIf(skip !== undefined)('the real Codex CLI resumes every trimmed corpus rollout', () => {
  it('sends the same history (stubs aside, earlier reasoning dropped) and the same injected items', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxvm-codex-probe-'));
    const store = createFsObjectStore({ root: join(dir, 'objects') });
    const tokens = createTokenCounter();
    const rows: string[] = [];
    const failures: string[] = [];
    await pool(corpus, 4, async (file) => {
      const name = basename(file, '.jsonl').replace(/^rollout-/, '');
      const trimmed = join(dir, basename(file));
      const stats = await trimCodexSession({ input: file, output: trimmed, store, policy: resolvePolicy(), tokens, check: codexErrorFindings });
      const ours = await reconstructCodexContext(await scanCodexSession(file));
      const oursTrimmed = (await validateCodexFile(trimmed)).context;
      const [a, b] = await Promise.all([probeRequest(file, join(dir, `${name}.orig.json`)), probeRequest(trimmed, join(dir, `${name}.trim.json`))]);
      if (a.input.length === 0) {
        // Codex refuses to resume a rollout of another model provider (resume-model.md §2.6): so
        // it must refuse the trimmed one too, and the validator must have said why
        const findings = (await validateCodexFile(file)).findings.map((f) => f.rule);
        if (!findings.includes('model-provider')) failures.push(`${name}: Codex sent no request for the original, and no model-provider warning explains it`);
        if (b.input.length !== 0) failures.push(`${name}: Codex resumed the trimmed rollout but not the original`);
        rows.push(`| ${name.slice(0, 19)} | not resumable (model provider) | | | | | | | | ok |`);
        return;
      }
      const A = split(a.input, ours.items.length);
      const B = split(b.input, oursTrimmed.items.length);
      const problems: string[] = [];
      if (!a.report.ok || !b.report.ok) problems.push(`probe not ok: ${JSON.stringify([a.report.findings, b.report.findings])}`);
      // the trimmed history Codex sent is exactly our reconstruction of the trimmed file
      if (JSON.stringify(B.history.map(canon)) !== JSON.stringify(oursTrimmed.items.map((x) => canon(x.item as Item)))) problems.push('trimmed history differs from reconstruction');
      // what Codex injects around the history is unchanged
      if (JSON.stringify(A.before.map(canon)) !== JSON.stringify(B.before.map(canon))) problems.push('injected items before the history differ');
      if (JSON.stringify(A.after.map(canon)) !== JSON.stringify(B.after.map(canon))) problems.push('injected items after the history differ');
      // history: trimmed items are the original's, in order, equal or stubbed; only reasoning is missing
      let j = 0;
      const missing: Item[] = [];
      let identical = 0;
      let stubbed = 0;
      for (const x of A.history) {
        const y = B.history[j];
        if (y && canon(x) === canon(y)) {
          identical++;
          j++;
        } else if (y && isStubbed(x, y)) {
          stubbed++;
          j++;
        } else missing.push(x);
      }
      if (j !== B.history.length) problems.push(`trimmed history has ${B.history.length - j} items the original does not`);
      if (missing.some((x) => x.type !== 'reasoning')) problems.push(`non-reasoning items missing: ${missing.filter((x) => x.type !== 'reasoning').map((x) => String(x.type)).join(',')}`);
      const count = (items: Item[]) => items.reduce((s, it) => s + tokens.count(JSON.stringify(it)), 0);
      const tokA = count(A.history);
      const tokB = count(B.history);
      const kinds = (items: Item[]) => {
        const c: Record<string, number> = {};
        for (const it of items) {
          const k = String(it.type).replace('function_call_output', 'fco').replace('function_call', 'fc').replace('custom_tool_call_output', 'ctco').replace('custom_tool_call', 'ctc').replace('reasoning', 'r') + (it.role ? `:${String(it.role)[0]}` : '');
          c[k] = (c[k] ?? 0) + 1;
        }
        return Object.entries(c).map(([k, v]) => `${k}×${v}`).join(' ');
      };
      rows.push(
        `| ${name.slice(0, 19)} | ${A.history.length} (${kinds(A.history)}) | ${B.history.length} (${kinds(B.history)}) | ${identical} same, ${stubbed} stubbed, ${missing.length} reasoning dropped | ${a.report.findings.length}/${b.report.findings.length} | ${A.before.length}+${A.after.length} = ${B.before.length}+${B.after.length} ${problems.some((p) => p.startsWith('injected')) ? '✗' : '✓'} | ${tokA} → ${tokB} (−${tokA ? (((tokA - tokB) / tokA) * 100).toFixed(1) : '0.0'} %) | ${a.report.inputTokens} → ${b.report.inputTokens} | ${stats.inputBytes} → ${stats.outputBytes} | ${problems.length ? problems.join('; ') : 'ok'} |`,
      );
      if (problems.length) failures.push(`${name}: ${problems.join('; ')}`);
    });
    rows.sort();
    const table = [
      '| rollout | history items sent, original | history items sent, trimmed | trimmed vs original | probe findings orig/trim | injected before+after | history tokens (o200k, JSON of items) | whole request tokens (probe) | file bytes | verdict |',
      '|---|---|---|---|---|---|---|---|---|---|',
      ...rows,
    ].join('\n');
    const out = process.env.CTXVM_CODEX_PROBE_REPORT ?? join(dir, 'codex-probe-report.md');
    writeFileSync(out, table + '\n');
    console.log(`${table}\n\nreport: ${out}`);
    expect(failures).toEqual([]);
  }, 900_000);
});
