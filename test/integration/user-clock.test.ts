/**
 * The user's own clock: a zone stored from each explicit source (`chat --tz`, the HTTP API's and
 * MCP's `timeZone`, a preference message) and used by each output (CLI tables, the rebuilt prompt
 * and its clock line, reminders, the API's memory state, MCP results), `--tz` on the reading
 * commands, and `serve`/`mcp` defaulting to the machine's zone. Real SQLite in temp homes; MCP and
 * `serve` as subprocesses of the built CLI (`npm run build` first).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/corpus.js';
import { runCliInProcess } from '../support/run-cli.js';
import { startServeProcess } from '../support/serve-process.js';
import { createServerEnv, startApi, type RunningApi, type ServerEnv } from '../support/server-env.js';

/** The clock line of a rendered context (empty when there is none). */
const clockLine = (text: string): string => /^# Now: .*$/m.exec(text)?.[0] ?? '';

const MAIN = join(REPO_ROOT, 'dist', 'cli', 'main.js');
const MORNING = '2026-12-02T01:30:00Z'; // 09:30 Wednesday in Shanghai, 01:30 in UTC
let root: string;
let env: Record<string, string>;
const ctxvm = (...args: string[]) => runCliInProcess(args, env, root);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ctxvm-user-clock-'));
  env = { CTXVM_HOME: join(root, 'ctxvm'), HOME: root, CLAUDE_CONFIG_DIR: join(root, 'claude'), CODEX_HOME: join(root, 'codex') };
});
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe('chat --tz stores the zone; every CLI output uses it', () => {
  beforeAll(async () => {
    const said = await ctxvm('chat', '--user', 'u1', '--tz', 'Asia/Shanghai', '--now', MORNING, '-m', '记得下午三点要开项目评审会。');
    expect(said.code, said.stderr).toBe(0);
    expect(said.stdout).toContain('截止 今天 15:00');
  });

  it('memory tasks shows 15:00 and names the zone; --json keeps UTC; --tz shows another zone', async () => {
    const tasks = await ctxvm('memory', 'tasks', '--user', 'u1');
    expect(tasks.stdout).toContain('due (Asia/Shanghai)');
    expect(tasks.stdout).toContain('2026-12-02 15:00 Wed');
    expect(tasks.stdout).not.toContain('07:00');
    expect((await ctxvm('memory', 'tasks', '--user', 'u1', '--json')).json()[0].due).toBe('2026-12-02T07:00:00.000Z');
    const utc = await ctxvm('memory', 'tasks', '--user', 'u1', '--tz', 'UTC');
    expect(utc.stdout).toContain('due (UTC)');
    expect(utc.stdout).toContain('2026-12-02 07:00 Wed');
    expect((await ctxvm('memory', 'tasks', '--user', 'u1', '--tz', 'Mars/Olympus')).code).toBe(2);
  });

  it('memory context states the date, weekday, time and zone and shows the due time in it', async () => {
    const ctx = await ctxvm('memory', 'context', '--user', 'u1', '--now', '2026-12-02T06:10:00Z', '下午后还有啥要做');
    expect(ctx.code, ctx.stderr).toBe(0);
    expect(ctx.stdout).toContain('# Now: 2026-12-02 14:10 Wed, Asia/Shanghai (UTC+08:00); all times here are in this zone');
    expect(ctx.stdout).toContain('- [todo] 开项目评审会 · due 2026-12-02 15:00 Wed');
    expect(ctx.stdout).not.toContain('07:00');
    const utc = await ctxvm('memory', 'context', '--user', 'u1', '--now', '2026-12-02T06:10:00Z', '--tz', 'UTC', '--json', 'what is left?');
    const json = utc.json<{ text: string; clock: { timeZone: string } }>();
    expect(json.clock.timeZone).toBe('UTC');
    expect(json.text).toContain('due 2026-12-02 07:00 Wed');
    // the override is not stored
    expect((await ctxvm('memory', 'tasks', '--user', 'u1')).stdout).toContain('due (Asia/Shanghai)');
  });

  it('a later message without --tz resolves its dates in the stored zone', async () => {
    const r = await ctxvm('chat', '--user', 'u1', '--now', MORNING, '--json', '-m', '明天上午十点提醒我交报告');
    expect(r.code, r.stderr).toBe(0);
    const due = (await ctxvm('memory', 'tasks', '--user', 'u1', '--json')).json<{ title: string; due: string }[]>().find((t) => t.title.includes('报告'));
    expect(due?.due).toBe('2026-12-03T02:00:00.000Z');
  });

  it('reminders speak and list in the user’s zone', async () => {
    const run = await ctxvm('reminders', 'run', '--once', '--now', '2026-12-02T06:50:00Z');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('[u1] 提醒：任务「开项目评审会」将于今天 15:00 到期（还有 10 分钟）。');
    const list = await ctxvm('reminders', 'list', '--user', 'u1');
    expect(list.stdout).toContain('2026-12-02 15:00 Wed (Asia/Shanghai)');
    expect((await ctxvm('reminders', 'list', '--user', 'u1', '--tz', '+01:00')).stdout).toContain('2026-12-02 08:00 Wed (UTC+01:00)');
  });
});

