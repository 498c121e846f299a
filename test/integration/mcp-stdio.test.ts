/**
 * `ctxvm mcp` as an MCP client sees it: the built CLI (`dist/cli/main.js`; run `npm run build`
 * first) spawned over stdio by @modelcontextprotocol/client, with a temp CTXVM_HOME (real SQLite)
 * and agent folders holding a real corpus session. Every tool is called.
 */
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_TOOLS } from '../../src/server/mcp.js';
import { encodeClaudeProjectDir } from '../../src/session/discovery/resolve.js';
import { createFsObjectStore } from '../../src/store/drivers/objects-fs.js';
import { CLAUDE_CORPUS_DIR, REPO_ROOT } from '../support/corpus.js';
import { containsValue, trimWithRefs, type StubRef } from '../support/trimmed-session.js';

const MAIN = join(REPO_ROOT, 'dist', 'cli', 'main.js');
const PROJECT = '/home/jenkins/Personal_AI_Infrastructure';
const SESSION_ID = '155715ec-f4e9-47ea-859c-2e4cfcceab6f';
const CORPUS_SESSION = join(CLAUDE_CORPUS_DIR, 'hillview', 'projects', '-home-jenkins-Personal-AI-Infrastructure', `${SESSION_ID}.jsonl`);
// its trim pages tool results out behind stubs (the session above only drops duplicates)
const PAGED_SESSION = join(CLAUDE_CORPUS_DIR, 'drmaciver', 'coverage-test-fix.jsonl');
const haveCorpus = existsSync(CORPUS_SESSION) && existsSync(PAGED_SESSION);
if (!haveCorpus) console.warn(`[skip] ${CORPUS_SESSION} not found: MCP session tools skipped`);

type ToolResult = { content: { type: string; text?: string }[]; structuredContent?: Record<string, any>; isError?: boolean };

let root: string;
let env: Record<string, string>;
let refs: StubRef[] = [];

