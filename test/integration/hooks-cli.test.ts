/**
 * `ctxvm hooks …` end to end. In process: install / uninstall / status on temp settings files
 * (foreign hooks kept, malformed JSON refused with exit 2, double install, uninstall), and `run`,
 * whose branch must show in `ctxvm tree` (snapshot → trimmed branch, like `ctxvm trim`).
 * As a real process: the CLI (src/cli/program.ts bundled on the fly with rolldown) is run the
 * way Claude Code runs a hook — payload on stdin — and must exit 0 at once with nothing on
 * stdout, while its detached worker forks the branch and records it in the DAG.
 * With CTXVM_AGENT_TESTS=1 (or CI): the real Claude Code runs the installed hook at SessionEnd,
 * and the branch it leaves resumes under its new id.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Command } from 'commander';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registerHooks, type HooksCommandDeps } from '../../src/cli/commands/hooks.js';
import { registerTree } from '../../src/cli/commands/tree.js';
import type { DagGraph } from '../../src/session/dag/tree.js';
import { createCommandContext } from '../../src/cli/io.js';
import { reportError } from '../../src/cli/program.js';
import { readHookLog, type HookLogEntry } from '../../src/hooks/log.js';
import { validateSession } from '../../src/session/session.js';
import { installAgentClis, SHARED_TOOLS } from '../support/agent-probes.js';
import { CLAUDE_CORPUS_DIR, CORPUS_DIR, REPO_ROOT } from '../support/corpus.js';

const SOURCE = join(CLAUDE_CORPUS_DIR, 'smartagent', 'projects', '-Users-pretor-Documents-PAI---TPOS', '351b5d6c-e802-4339-a2c5-33f48865d8bd.jsonl');
const SID = '351b5d6c-e802-4339-a2c5-33f48865d8bd';
const haveCorpus = existsSync(SOURCE);

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-hooks-cli-'));
  // a detached hook worker may still be finishing its log when the test ends: retry the removal
  return () => rm(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 250 });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `ctxvm <argv>` in process with the hooks and tree commands registered, like runCli does. */
async function ctxvm(argv: string[], deps: HooksCommandDeps = {}, env: Record<string, string> = {}): Promise<Run> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const ctx = createCommandContext({ stdout, stderr, env: { CTXVM_HOME: join(dir, 'ctxvm'), CLAUDE_CONFIG_DIR: join(dir, 'claude'), PATH: process.env.PATH, ...env }, cwd: dir });
  const program = new Command('ctxvm').exitOverride().configureOutput({ writeOut: (s) => ctx.io.stdout.write(s), writeErr: (s) => ctx.io.stderr.write(s) });
  registerHooks(program, ctx, deps);
  registerTree(program, ctx);
  const wire = (cmd: Command) => {
    cmd.exitOverride().configureOutput({ writeOut: (s) => ctx.io.stdout.write(s), writeErr: (s) => ctx.io.stderr.write(s) });
    cmd.commands.forEach(wire);
  };
  program.commands.forEach(wire);
  let code = 0;
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    code = reportError(ctx, error, argv);
  }
  return { code, stdout: out, stderr: err };
}

const FOREIGN = {
  model: 'opus',
  hooks: { SessionEnd: [{ hooks: [{ type: 'command', command: 'say bye' }] }], Stop: [{ hooks: [{ type: 'command', command: 'check.sh' }] }] },
};