describe('a preference message sets the zone when the zone database knows the place', () => {
  const cases: Array<[string, string]> = [
    ['my time zone is PST', 'America/Los_Angeles'],
    ["I'm in Berlin", 'Europe/Berlin'],
    ['I am in Tokyo.', 'Asia/Tokyo'],
    ['我在纽约', 'America/New_York'],
    ['我在上海', 'Asia/Shanghai'],
    ['我的时区是北京时间', 'Asia/Shanghai'],
    ['我现在在深圳', 'Asia/Shanghai'],
    ['我的时区是东八区', 'UTC+08:00'],
    ['时区改成 Asia/Kolkata', 'Asia/'],
    ['我现在在德国', 'Europe/Berlin'],
  ];
  for (const [text, zone] of cases) {
    it(`${text} → ${zone}`, async () => {
      const user = `pref-${Buffer.from(text).toString('hex').slice(0, 16)}`;
      const said = await ctxvm('chat', '--user', user, '--tz', 'UTC', '--now', MORNING, '--json', '-m', text);
      expect(said.json()[0].intent, said.stdout).toBe('set_preference');
      const ctx = await ctxvm('memory', 'context', '--user', user, '--now', MORNING, 'hi');
      expect(clockLine(ctx.stdout)).toContain(`, ${zone}`);
    });
  }

  it('leaves the zone alone for a place it does not know or an activity ("我在开会", "I\'m in a meeting")', async () => {
    for (const text of ['我在开会', "I'm in a meeting"]) {
      const said = await ctxvm('chat', '--user', 'busy', '--tz', 'Asia/Shanghai', '--now', MORNING, '--json', '-m', text);
      expect(said.json()[0].intent).not.toBe('set_preference');
    }
    expect((await ctxvm('memory', 'context', '--user', 'busy', '--now', MORNING, 'hi')).stdout).toContain(', Asia/Shanghai (UTC+08:00);');
  });
});

