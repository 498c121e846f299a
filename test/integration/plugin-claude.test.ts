/**
 * The Claude Code plugin (plugin/, listed by .claude-plugin/marketplace.json), checked by the
 * real Claude Code CLI: `claude plugin validate` passes (with the plugin directory's checks), and
 * `claude -p --plugin-dir plugin` against a local stand-in for the model API offers the model the
 * ctxvm MCP server's tools and the plugin's commands, and runs its SessionEnd hook, which leaves
 * an entry in ctxvm's hook log. The plugin runs ctxvm through `$CTXVM_BIN` here (the built CLI).
 * Runs in CI (CI=true) or with CTXVM_AGENT_TESTS=1, like the resume probes; needs `npm run build`.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installAgentClis, type AgentBins } from '../support/agent-probes.js';
import { REPO_ROOT } from '../support/corpus.js';

const run = promisify(execFile);
const PLUGIN = join(REPO_ROOT, 'plugin');
const MAIN = join(REPO_ROOT, 'dist', 'cli', 'main.js');
const enabled = process.env.CI === 'true' || process.env.CTXVM_AGENT_TESTS === '1';
const skip = !enabled ? 'set CTXVM_AGENT_TESTS=1 (or CI=true) to check the plugin in the real Claude Code CLI' : !existsSync(MAIN) ? 'dist/ is not built: run `npm run build`' : undefined;
if (skip) console.log(`[skip] Claude Code plugin test: ${skip}`);

/** A stand-in for the Anthropic API that answers "ok" and records every request body. */
async function standInApi(): Promise<{ url: string; requests: Record<string, unknown>[]; close(): Promise<void> }> {
  const requests: Record<string, unknown>[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.startsWith('/v1/messages') || req.url.includes('count_tokens')) {
        res.writeHead(req.url?.includes('count_tokens') ? 200 : 404, { 'content-type': 'application/json' });
        res.end(req.url?.includes('count_tokens') ? '{"input_tokens":1}' : '{"type":"error","error":{"type":"not_found_error","message":"stand-in"}}');
        return;
      }
      const b = (() => {
        try {
          return JSON.parse(body) as Record<string, unknown>;
        } catch {
          return {};
        }
      })();
      requests.push(b);
      const message = { id: `msg_${requests.length}`, type: 'message', role: 'assistant', model: 'stand-in', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } };
      if (!b.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(message));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const ev = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
      ev('message_start', { message: { ...message, content: [], stop_reason: null } });
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'ok' } });
      ev('content_block_stop', { index: 0 });
      ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } });
      ev('message_stop', {});
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, close: () => new Promise((r) => server.close(() => r())) };
}

describe.skipIf(skip !== undefined)('the Claude Code plugin in the real Claude Code CLI', () => {
  let bins: AgentBins;
  let home: string;
  beforeAll(async () => {
    bins = await installAgentClis();
    home = await mkdtemp(join(tmpdir(), 'ctxvm-plugin-'));
  }, 600_000);
  afterAll(async () => {
    if (home) await rm(home, { recursive: true, force: true, maxRetries: 20, retryDelay: 250 });
  });

  it('passes claude plugin validate, with the plugin directory checks, and so does the marketplace', async () => {
    const plugin = await run(bins.claude, ['plugin', 'validate', PLUGIN, '--profile', 'directory'], { cwd: REPO_ROOT });
    expect(plugin.stdout).toContain('Validation passed');
    const market = await run(bins.claude, ['plugin', 'validate', REPO_ROOT], { cwd: REPO_ROOT });
    expect(market.stdout).toContain('Validation passed');
  }, 120_000);

  it('--plugin-dir: the model is offered the ctxvm tools and commands, and the SessionEnd hook runs ctxvm', async () => {
    const api = await standInApi();
    try {
      const work = join(home, 'work');
      await mkdir(work, { recursive: true });
      const env = {
        PATH: process.env.PATH,
        HOME: home,
        CLAUDE_CONFIG_DIR: join(home, 'claude'),
        CTXVM_HOME: join(home, 'ctxvm'),
        CTXVM_BIN: `${process.execPath} ${MAIN}`,
        ANTHROPIC_BASE_URL: api.url,
        ANTHROPIC_API_KEY: 'sk-ant-stand-in',
        ENABLE_TOOL_SEARCH: 'false',
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_ERROR_REPORTING: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      };
      const child = spawn(bins.claude, ['-p', 'Say ok.', '--plugin-dir', PLUGIN], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code, out).toBe(0);

      const tools = new Set(api.requests.flatMap((b) => ((b.tools as { name: string }[] | undefined) ?? []).map((t) => t.name)));
      const ctxvmTools = [...tools].filter((t) => t.startsWith('mcp__') && t.includes('ctxvm'));
      for (const t of ['session_page_in', 'session_snapshot', 'session_trim', 'memory_context']) expect(ctxvmTools.some((n) => n.endsWith(`__${t}`)), `${t} in ${ctxvmTools.join(', ')}`).toBe(true);
      const sent = JSON.stringify(api.requests);
      for (const c of ['ctxvm:snapshot', 'ctxvm:branch', 'ctxvm:trim', 'ctxvm:tree', 'ctxvm:page-in']) expect(sent, c).toContain(c);

      // the hook hands the payload to a detached worker, which logs what it did
      const log = join(home, 'ctxvm', 'logs', 'hooks.log');
      for (let i = 0; i < 100 && !existsSync(log); i++) await new Promise((r) => setTimeout(r, 100));
      const entries = (await readFile(log, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { event: string });
      expect(entries.some((e) => e.event === 'SessionEnd')).toBe(true);
    } finally {
      await api.close();
    }
  }, 240_000);
});