describe('ctxvm hooks install / uninstall / status', () => {
  it('installs next to foreign hooks, is idempotent, and uninstalls only its own entries', async () => {
    const settings = join(dir, 'claude', 'settings.json');
    await mkdir(join(dir, 'claude'));
    await writeFile(settings, JSON.stringify(FOREIGN, null, 2) + '\n');

    const first = await ctxvm(['hooks', 'install', '--json', '--command', process.execPath]);
    expect(first.code).toBe(0);
    const j = JSON.parse(first.stdout) as { settings: string; changed: boolean; events: string[]; backup: string; commandFound: boolean };
    expect(j).toMatchObject({ settings, changed: true, events: ['SessionEnd', 'PreCompact'], commandFound: true });
    expect(await readFile(j.backup, 'utf8')).toBe(JSON.stringify(FOREIGN, null, 2) + '\n');
    const installed = JSON.parse(await readFile(settings, 'utf8')) as typeof FOREIGN & { hooks: Record<string, unknown> };
    expect(installed.hooks.Stop).toEqual(FOREIGN.hooks.Stop);
    expect(installed.hooks.SessionEnd).toEqual([...FOREIGN.hooks.SessionEnd, { hooks: [{ type: 'command', command: `${process.execPath} hooks run --event SessionEnd` }] }]);

    const second = await ctxvm(['hooks', 'install', '--command', process.execPath]);
    expect(second).toMatchObject({ code: 0, stdout: `ctxvm hooks already installed in ${settings}\n  command: ${process.execPath} (by absolute path: keeps working without ctxvm on PATH, but not if this folder moves)\n` });
    expect((await readdir(join(dir, 'claude'))).filter((n) => n.includes('ctxvm-backup'))).toHaveLength(1);

    const status = JSON.parse((await ctxvm(['hooks', 'status', '--json'])).stdout) as { installed: Record<string, string | null>; foreignHooks: Record<string, number> };
    expect(status.installed).toEqual({ SessionEnd: `${process.execPath} hooks run --event SessionEnd`, PreCompact: `${process.execPath} hooks run --event PreCompact` });
    expect(status.foreignHooks).toEqual({ SessionEnd: 1, PreCompact: 0 });
    expect((await ctxvm(['hooks', 'status'])).stdout).toContain(`SessionEnd installed: ${process.execPath} hooks run --event SessionEnd [by absolute path]`);

    const un = await ctxvm(['hooks', 'uninstall', '--json']);
    expect(JSON.parse(un.stdout)).toMatchObject({ changed: true, events: ['SessionEnd', 'PreCompact'] });
    expect(await readFile(settings, 'utf8')).toBe(JSON.stringify(FOREIGN, null, 2) + '\n');
    expect((await ctxvm(['hooks', 'uninstall'])).stdout).toBe(`no ctxvm hooks in ${settings}\n`);
  });

  it('refuses a settings file it cannot parse: exit 2, the position, nothing written', async () => {
    const settings = join(dir, 'custom.json');
    const bad = '{\n  "hooks": {\n    "SessionEnd": [\n      { "hooks": [ { "type": "command", "command": "x" } ] }\n    ]\n  },\n  "model": opus\n}\n';
    await writeFile(settings, bad);
    const r = await ctxvm(['hooks', 'install', '--settings', settings, '--json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${settings}:7: not valid JSON at column 12`);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'E_PARSE' } });
    expect(await readFile(settings, 'utf8')).toBe(bad);
    expect(await readdir(dir)).toEqual(['custom.json']);
    expect((await ctxvm(['hooks', 'status', '--settings', settings])).code).toBe(2);
    expect((await ctxvm(['hooks', 'install', '--events', 'Stop'])).code).toBe(2);
  });

  it('warns when the command cannot be found', async () => {
    const r = await ctxvm(['hooks', 'install', '--command', 'ctxvm-not-installed-anywhere']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/not on PATH/);
  });

  it("does not count npx's temporary bin folder as PATH: Claude Code will not have it", async () => {
    const npxBin = join(dir, 'npm-cache', '_npx', 'a1b2', 'node_modules', '.bin');
    await mkdir(npxBin, { recursive: true });
    await writeFile(join(npxBin, 'ctxvm'), '#!/bin/sh\n');
    await chmod(join(npxBin, 'ctxvm'), 0o755);
    const r = await ctxvm(['hooks', 'install', '--command', 'ctxvm', '--json'], {}, { PATH: npxBin });
    expect(JSON.parse(r.stdout)).toMatchObject({ command: 'ctxvm', commandKind: 'path', commandFound: false });
    const status = JSON.parse((await ctxvm(['hooks', 'status', '--json'], {}, { PATH: npxBin })).stdout) as { commandFound: boolean; commandKinds: Record<string, string> };
    expect(status).toMatchObject({ commandFound: false, commandKinds: { SessionEnd: 'path', PreCompact: 'path' } });
  });
});

/** The hook's branch is in the DAG: snapshot of `SID` → trimmed branch, with the names the log gives. */
function expectInTree(graph: DagGraph, entry: HookLogEntry): void {
  const snap = graph.nodes.find((n) => n.kind === 'snapshot');
  const branch = graph.nodes.find((n) => n.kind === 'branch');
  expect(graph.nodes).toHaveLength(2);
  expect(snap).toMatchObject({ name: entry.dag!.snapshot, sessionId: SID, tags: ['auto-trim'] });
  expect(branch).toMatchObject({ name: entry.dag!.branch, sessionId: entry.branch!.sessionId, path: entry.branch!.path, trimmed: true });
  expect(graph.edges).toEqual([{ from: snap!.id, to: branch!.id, kind: 'branch' }]);
}

describe.skipIf(!haveCorpus)('ctxvm hooks run (in process)', () => {
  async function project(): Promise<{ transcript: string; payload: string }> {
    const proj = join(dir, 'claude', 'projects', '-Users-pretor-Documents-PAI---TPOS');
    await mkdir(proj, { recursive: true });
    const transcript = join(proj, `${SID}.jsonl`);
    await copyFile(SOURCE, transcript);
    await chmod(transcript, 0o644);
    return { transcript, payload: JSON.stringify({ session_id: SID, transcript_path: transcript, cwd: dir, hook_event_name: 'SessionEnd', reason: 'other' }) };
  }

  it('hands the payload to a worker and returns at once, printing nothing', async () => {
    const { payload } = await project();
    const spawned: string[][] = [];
    const r = await ctxvm(['hooks', 'run', '--event', 'SessionEnd'], { readStdin: async () => payload, spawnWorker: (args) => void spawned.push(args) });
    expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(spawned).toHaveLength(1);
    const file = spawned[0]![spawned[0]!.indexOf('--worker') + 1]!;
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(JSON.parse(payload));
    // the worker's run
    const w = await ctxvm(spawned[0]!, { runOptions: { stableMs: 50, pollMs: 10 } });
    expect(w).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(existsSync(file)).toBe(false);
    const log = await readHookLog(join(dir, 'ctxvm'));
    expect(log.at(-1)).toMatchObject({ outcome: 'branched', event: 'SessionEnd', sessionId: SID });
    expect(log.at(-1)!.reason).toBeUndefined();
    expect((await validateSession(log.at(-1)!.branch!.path)).valid).toBe(true);
    // recorded in the DAG like `ctxvm trim`: a snapshot of the session and the trimmed branch
    expectInTree(JSON.parse((await ctxvm(['tree', '--json'])).stdout) as DagGraph, log.at(-1)!);
    expect((await ctxvm(['hooks', 'status'])).stdout).toContain(`[${log.at(-1)!.dag!.branch} in ctxvm tree]`);
  });

  it('exits 0 with nothing printed whatever goes wrong, and logs it', async () => {
    for (const [argv, stdin] of [
      [['hooks', 'run', '--event', 'SessionEnd'], 'not json'],
      [['hooks', 'run', '--event', 'Stop', '--sync'], '{}'],
      [['hooks', 'run', '--event', 'SessionEnd', '--sync'], JSON.stringify({ session_id: SID, transcript_path: join(dir, 'none.jsonl') })],
    ] as const) {
      expect(await ctxvm([...argv], { readStdin: async () => stdin, spawnWorker: () => undefined })).toEqual({ code: 0, stdout: '', stderr: '' });
    }
    const log = await readHookLog(join(dir, 'ctxvm'));
    expect(log.map((e) => e.outcome)).toEqual(['failed', 'failed', 'skipped']);
    expect(log[0]!.reason).toMatch(/not JSON/);
  });
});

// ---- the real CLI process --------------------------------------------------------------------

let rolldown: typeof import('rolldown') | undefined;
try {
  rolldown = await import('rolldown');
} catch {
  rolldown = undefined;
}

/** The CLI entry as src/cli/main.ts builds it (program.ts registers `hooks`). */
const ENTRY = `
import { buildProgram, reportError } from ${JSON.stringify(join(REPO_ROOT, 'src', 'cli', 'program.ts'))};
import { createCommandContext } from ${JSON.stringify(join(REPO_ROOT, 'src', 'cli', 'io.ts'))};
const ctx = createCommandContext({ stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() });
const argv = process.argv.slice(2);
const program = await buildProgram(ctx, argv);
try { await program.parseAsync(argv, { from: 'user' }); } catch (e) { process.exitCode = reportError(ctx, e, argv); }
`;

function run(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; stdin?: string; timeoutMs?: number }): Promise<Run & { ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr, ms: Date.now() - t0 });
    });
    child.stdin.end(opts.stdin ?? '');
  });
}

