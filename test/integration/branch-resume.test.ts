/**
 * Branches resume in the real agents under their new id. For every corpus session: a trimmed
 * branch, and a branch cut at a middle turn, are resumed by the shared probes
 * (../shared/tools/*-resume-probe.mjs); the agent must send the branch's new id, no findings,
 * and exactly what ctxvm reconstructs for the branch. A few branches are also resumed in place —
 * from the temp CLAUDE_CONFIG_DIR / CODEX_HOME ctxvm wrote them into, in their project folder —
 * which checks the folder naming (including Claude Code's hashed names for long paths).
 * Gated like agent-resume.test.ts: CI=true or CTXVM_AGENT_TESTS=1.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeFileMessages, claudeShape, installAgentClis, probe, SHARED_TOOLS, type AgentBins } from '../support/agent-probes.js';
import { claudeMainSessions, CORPUS_DIR } from '../support/corpus.js';
import { validateSession } from '../../src/session/session.js';
import { branchSession, type BranchResult } from '../../src/session/branch/branch.js';
import { listClaudeTurns } from '../../src/session/branch/claude-cut.js';
import { listCodexTurns } from '../../src/session/branch/codex-rewrite.js';
import { reconstructClaudeContext } from '../../src/session/claude/context.js';
import { scanClaudeSession } from '../../src/session/claude/scan.js';
import { reconstructCodexContext } from '../../src/session/codex/context.js';
import { scanCodexSession } from '../../src/session/codex/scan.js';
import { createFsObjectStore } from '../../src/store/drivers/objects-fs.js';
import type { ObjectStore } from '../../src/store/object-store.js';

const haveShared = existsSync(CORPUS_DIR) && existsSync(join(SHARED_TOOLS, 'claude-resume-probe.mjs'));
const enabled = haveShared && (process.env.CI === 'true' || process.env.CTXVM_AGENT_TESTS === '1');
if (!enabled) {
  console.warn(
    haveShared
      ? 'skipping real-agent branch tests: set CTXVM_AGENT_TESTS=1 (CI runs them; they install Claude Code and Codex into ~/.cache/ctxvm-agents)'
      : 'skipping real-agent branch tests: ../shared (corpus and probes) not found',
  );
}

type Item = Record<string, unknown>;
type Msg = { role: string; content: never };

function codexRollouts(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) codexRollouts(p, out);
    else if (name.startsWith('rollout-') && name.endsWith('.jsonl')) out.push(p);
  }
  return out;
}

async function pool<T>(items: T[], width: number, fn: (x: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let x = queue.shift(); x !== undefined; x = queue.shift()) await fn(x);
    }),
  );
}

/** The session id Claude Code put in the request's metadata. */
function claudeRequestSessionId(request: Record<string, unknown>): string | undefined {
  const userId = (request.metadata as { user_id?: string } | undefined)?.user_id;
  try {
    return (JSON.parse(userId ?? '{}') as { session_id?: string }).session_id;
  } catch {
    return undefined;
  }
}

async function ourClaudeShape(file: string): Promise<string[]> {
  const ctx = await reconstructClaudeContext(await scanClaudeSession(file));
  return claudeShape(ctx.messages.map((m) => ({ role: m.role, content: m.content as never })));
}

/** Strips what differs between two requests for the same history: ids and passthrough metadata. */
function canon(it: Item): string {
  const { id: _id, internal_chat_message_metadata_passthrough: _m, ...rest } = it;
  return JSON.stringify(rest);
}
const injectedBefore = (it: Item) =>
  it.type === 'additional_tools' || (it.type === 'message' && it.role === 'developer' && JSON.stringify(it.internal_chat_message_metadata_passthrough ?? '').includes('model.base_instructions'));

/** The history part of a Codex request (what comes from the rollout). */
function codexHistory(input: Item[], length: number): Item[] {
  let start = 0;
  while (start < input.length && injectedBefore(input[start]!)) start++;
  return input.slice(start, start + length);
}

