/**
 * The real agents as judges: installs Claude Code and Codex CLI into a cache folder (not project
 * dependencies) with scripts/install-agent-clis.sh, and runs the shared resume probes, which
 * resume a session file in the real CLI against a local stand-in API and record the request.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './corpus.js';

const run = promisify(execFile);
export const SHARED_TOOLS = resolve(REPO_ROOT, '..', 'shared', 'tools');

export interface AgentBins {
  claude: string;
  codex: string;
}

/** Installs (or finds) both CLIs; resolves to their paths. */
export async function installAgentClis(): Promise<AgentBins> {
  const { stdout } = await run('bash', [join(REPO_ROOT, 'scripts', 'install-agent-clis.sh')], { cwd: REPO_ROOT, maxBuffer: 16 << 20, timeout: 600_000 });
  const bins = Object.fromEntries(
    stdout
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => l.split('=', 2) as [string, string]),
  );
  if (!bins.CLAUDE_BIN || !bins.CODEX_BIN) throw new Error(`install-agent-clis.sh printed no binaries:\n${stdout}`);
  return { claude: bins.CLAUDE_BIN, codex: bins.CODEX_BIN };
}

export interface ProbeReport {
  ok: boolean;
  messages?: number;
  messageTokens?: number;
  findings: { rule: string; message?: number; id?: string; role?: string }[];
  /** The request body the agent sent. */
  request: Record<string, unknown>;
}

/** Resumes `session` in the real agent and returns what it sent. */
export async function probe(agent: 'claude' | 'codex', session: string, bins: AgentBins): Promise<ProbeReport> {
  const dir = await mkdtemp(join(tmpdir(), 'ctxvm-probe-'));
  const keep = join(dir, 'request.json');
  const script = join(SHARED_TOOLS, agent === 'claude' ? 'claude-resume-probe.mjs' : 'codex-resume-probe.mjs');
  const args = [script, session, agent === 'claude' ? '--claude' : '--codex', agent === 'claude' ? bins.claude : bins.codex, '--json', '--keep-request', keep];
  try {
    let stdout: string;
    try {
      ({ stdout } = await run(process.execPath, args, { cwd: REPO_ROOT, maxBuffer: 64 << 20, timeout: 240_000 }));
    } catch (error) {
      // exit 1 = findings: the report is still on stdout
      stdout = (error as { stdout?: string }).stdout ?? '';
      if (!stdout.trim().startsWith('{')) throw error;
    }
    const report = JSON.parse(stdout) as Omit<ProbeReport, 'request'>;
    const request = existsSync(keep) ? (JSON.parse(await readFile(keep, 'utf8')) as Record<string, unknown>) : {};
    return { ...report, findings: report.findings ?? [], request };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

type Block = { type: string; id?: string; tool_use_id?: string; text?: string };
type Message = { role: string; content: string | Block[] };

/** The messages of a Claude request that come from the file: no system entries, no injected prompt. */
export function claudeFileMessages(request: Record<string, unknown>, prompt = 'Reply with the single word ok.'): Message[] {
  const msgs = ((request.messages as Message[]) ?? []).filter((m) => m.role !== 'system').map((m) => ({ ...m }));
  const last = msgs[msgs.length - 1];
  if (last?.role === 'user') {
    const blocks = (typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content).slice();
    if (blocks[blocks.length - 1]?.text === prompt) blocks.pop();
    while (blocks.length && blocks[blocks.length - 1]!.type === 'text' && String(blocks[blocks.length - 1]!.text).startsWith('<system-reminder>')) blocks.pop();
    if (blocks.length === 0) msgs.pop();
    else msgs[msgs.length - 1] = { ...last, content: blocks };
  }
  return msgs;
}

/** Role and tool-pairing shape of messages: "u:R(id)…|a:U(id)…" (text and thinking as t/h). */
export function claudeShape(messages: Message[]): string[] {
  return messages.map((m) => {
    const blocks = typeof m.content === 'string' ? [{ type: 'text' }] : m.content;
    const kinds = blocks
      .filter((b) => b.type === 'tool_use' || b.type === 'tool_result')
      .map((b) => (b.type === 'tool_use' ? `U${b.id}` : `R${b.tool_use_id}`))
      .join(',');
    return `${m.role}:${kinds}`;
  });
}