async function connect(args: string[]): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp', ...args], env, cwd: root, stderr: 'pipe' });
  const client = new Client({ name: 'ctxvm-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

const text = (r: ToolResult) => r.content.map((c) => c.text ?? '').join('');

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} not found: run \`npm run build\` before the MCP tests`);
  const built = (await stat(MAIN)).mtimeMs;
  for (const src of ['src/server/mcp.ts', 'src/cli/commands/mcp.ts']) {
    if ((await stat(join(REPO_ROOT, src))).mtimeMs > built) console.warn(`[warn] ${src} is newer than ${MAIN}: run \`npm run build\` to test the current code`);
  }
  root = await mkdtemp(join(tmpdir(), 'ctxvm-mcp-'));
  env = {
    PATH: process.env.PATH ?? '',
    HOME: root,
    CTXVM_HOME: join(root, 'ctxvm'),
    CLAUDE_CONFIG_DIR: join(root, 'claude'),
    CODEX_HOME: join(root, 'codex'),
  };
  await mkdir(join(env.CODEX_HOME!, 'sessions'), { recursive: true });
  if (haveCorpus) {
    const dir = join(env.CLAUDE_CONFIG_DIR!, 'projects', encodeClaudeProjectDir(PROJECT));
    await mkdir(dir, { recursive: true });
    await copyFile(CORPUS_SESSION, join(dir, `${SESSION_ID}.jsonl`));
    refs = await trimWithRefs(PAGED_SESSION, join(root, 'trimmed.jsonl'), createFsObjectStore({ root: join(env.CTXVM_HOME!, 'objects') }));
  }
});
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe('ctxvm mcp over stdio', () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect(['--user', 'alice']);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
  });
  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolResult;

  it('offers the seven tools with input schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...MCP_TOOLS].sort());
    const pageIn = tools.find((t) => t.name === 'session_page_in')!;
    expect(pageIn.inputSchema).toMatchObject({ type: 'object', properties: { ref: { type: 'string' } }, required: ['ref'] });
  });

  it('memory_remember, tasks_list, task_update, memory_context', async () => {
    const now = '2026-03-10T09:00:00Z';
    const remembered = await call('memory_remember', { text: 'Remind me to renew the TLS certificates by Friday', now, id: 'tls-1' });
    expect(remembered.isError, text(remembered)).toBeFalsy();
    expect(remembered.structuredContent).toMatchObject({ intent: 'create_task', applied: [expect.objectContaining({ kind: 'task', action: 'created' })] });
    expect(text(remembered)).toMatch(/TLS certificates/);
    // the same id again (an agent retrying): refused with the first reply, nothing stored twice
    const repeated = await call('memory_remember', { text: 'Remind me to renew the TLS certificates by Friday', now, id: 'tls-1' });
    expect(repeated.isError).toBe(true);
    expect(text(repeated)).toMatch(/^E_CONFLICT: .*already received/);
    expect(text(repeated)).toContain(JSON.stringify(remembered.structuredContent!.response));
    await call('memory_remember', { text: 'We decided to rotate certificates with cert-manager', now });

    const listed = await call('tasks_list', {});
    expect(listed.isError).toBeFalsy();
    const tasks = listed.structuredContent!.tasks as { id: string; title: string; status: string }[];
    expect(tasks).toHaveLength(1);
    expect(text(listed)).toContain(tasks[0]!.id);
    expect(listed.structuredContent!.message).toBe(text(listed));

    const updated = await call('task_update', { id: tasks[0]!.id, status: 'doing', priority: 'urgent' });
    expect(updated.isError, text(updated)).toBeFalsy();
    expect(updated.structuredContent!.task).toMatchObject({ status: 'doing', priority: 'urgent' });
    expect((await call('tasks_list', { status: ['doing'] })).structuredContent!.tasks).toHaveLength(1);
    expect((await call('tasks_list', { status: ['done'] })).structuredContent!.tasks).toHaveLength(0);

    const context = await call('memory_context', { query: 'how do we handle certificates?', budget: 800 });
    expect(context.isError).toBeFalsy();
    expect(text(context)).toMatch(/TLS certificates/);
    expect(text(context)).toMatch(/cert-manager/);
    // the agent has its own system prompt: ctxvm's responder instruction is not in the result
    expect(text(context)).not.toMatch(/You are a helpful assistant/);
    expect(text(context)).toMatch(/^# /);
    expect(context.structuredContent).toBeUndefined();

    const missing = await call('task_update', { id: 'no-such-task', status: 'done' });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatch(/^E_NOT_FOUND: /);
    const nothing = await call('task_update', { id: tasks[0]!.id });
    expect(nothing.isError).toBe(true);
    expect(text(nothing)).toMatch(/^E_USAGE: /);
  });

  it.skipIf(!haveCorpus)('session_page_in returns the original payload of a trimmed session', async () => {
    expect(refs.length).toBeGreaterThan(0);
    for (const { ref, original, file } of refs.slice(0, 5)) {
      const r = await call('session_page_in', { ref, session: file });
      expect(r.isError, text(r)).toBeFalsy();
      // the payload itself is the whole answer (text as text, anything else as JSON)
      expect(r.structuredContent).toBeUndefined();
      const payload = text(r);
      expect(containsValue(original, payload) || containsValue(original, JSON.parse(payload)), ref).toBe(true);
    }
    const unknown = await call('session_page_in', { ref: 'toolu_01NoSuchCallAnywhere0000', session: refs[0]!.file });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatch(/^E_NOT_FOUND: /);
  });

  it.skipIf(!haveCorpus)('session_snapshot and session_trim', async () => {
    const snap = await call('session_snapshot', { session: SESSION_ID, name: 'mcp-snap', tags: ['mcp'] });
    expect(snap.isError, text(snap)).toBeFalsy();
    expect(snap.structuredContent).toMatchObject({ name: 'mcp-snap', session: { id: SESSION_ID } });
    const trimmed = await call('session_trim', { session: SESSION_ID, name: 'mcp-trim' });
    expect(trimmed.isError, text(trimmed)).toBeFalsy();
    expect(trimmed.structuredContent).toMatchObject({ name: 'mcp-trim-trimmed' });
    expect(text(trimmed)).toMatch(/resume: .*claude --resume [0-9a-f-]{36}/);
  });
});

describe('ctxvm mcp without a user', () => {
  it('the memory tools ask for one; the session tools still work', async () => {
    const client = await connect([]);
    try {
      const r = (await client.callTool({ name: 'tasks_list', arguments: {} })) as ToolResult;
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(/--user/);
      const page = (await client.callTool({ name: 'session_page_in', arguments: { ref: 'not a ref' } })) as ToolResult;
      expect(page.isError).toBe(true);
      expect(text(page)).toMatch(/^E_USAGE: not a page-in reference/);
    } finally {
      await client.close();
    }
  }, 60_000);
});