/**
 * Runs the agent against a local stand-in API, resuming session `id` from `cwd` with the given
 * config folder, and returns the first model request it sent (undefined if none). For Claude
 * Code, `id` 'continue' runs `claude --continue`: the newest session of the cwd's project folder
 * (`--resume <id>` finds a session in any project folder, so only this checks the folder name).
 * For Codex, `id` 'last' runs `codex exec resume --last`: the newest session whose cwd is `cwd`.
 */
async function resumeInPlace(agent: 'claude' | 'codex', bin: string, id: string, cwd: string, home: string): Promise<{ request?: Record<string, unknown>; output: string }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8'))).on('end', () => {
      const ev = (t: string, d: object) => res.write(`event: ${t}\ndata: ${JSON.stringify({ type: t, ...d })}\n\n`);
      if (agent === 'claude' && req.method === 'POST' && req.url?.startsWith('/v1/messages') && !req.url.includes('count_tokens')) {
        requests.push(body);
        const msg = { id: 'msg_x', type: 'message', role: 'assistant', model: 'probe', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } };
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        ev('message_start', { message: msg });
        ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
        ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'ok' } });
        ev('content_block_stop', { index: 0 });
        ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } });
        ev('message_stop', {});
        res.end();
      } else if (agent === 'codex' && req.method === 'POST' && req.url?.includes('/responses')) {
        requests.push(body);
        const item = { type: 'message', role: 'assistant', id: 'msg_x', status: 'completed', content: [{ type: 'output_text', text: 'ok', annotations: [] }] };
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        ev('response.created', { response: { id: 'resp_x', status: 'in_progress', output: [] } });
        ev('response.output_item.done', { output_index: 0, item });
        ev('response.completed', { response: { id: 'resp_x', status: 'completed', output: [item], usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } } });
        res.end();
      } else if (req.url?.includes('count_tokens')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"input_tokens":1}');
      } else {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{}');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const env: NodeJS.ProcessEnv =
    agent === 'claude'
      ? {
          ...process.env,
          CLAUDE_CONFIG_DIR: home,
          ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
          ANTHROPIC_API_KEY: 'sk-ant-probe',
          DISABLE_TELEMETRY: '1',
          DISABLE_AUTOUPDATER: '1',
          DISABLE_ERROR_REPORTING: '1',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        }
      : { ...process.env, CODEX_HOME: home, OPENAI_API_KEY: 'sk-probe' };
  if (agent === 'codex') await writeFile(join(home, 'config.toml'), `openai_base_url = "http://127.0.0.1:${port}/v1"\n`);
  const args = agent === 'claude' ? [...(id === 'continue' ? ['--continue'] : ['--resume', id]), '-p', 'Reply with the single word ok.'] : ['exec', '--skip-git-repo-check', 'resume', ...(id === 'last' ? ['--last'] : [id]), 'Reply with the single word ok.'];
  let output = '';
  try {
    await new Promise<void>((resolve) => {
      const child = spawn(bin, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      const t = setTimeout(() => child.kill('SIGKILL'), 120_000);
      child.on('close', () => {
        clearTimeout(t);
        resolve();
      });
      child.on('error', (e) => {
        output += String(e);
        clearTimeout(t);
        resolve();
      });
    });
  } finally {
    server.close();
  }
  return { ...(requests[0] ? { request: JSON.parse(requests[0]) as Record<string, unknown> } : {}), output: output.slice(-600) };
}

describe.skipIf(!enabled)('branches resume in the real agents under their new id', () => {
  let bins: AgentBins;
  let dir: string;
  let store: ObjectStore;
  beforeAll(async () => {
    bins = await installAgentClis();
    dir = await mkdtemp(join(tmpdir(), 'ctxvm-branch-agents-'));
    store = createFsObjectStore({ root: join(dir, 'objects'), durability: 'deferred' });
  }, 600_000);
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const claude = haveShared ? claudeMainSessions().filter((f) => readFileSync(f, 'utf8').includes('"sessionId"')) : [];
  const codex = haveShared ? codexRollouts(join(CORPUS_DIR, 'sessions', 'codex')) : [];

  it('Claude Code: trimmed branches and branches cut at a middle turn', async () => {
    const rows: string[] = [];
    const failures: string[] = [];
    const jobs: { file: string; at?: number }[] = [];
    for (const file of claude) {
      jobs.push({ file });
      const turns = (await listClaudeTurns(await scanClaudeSession(file))).length;
      if (turns >= 2) jobs.push({ file, at: Math.ceil(turns / 2) });
    }
    await pool(jobs, 4, async ({ file, at }) => {
      const name = `${basename(file)}${at ? ` --at ${at}` : ''}`;
      let r: BranchResult;
      try {
        r = await branchSession({ source: file, store, claudeConfigDir: join(dir, 'claude'), codexHome: join(dir, 'codex'), scratchDir: join(dir, 'ctxvm', 'tmp'), measure: false, ...(at ? { at } : {}) });
      } catch (e) {
        failures.push(`${name}: branch failed: ${(e as Error).message}`);
        return;
      }
      const report = await probe('claude', r.path, bins);
      const problems: string[] = [];
      const findings = report.findings.filter((f) => f.rule !== 'empty-content'); // the CLI's own system entries (resume-model.md §1.9)
      if (findings.length) problems.push(`findings ${JSON.stringify(findings)}`);
      const sentId = claudeRequestSessionId(report.request);
      if (sentId !== r.sessionId) problems.push(`request carries session ${String(sentId)}, not ${r.sessionId}`);
      const sent = claudeShape(claudeFileMessages(report.request) as Msg[]);
      const ours = await ourClaudeShape(r.path);
      if (JSON.stringify(sent) !== JSON.stringify(ours)) problems.push(`sent ${sent.length} messages, ctxvm reconstructs ${ours.length}`);
      rows.push(`| ${name} | ${r.lines} | ${r.bytes} | ${report.messages ?? 0} | ${sentId === r.sessionId ? 'new id' : 'OLD/none'} | ${problems.length ? problems.join('; ') : 'ok'} |`);
      if (problems.length) failures.push(`${name}: ${problems.join('; ')}`);
    });
    rows.sort();
    console.log(['| branch of | lines | bytes | messages sent | session in request | verdict |', '|---|---|---|---|---|---|', ...rows].join('\n'));
    expect(failures).toEqual([]);
  }, 1_800_000);

  it('Codex: trimmed branches and branches cut at turn 1', async () => {
    const rows: string[] = [];
    const failures: string[] = [];
    const jobs: { file: string; at?: number }[] = [];
    for (const file of codex) {
      jobs.push({ file });
      if (listCodexTurns(await scanCodexSession(file)).length >= 2) jobs.push({ file, at: 1 });
    }
    await pool(jobs, 4, async ({ file, at }) => {
      const name = `${basename(file).slice(8, 27)}${at ? ` --at ${at}` : ''}`;
      let r: BranchResult;
      try {
        r = await branchSession({ source: file, store, claudeConfigDir: join(dir, 'claude'), codexHome: join(dir, 'codex'), scratchDir: join(dir, 'ctxvm', 'tmp'), measure: false, ...(at ? { at } : {}) });
      } catch (e) {
        failures.push(`${name}: branch failed: ${(e as Error).message}`);
        return;
      }
      const report = await probe('codex', r.path, bins);
      const problems: string[] = [];
      const rules = (await validateSession(file)).warnings.map((w) => w.rule);
      if (rules.includes('model-provider')) {
        // Codex resumes no rollout of another model provider, branch or not (resume-model.md §2.6)
        if (report.request?.input) problems.push('Codex resumed a branch of a rollout it refuses to resume');
        rows.push(`| ${name} | ${r.lines} | ${r.bytes} | - | not resumable (model provider) | ${problems.length ? problems.join('; ') : 'ok'} |`);
        if (problems.length) failures.push(`${name}: ${problems.join('; ')}`);
        return;
      }
      if (report.findings.length) problems.push(`findings ${JSON.stringify(report.findings)}`);
      // a subagent's thread (session_meta.source.subagent) resumes as a new thread, as the original does
      const subagent = readFileSync(file, 'utf8').split('\n', 1)[0]!.includes('"subagent"');
      if (!subagent && report.request.prompt_cache_key !== r.sessionId) problems.push(`prompt_cache_key ${String(report.request.prompt_cache_key)}, not ${r.sessionId}`);
      if (subagent && report.request.prompt_cache_key === undefined) problems.push('no prompt_cache_key');
      const ours = (await reconstructCodexContext(await scanCodexSession(r.path))).items.map((x) => canon(x.item as Item));
      const sent = codexHistory((report.request.input as Item[]) ?? [], ours.length).map(canon);
      if (JSON.stringify(sent) !== JSON.stringify(ours)) problems.push(`history sent differs from ctxvm's reconstruction (${sent.length} vs ${ours.length} items)`);
      rows.push(`| ${name} | ${r.lines} | ${r.bytes} | ${ours.length} | ${report.request.prompt_cache_key === r.sessionId ? 'new id' : subagent ? 'new thread (subagent)' : 'OLD/none'} | ${problems.length ? problems.join('; ') : 'ok'} |`);
      if (problems.length) failures.push(`${name}: ${problems.join('; ')}`);
    });
    rows.sort();
    console.log(['| branch of | lines | bytes | history items | session in request | verdict |', '|---|---|---|---|---|---|', ...rows].join('\n'));
    expect(failures).toEqual([]);
  }, 1_800_000);

  it('resumed in place: `claude --continue` in the project folder opens the branch (also a >200-character path)', async () => {
    const aforge = claude.find((f) => basename(f).startsWith('a8117384'))!;
    const compacted = claude.find((f) => basename(f).startsWith('24a90d02'))!;
    const home = join(dir, 'inplace-claude');
    const short = join(dir, 'work', 'my.project');
    const long = join(dir, 'work', ...Array.from({ length: 12 }, (_, i) => `deeply-nested-folder-${i}`));
    expect(long.length).toBeGreaterThan(200);
    for (const [file, cwd] of [[aforge, short], [compacted, long]] as const) {
      await mkdir(cwd, { recursive: true });
      const r = await branchSession({ source: file, store, claudeConfigDir: home, codexHome: join(dir, 'codex'), scratchDir: join(dir, 'ctxvm', 'tmp'), cwd, measure: false, title: 'ctxvm branch' });
      // reconstructed before resuming: the agent appends the new turn to the file
      const ours = await ourClaudeShape(r.path);
      const { request, output } = await resumeInPlace('claude', bins.claude, 'continue', cwd, home);
      expect(request, `${basename(file)} from ${cwd}: ${output}`).toBeDefined();
      expect(claudeRequestSessionId(request!)).toBe(r.sessionId);
      expect(claudeShape(claudeFileMessages(request!) as Msg[])).toEqual(ours);
    }
  }, 600_000);

  it('resumed in place: Codex finds the branch in its day folder, and `--last` picks it by its moved cwd', async () => {
    const file = codex.find((f) => basename(f).includes('14-44-44'))!;
    const home = join(dir, 'inplace-codex');
    const cwd = join(dir, 'work', 'codex-project');
    await mkdir(cwd, { recursive: true });
    const moved = await branchSession({ source: file, store, claudeConfigDir: join(dir, 'claude'), codexHome: home, scratchDir: join(dir, 'ctxvm', 'tmp'), cwd, measure: false, now: Date.now() - 3_600_000 });
    const r = await branchSession({ source: file, store, claudeConfigDir: join(dir, 'claude'), codexHome: home, scratchDir: join(dir, 'ctxvm', 'tmp'), measure: false });
    expect(r.path.startsWith(join(home, 'sessions'))).toBe(true);
    // reconstructed before resuming: the agent appends the new turn to the file
    const ours = (await reconstructCodexContext(await scanCodexSession(r.path))).items.map((x) => canon(x.item as Item));
    // the newest session is `r`, but its cwd is the source's: --last from `cwd` finds the moved one
    // (first: resuming `r` from `cwd` would record that cwd in it)
    const last = await resumeInPlace('codex', bins.codex, 'last', cwd, home);
    expect(last.request, last.output).toBeDefined();
    expect(last.request!.prompt_cache_key).toBe(moved.sessionId);
    const { request, output } = await resumeInPlace('codex', bins.codex, r.sessionId, cwd, home);
    expect(request, output).toBeDefined();
    expect(request!.prompt_cache_key).toBe(r.sessionId);
    expect(codexHistory(request!.input as Item[], ours.length).map(canon)).toEqual(ours);
  }, 600_000);
});
