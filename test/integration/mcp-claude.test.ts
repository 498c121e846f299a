/**
 * The real Claude Code CLI calls ctxvm's MCP server: `session_page_in` with a stub reference from
 * a real corpus session trimmed by ctxvm into a temp CTXVM_HOME must return the original payload.
 * Driven by ../shared/tools/claude-mcp-probe.mjs (a local stand-in API asks Claude Code to call
 * the tool and records the tool_result). Needs the built CLI (`npm run build`) and Claude Code
 * (installed into ~/.cache/ctxvm-agents by scripts/install-agent-clis.sh).
 * Gated like agent-resume.test.ts: runs in CI (CI=true) or with CTXVM_AGENT_TESTS=1.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_TOOLS } from '../../src/server/mcp.js';
import { pageIn } from '../../src/session/trim/page-in.js';
import { createFsObjectStore } from '../../src/store/drivers/objects-fs.js';
import { installAgentClis, SHARED_TOOLS, type AgentBins } from '../support/agent-probes.js';
import { CLAUDE_CORPUS_DIR, REPO_ROOT } from '../support/corpus.js';
import { containsValue, trimWithRefs } from '../support/trimmed-session.js';

const run = promisify(execFile);
const PROBE = join(SHARED_TOOLS, 'claude-mcp-probe.mjs');
const MAIN = join(REPO_ROOT, 'dist', 'cli', 'main.js');
const SESSION = join(CLAUDE_CORPUS_DIR, 'drmaciver', 'coverage-test-fix.jsonl');
const haveShared = existsSync(PROBE) && existsSync(SESSION);
const enabled = haveShared && (process.env.CI === 'true' || process.env.CTXVM_AGENT_TESTS === '1');
if (!enabled) {
  console.warn(
    haveShared
      ? 'skipping the Claude Code MCP test: set CTXVM_AGENT_TESTS=1 (CI runs it; it installs Claude Code into ~/.cache/ctxvm-agents)'
      : 'skipping the Claude Code MCP test: ../shared (corpus and claude-mcp-probe.mjs) not found',
  );
}

interface ProbeReport {
  ok: boolean;
  claudeExitCode: number;
  offeredTools: string[];
  isError: boolean | null;
  result: string | null;
  output?: string;
}

describe.skipIf(!enabled)('Claude Code calls ctxvm mcp', () => {
  let bins: AgentBins;
  let root: string;
  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} not found: run \`npm run build\` before the MCP tests`);
    bins = await installAgentClis();
    root = await mkdtemp(join(tmpdir(), 'ctxvm-mcp-claude-'));
  }, 600_000);
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('session_page_in returns the original payload of a stub', async () => {
    const home = join(root, 'ctxvm');
    const store = createFsObjectStore({ root: join(home, 'objects') });
    const refs = await trimWithRefs(SESSION, join(root, 'trimmed.jsonl'), store);
    // a text payload of a size a tool result carries whole
    let chosen: { ref: string; file: string; text: string; original: unknown } | undefined;
    for (const r of refs) {
      const p = await pageIn(store, r.ref, { files: [r.file] });
      if (p.kind === 'text' && p.text.length > 200 && p.text.length < 8_000 && containsValue(r.original, p.content)) {
        chosen = { ref: r.ref, file: r.file, text: p.text, original: r.original };
        break;
      }
    }
    expect(chosen, `no text stub among ${refs.length} references`).toBeDefined();

    const args = [PROBE, '--server', `${process.execPath} ${MAIN} mcp`, '--tool', 'session_page_in', '--input', JSON.stringify({ ref: chosen!.ref, session: chosen!.file }), '--name', 'ctxvm', '--claude', bins.claude, '--env', `CTXVM_HOME=${home}`, '--json'];
    let stdout: string;
    try {
      ({ stdout } = await run(process.execPath, args, { cwd: REPO_ROOT, maxBuffer: 16 << 20, timeout: 240_000 }));
    } catch (error) {
      stdout = (error as { stdout?: string }).stdout ?? '';
      if (!stdout.trim().startsWith('{')) throw error;
    }
    const report = JSON.parse(stdout) as ProbeReport;
    expect(report.offeredTools.sort()).toEqual(MCP_TOOLS.map((t) => `mcp__ctxvm__${t}`).sort());
    expect(report.ok, report.output).toBe(true);
    expect(report.isError).toBe(false);
    expect(report.result).toBe(chosen!.text);
    console.log(`Claude Code paged in ${chosen!.ref}: ${report.result!.length} characters, identical to the original payload`);
  }, 600_000);
});