async function waitForLog(home: string, pred: (e: HookLogEntry) => boolean, timeoutMs = 60_000): Promise<HookLogEntry | undefined> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const hit = (await readHookLog(home, 50)).find(pred);
    if (hit) return hit;
    await new Promise((r) => setTimeout(r, 200));
  }
  return undefined;
}

describe.skipIf(!haveCorpus || !rolldown)('ctxvm hooks as a real process', () => {
  let cli: string;
  beforeAll(async () => {
    const cache = join(REPO_ROOT, 'node_modules', '.cache', 'ctxvm-tests');
    await mkdir(cache, { recursive: true });
    const tmp = await mkdtemp(join(tmpdir(), 'ctxvm-cli-entry-'));
    await writeFile(join(tmp, 'entry.ts'), ENTRY);
    cli = join(cache, `ctxvm-hooks-cli-${process.pid}.mjs`);
    // Packages stay external (resolved from the repo's node_modules, where the bundle is written):
    // bundling CommonJS packages such as pg into an ES module breaks their __filename.
    const external = (id: string) => !id.startsWith('.') && !id.startsWith('/') && !id.startsWith('node:') && !/^[A-Za-z]:/.test(id);
    await rolldown!.build({ input: join(tmp, 'entry.ts'), platform: 'node', external, resolve: { extensionAlias: { '.js': ['.ts', '.js'] } }, output: { file: cli, format: 'esm', codeSplitting: false }, logLevel: 'silent' });
    await rm(tmp, { recursive: true, force: true });
  }, 120_000);
  afterAll(async () => {
    if (cli) await rm(cli, { force: true });
  });

  it('returns at once with nothing on stdout; the detached worker forks the branch', async () => {
    const proj = join(dir, 'claude', 'projects', '-Users-pretor-Documents-PAI---TPOS');
    await mkdir(proj, { recursive: true });
    const transcript = join(proj, `${SID}.jsonl`);
    await copyFile(SOURCE, transcript);
    await chmod(transcript, 0o644);
    const before = createHash('sha256').update(await readFile(transcript)).digest('hex');
    const home = join(dir, 'ctxvm');
    const env = { ...process.env, CTXVM_HOME: home, CLAUDE_CONFIG_DIR: join(dir, 'claude') };
    const payload = JSON.stringify({ session_id: SID, transcript_path: transcript, cwd: dir, hook_event_name: 'PreCompact', trigger: 'auto' });
    const r = await run(process.execPath, [cli, 'hooks', 'run', '--event', 'PreCompact'], { cwd: dir, env, stdin: payload });
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(r.ms).toBeLessThan(1500); // Claude Code's default SessionEnd budget
    const done = await waitForLog(home, (e) => e.outcome !== 'queued');
    expect(done, JSON.stringify(await readHookLog(home))).toMatchObject({ outcome: 'branched', event: 'PreCompact' });
    expect((await validateSession(done!.branch!.path)).valid).toBe(true);
    expect(createHash('sha256').update(await readFile(transcript)).digest('hex')).toBe(before);
    const tree = await run(process.execPath, [cli, 'tree', '--json'], { cwd: dir, env });
    expect(tree.code, tree.stderr).toBe(0);
    expectInTree(JSON.parse(tree.stdout) as DagGraph, done!);
  }, 120_000);

  const agents = existsSync(CORPUS_DIR) && existsSync(join(SHARED_TOOLS, 'claude-resume-probe.mjs')) && (process.env.CI === 'true' || process.env.CTXVM_AGENT_TESTS === '1');
  it.runIf(agents)('the real Claude Code runs the installed hook at SessionEnd; the branch resumes under its new id', async () => {
    const bins = await installAgentClis();
    const home = join(dir, 'ctxvm');
    const config = join(dir, 'claude');
    const work = join(dir, 'work');
    await mkdir(work, { recursive: true });
    const proj = join(config, 'projects', work.replace(/[^a-zA-Z0-9]/g, '-'));
    await mkdir(proj, { recursive: true });
    await copyFile(SOURCE, join(proj, `${SID}.jsonl`));
    await chmod(join(proj, `${SID}.jsonl`), 0o644);

    const requests: string[] = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString())).on('end', () => {
        if (req.method === 'POST' && req.url?.startsWith('/v1/messages') && !req.url.includes('count_tokens')) {
          requests.push(body);
          const ev = (t: string, d: object) => res.write(`event: ${t}\ndata: ${JSON.stringify({ type: t, ...d })}\n\n`);
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          ev('message_start', { message: { id: 'msg_x', type: 'message', role: 'assistant', model: 'probe', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } });
          ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
          ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'ok' } });
          ev('content_block_stop', { index: 0 });
          ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } });
          ev('message_stop', {});
          res.end();
        } else {
          res.writeHead(req.url?.includes('count_tokens') ? 200 : 404, { 'content-type': 'application/json' });
          res.end(req.url?.includes('count_tokens') ? '{"input_tokens":1}' : '{}');
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const env = {
      ...process.env,
      CTXVM_HOME: home,
      CLAUDE_CONFIG_DIR: config,
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      ANTHROPIC_API_KEY: 'sk-ant-probe',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    };
    try {
      const install = await run(process.execPath, [cli, 'hooks', 'install', '--command', `${process.execPath} ${cli}`, '--json'], { cwd: work, env });
      expect(install.code, install.stderr).toBe(0);
      const first = await run(bins.claude, ['--resume', SID, '-p', 'Reply with the single word ok.'], { cwd: work, env });
      expect(requests.length, first.stdout + first.stderr).toBe(1);
      const branched = await waitForLog(home, (e) => e.event === 'SessionEnd' && e.outcome !== 'queued');
      expect(branched, JSON.stringify(await readHookLog(home))).toMatchObject({ outcome: 'branched', sessionId: SID });
      const id = branched!.branch!.sessionId;
      expect(branched!.branch!.path).toBe(join(proj, `${id}.jsonl`));
      const again = await run(bins.claude, ['--resume', id, '-p', 'Reply with the single word ok.'], { cwd: work, env });
      expect(requests.length, again.stdout + again.stderr).toBe(2);
      const req = JSON.parse(requests[1]!) as { metadata: { user_id: string }; messages: unknown[] };
      expect((JSON.parse(req.metadata.user_id) as { session_id: string }).session_id).toBe(id);
      const orig = JSON.parse(requests[0]!) as { messages: unknown[] };
      console.log(`SessionEnd hook: ${branched!.tokens?.before} → ${branched!.tokens?.after} tokens (−${((branched!.tokens?.reduction ?? 0) * 100).toFixed(1)}%); Claude Code sent ${JSON.stringify(orig.messages).length} → ${JSON.stringify(req.messages).length} chars of messages`);
      expect(JSON.stringify(req.messages).length).toBeLessThan(JSON.stringify(orig.messages).length);
    } finally {
      server.close();
    }
  }, 600_000);
});
