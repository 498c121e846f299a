/**
 * Branches made from snapshots (`ctxvm branch <snapshot>`: materialize, branch, record the edge)
 * resume in the real agents under their new id: the shared probes resume them and must report no
 * findings and the branch's id. Gated like the other real-agent tests: CI=true or
 * CTXVM_AGENT_TESTS=1 (they install Claude Code and Codex into ~/.cache/ctxvm-agents).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installAgentClis, probe, SHARED_TOOLS, type AgentBins } from '../support/agent-probes.js';
import { populateAgentHomes, type PlacedSession } from '../support/agent-homes.js';
import { CORPUS_DIR } from '../support/corpus.js';
import { createDagEnv, type DagEnv } from '../support/dag-env.js';
import { runCliInProcess } from '../support/run-cli.js';

const haveShared = existsSync(CORPUS_DIR) && existsSync(join(SHARED_TOOLS, 'claude-resume-probe.mjs'));
const enabled = haveShared && (process.env.CI === 'true' || process.env.CTXVM_AGENT_TESTS === '1');
if (!enabled) console.warn(haveShared ? 'skipping real-agent DAG tests: set CTXVM_AGENT_TESTS=1 (CI runs them)' : 'skipping real-agent DAG tests: ../shared not found');

let env: DagEnv;
let placed: PlacedSession[];
let bins: AgentBins;
const ctxvm = (...args: string[]) => runCliInProcess(args, env.env, env.root);

beforeAll(async () => {
  if (!enabled) return;
  bins = await installAgentClis();
  env = await createDagEnv();
  placed = await populateAgentHomes(env.claudeConfigDir, env.codexHome);
}, 900_000);
afterAll(async () => {
  await env?.close();
});

describe.skipIf(!enabled)('branches of snapshots resume in the real agents', () => {
  const cases: [string, (p: PlacedSession[]) => PlacedSession, string[]][] = [
    ['the largest Claude Code session, trimmed', (p) => p.filter((s) => s.agent === 'claude').sort((a, b) => b.bytes - a.bytes)[0]!, []],
    ['a Claude Code session with subagents, cut at turn 1', (p) => p.find((s) => s.id === 'a8117384-8a7e-445b-9af0-ab182dd62c51')!, ['--at', '1']],
    ['the largest Codex rollout, trimmed', (p) => p.filter((s) => s.agent === 'codex').sort((a, b) => b.bytes - a.bytes)[0]!, []],
  ];
  for (const [what, pick, extra] of cases) {
    it(what, async () => {
      const session = pick(placed);
      const name = `s-${session.id.slice(0, 8)}-${extra.length}`;
      expect((await ctxvm('snapshot', name, '--session', session.path, '--json')).code).toBe(0);
      const r = await ctxvm('branch', name, '--name', `${name}-b`, ...extra, '--json');
      expect(r.code, r.stderr).toBe(0);
      const b = r.json<{ sessionId: string; path: string; agent: 'claude' | 'codex' }>();
      expect(b.sessionId).not.toBe(session.id);
      const report = await probe(b.agent, b.path, bins);
      // a session resumed with claude-opus-5-5 (its recorded model retired or unknown) gets an empty
      // role:"system" entry the CLI itself injects (docs/resume-model.md §1.9): not about the file
      const cliOwn = (f: { rule: string; role?: string }) => f.rule === 'empty-content' && f.role === 'system';
      expect(report.findings.filter((f) => !cliOwn(f))).toEqual([]);
      expect(report.ok || report.findings.every(cliOwn)).toBe(true);
      expect(JSON.stringify(report.request)).toContain(b.sessionId);
      expect(await readFile(b.path, 'utf8')).toContain(b.sessionId);
    }, 300_000);
  }
});