describe('the HTTP API', () => {
  let server: ServerEnv;
  let api: RunningApi;
  let key: string;
  beforeAll(async () => {
    server = await createServerEnv();
    key = (await server.services.keys.create({ userId: 'web' })).key;
    api = await startApi(server.services);
  });
  afterAll(async () => {
    await api?.close();
    await server?.close();
  });

  it('stores a message’s timeZone and uses it for tasks, the memory state and the context', async () => {
    const posted = await api.call('POST', '/v1/users/web/messages', { key, body: { text: 'remind me to call the dentist at 3pm', timeZone: 'Asia/Tokyo', now: '2026-12-02T00:00:00Z' } });
    expect(posted.status, JSON.stringify(posted.json())).toBe(200);
    const tasks = (await api.call('GET', '/v1/users/web/tasks', { key })).json();
    expect(tasks.timeZone).toBe('Asia/Tokyo');
    expect(tasks.tasks[0].due).toBe('2026-12-02T06:00:00.000Z');
    expect((await api.call('GET', '/v1/users/web/memory', { key })).json().timeZone).toBe('Asia/Tokyo');
    const ctx = (await api.call('POST', '/v1/users/web/context', { key, body: { query: 'what is left?', now: '2026-12-02T01:00:00Z' } })).json();
    expect(ctx.text).toContain('# Now: 2026-12-02 10:00 Wed, Asia/Tokyo (UTC+09:00)');
    expect(ctx.text).toContain('due 2026-12-02 15:00 Wed');
    const override = (await api.call('POST', '/v1/users/web/context', { key, body: { query: 'what is left?', timeZone: '+00:00', now: '2026-12-02T01:00:00Z' } })).json();
    expect(override.clock.timeZone).toBe('+00:00');
    expect(override.text).toContain('due 2026-12-02 06:00 Wed');
    expect((await api.call('GET', '/v1/users/web/memory', { key })).json().timeZone).toBe('Asia/Tokyo');
  });

  it('refuses a zone that does not exist, with the fix', async () => {
    const bad = await api.call('POST', '/v1/users/web/messages', { key, body: { text: 'hi', timeZone: 'Mars/Olympus' } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json())).toMatch(/IANA time zone/);
  });
});

describe('built CLI: mcp and serve', () => {
  const childEnv = (extra: Record<string, string>) => ({ PATH: process.env.PATH ?? '', ...env, ...extra });
  beforeAll(() => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} not found: run \`npm run build\` before these tests`);
  });

  it('mcp: memory_remember stores timeZone; tasks_list and memory_context show it; --tz is the default', async () => {
    const connect = async (args: string[]) => {
      const client = new Client({ name: 'ctxvm-test', version: '1.0.0' });
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp', ...args], env: childEnv({}), cwd: root, stderr: 'pipe' }));
      return client;
    };
    const text = (r: unknown) => (r as { content: { text?: string }[] }).content.map((c) => c.text ?? '').join('');
    const client = await connect(['--user', 'agent']);
    try {
      await client.callTool({ name: 'memory_remember', arguments: { text: 'remind me to send the invoice at 5pm', timeZone: 'Europe/Berlin', now: '2026-12-02T08:00:00Z' } });
      expect(text(await client.callTool({ name: 'tasks_list', arguments: {} }))).toContain('due 2026-12-02 17:00 Wed (Europe/Berlin)');
      expect(text(await client.callTool({ name: 'memory_context', arguments: { query: 'invoice' } }))).toMatch(/^# Now: .+, Europe\/Berlin \(UTC\+01:00\); all times here are in this zone$/m);
    } finally {
      await client.close();
    }
    const fresh = await connect(['--user', 'agent2', '--tz', 'America/New_York']);
    try {
      expect(text(await fresh.callTool({ name: 'memory_context', arguments: { query: 'anything?' } }))).toMatch(/^# Now: .+, America\/New_York \(UTC-0[45]:00\);/m);
    } finally {
      await fresh.close();
    }
  });

  it('serve defaults to the machine’s zone for users who stated none', async () => {
    const key = (await ctxvm('keys', 'create', '--user', 'served', '--json')).json<{ key: string }>().key;
    const { url, child } = await startServeProcess(MAIN, ['--port', '0', '--json', '--no-reminders'], childEnv({ TZ: 'Asia/Kolkata' }));
    try {
      const r = await fetch(`${url}/v1/users/served/memory`, { headers: { authorization: `Bearer ${key}` } });
      expect(((await r.json()) as { timeZone: string }).timeZone).toMatch(/^Asia\/(Kolkata|Calcutta)$/);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });
});
