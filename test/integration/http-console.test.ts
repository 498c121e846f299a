/**
 * The web console's side of the HTTP API (docs/console.md) over a real loopback socket and a
 * real SQLite warm store in a temp CTXVM_HOME: /v1/whoami, /v1/users, /v1/users/{user}/memory,
 * /v1/sessions/tree, /v1/sessions/analysis (session files and snapshot:<ref>), /v1/metrics, and
 * the static files under /console/ (content types, traversal, the 503 when the bundle is absent).
 */
import { request } from 'node:http';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemoClaudeSession } from '../../src/demo/claude-session.js';
import { encodeClaudeProjectDir } from '../../src/session/branch/paths.js';
import { analyzeSession } from '../../src/session/session.js';
import { createServerEnv, startApi, type RunningApi, type ServerEnv } from '../support/server-env.js';

const NOW = '2026-03-10T09:00:00Z';
const SESSION_ID = '0b5e7a4c-2d1f-4e3a-9c8b-7a6f5e4d3c2b';
const PROJECT = '/home/console/app';
let env: ServerEnv;
let api: RunningApi;
let consoleDir: string;
let sessionFile: string;
let keys: { admin: string; alice: string; bob: string; carol: string; adminId: string };

beforeAll(async () => {
  // reads cached as with Redis or PostgreSQL: the refresh-ahead and read-cache metrics are tested here
  env = await createServerEnv({ cacheReads: true });
  const k = env.services.keys;
  const admin = await k.create({ admin: true });
  keys = { admin: admin.key, adminId: admin.keyId, alice: (await k.create({ userId: 'alice' })).key, bob: (await k.create({ userId: 'bob' })).key, carol: (await k.create({ userId: 'carol' })).key };
  // a tiny console bundle
  consoleDir = join(env.root, 'console-dist');
  await mkdir(join(consoleDir, 'icons'), { recursive: true });
  await writeFile(join(consoleDir, 'index.html'), '<!doctype html><title>ctxvm</title><script src="app.js"></script>');
  await writeFile(join(consoleDir, 'app.js'), 'console.log("console");');
  await writeFile(join(consoleDir, 'app.css'), 'body{margin:0}');
  await writeFile(join(consoleDir, 'icons', 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  await writeFile(join(env.root, 'secret.txt'), 'outside the console');
  // a known Claude Code session where discovery finds it
  const dir = join(env.config.claudeConfigDir, 'projects', encodeClaudeProjectDir(PROJECT));
  await mkdir(dir, { recursive: true });
  sessionFile = join(dir, `${SESSION_ID}.jsonl`);
  await writeFile(sessionFile, buildDemoClaudeSession({ sessionId: SESSION_ID, cwd: PROJECT, startMs: Date.parse(NOW) - 3_600_000 }).join('\n') + '\n');
  api = await startApi(env.services, { consoleDir });
});
afterAll(async () => {
  await api?.close();
  await env?.close();
});

describe('GET /v1/whoami', () => {
  it('says what the key may see', async () => {
    expect((await api.call('GET', '/v1/whoami', { key: keys.admin })).json()).toEqual({ admin: true, user: null, keyId: keys.adminId });
    const alice = await api.call('GET', '/v1/whoami', { key: keys.alice });
    expect(alice.status).toBe(200);
    expect(alice.json()).toEqual({ admin: false, user: 'alice', keyId: keys.alice.split('_')[1] });
  });

  it('401 without a valid key', async () => {
    expect((await api.call('GET', '/v1/whoami')).status).toBe(401);
    expect((await api.call('GET', '/v1/whoami', { key: 'ctxvm_000000000000_' + 'A'.repeat(43) })).json().error.code).toBe('E_UNAUTHORIZED');
  });
});

describe('memory: GET /v1/users and /v1/users/{user}/memory', () => {
  let taskId: string;

  beforeAll(async () => {
    // bob first, alice last: alice is the most recently active
    const say = async (user: 'alice' | 'bob', text: string, now: string | number) => {
      const r = await api.call('POST', `/v1/users/${user}/messages`, { key: keys[user], body: { text, now } });
      expect(r.status, r.text).toBe(200);
      return r.json();
    };
    await say('bob', 'Remind me to water the plants tomorrow at 8am', NOW);
    const created = await say('alice', 'Remind me to send the quarterly report tomorrow at 3pm', NOW);
    taskId = created.applied[0].id;
    await say('alice', 'I decided to use PostgreSQL for the billing service', Date.parse(NOW) + 60_000);
    const patch = await api.call('PATCH', `/v1/users/alice/tasks/${encodeURIComponent(taskId)}`, { key: keys.alice, body: { status: 'done', project: 'Finance' } });
    expect(patch.status).toBe(200);
  });

  it('GET /v1/users lists users with memory, most recently active first (admin only)', async () => {
    const r = await api.call('GET', '/v1/users', { key: keys.admin });
    expect(r.status).toBe(200);
    const users = r.json().users as { user: string; turns: number; tasks: number; lastActiveAt: string | null }[];
    // carol has a key but no memory
    expect(users.map((u) => u.user)).toEqual(['alice', 'bob']);
    expect(users[0]).toMatchObject({ user: 'alice', turns: 4, tasks: 1 });
    expect(users[1]).toMatchObject({ user: 'bob', turns: 2, tasks: 1 });
    for (const u of users) expect(Date.parse(u.lastActiveAt!)).toBeGreaterThan(0);
    expect(Date.parse(users[0]!.lastActiveAt!)).toBeGreaterThanOrEqual(Date.parse(users[1]!.lastActiveAt!));
    expect((await api.call('GET', '/v1/users', { key: keys.alice })).status).toBe(403);
    expect((await api.call('GET', '/v1/users')).status).toBe(401);
  });

  it("GET /v1/users/{user}/memory returns every record with its own history", async () => {
    const r = await api.call('GET', '/v1/users/alice/memory', { key: keys.alice });
    expect(r.status).toBe(200);
    const m = r.json();
    expect(m.user).toBe('alice');
    expect(m.memoryVersion).toBeGreaterThan(0);
    expect(m.tasks).toHaveLength(1);
    const task = m.tasks[0];
    expect(task).toMatchObject({ id: taskId, status: 'done', project: 'Finance', title: expect.stringMatching(/quarterly report/) });
    const fields = (task.history as { field: string; recordId: string; seq: number }[]).map((h) => h.field);
    expect(fields).toContain('status');
    expect(task.history.every((h: { recordId: string }) => h.recordId === taskId)).toBe(true);
    const seqs = task.history.map((h: { seq: number }) => h.seq);
    expect(seqs).toEqual([...seqs].sort((a: number, b: number) => b - a)); // newest first
    expect(task.history.find((h: { field: string }) => h.field === 'status')).toMatchObject({ oldValue: 'todo', newValue: 'done' });
    expect(m.projects).toEqual([expect.objectContaining({ name: 'Finance', history: expect.any(Array) })]);
    expect(m.decisions).toEqual([expect.objectContaining({ text: expect.stringMatching(/PostgreSQL/), history: [expect.objectContaining({ kind: 'decision' })] })]);
    expect(Array.isArray(m.facts) && Array.isArray(m.preferences)).toBe(true);
    // the same numbers as the per-route reads
    const all = (await api.call('GET', '/v1/users/alice/history?limit=1000', { key: keys.alice })).json().history as unknown[];
    const inState = [...m.tasks, ...m.projects, ...m.decisions, ...m.facts, ...m.preferences].reduce((n: number, rec: { history: unknown[] }) => n + rec.history.length, 0);
    expect(inState).toBe(all.length);
  });

  it("a user key sees only its own user's memory; admin sees everyone's", async () => {
    expect((await api.call('GET', '/v1/users/alice/memory', { key: keys.bob })).status).toBe(403);
    expect((await api.call('GET', '/v1/users/alice/memory')).status).toBe(401);
    const bob = await api.call('GET', '/v1/users/bob/memory', { key: keys.admin });
    expect(bob.status).toBe(200);
    expect(bob.json().tasks).toEqual([expect.objectContaining({ title: expect.stringMatching(/water the plants/) })]);
    // a user without memory: an empty state, not an error
    expect((await api.call('GET', '/v1/users/carol/memory', { key: keys.carol })).json()).toMatchObject({ user: 'carol', memoryVersion: 0, tasks: [], projects: [], decisions: [] });
  });
});

describe('sessions: GET /v1/sessions/tree and /v1/sessions/analysis', () => {
  let expected: Awaited<ReturnType<typeof analyzeSession>>;

  beforeAll(async () => {
    expected = await analyzeSession(sessionFile);
    const snap = await api.call('POST', '/v1/sessions/snapshot', { key: keys.admin, body: { session: SESSION_ID, name: 'console-before' } });
    expect(snap.status, snap.text).toBe(201);
    const branch = await api.call('POST', '/v1/sessions/branch', { key: keys.admin, body: { snapshot: 'console-before', name: 'console-trimmed' } });
    expect(branch.status, branch.text).toBe(201);
  });

  it('analyses a session by id: the `session analyze` numbers, without perMessage', async () => {
    const r = await api.call('GET', `/v1/sessions/analysis?session=${SESSION_ID}`, { key: keys.admin });
    expect(r.status, r.text).toBe(200);
    const a = r.json();
    expect(a.perMessage).toBeUndefined();
    expect(a).toMatchObject({ agent: 'claude', file: sessionFile, messages: expected.messages, tokens: expected.tokens, breakdown: expected.breakdown, tokenizer: expected.tokenizer });
    expect(a.trimmed).toEqual(expected.trimmed);
    expect(a.trimmed.tokens).toBeLessThan(a.tokens);
    expect(a.cache.scenarios).toEqual(expected.cache.scenarios);
    expect(a.cache.scenarios[0].cumulativeUsd.untrimmed).toHaveLength(30);
    expect(a.findings).toEqual(expected.findings);
    // a prefix and the path resolve to the same file; turns changes the cache model's horizon
    const prefix = await api.call('GET', `/v1/sessions/analysis?session=${SESSION_ID.slice(0, 8)}&turns=5`, { key: keys.admin });
    expect(prefix.json()).toMatchObject({ file: sessionFile, tokens: expected.tokens });
    expect(prefix.json().cache.scenarios[0].cumulativeUsd.untrimmed).toHaveLength(5);
    const byPath = await api.call('GET', `/v1/sessions/analysis?session=${encodeURIComponent(sessionFile)}`, { key: keys.admin });
    expect(byPath.json().tokens).toBe(expected.tokens);
  });

  it('analyses a snapshot (materialised from the object store) and caches its tokens for the tree', async () => {
    const before = (await api.call('GET', '/v1/sessions/tree', { key: keys.admin })).json();
    expect(before.nodes.find((n: { name: string }) => n.name === 'console-before').tokens).toBeNull();
    const r = await api.call('GET', '/v1/sessions/analysis?session=snapshot:console-before', { key: keys.admin });
    expect(r.status, r.text).toBe(200);
    const a = r.json();
    expect(a).toMatchObject({ agent: 'claude', tokens: expected.tokens, messages: expected.messages, file: sessionFile, snapshot: { name: 'console-before', id: expect.any(String) } });
    expect(a.trimmed.tokens).toBe(expected.trimmed.tokens);
    const tree = (await api.call('GET', '/v1/sessions/tree', { key: keys.admin })).json();
    expect(tree.nodes.find((n: { name: string }) => n.name === 'console-before').tokens).toBe(expected.tokens);
  });

  it('GET /v1/sessions/tree is the DAG: the snapshot, its branch, one edge', async () => {
    const r = await api.call('GET', '/v1/sessions/tree', { key: keys.admin });
    expect(r.status).toBe(200);
    const { nodes, edges } = r.json() as { nodes: { id: string; name: string; kind: string; trimmed?: boolean; sessionId: string }[]; edges: { from: string; to: string; kind: string }[] };
    expect(nodes.map((n) => [n.name, n.kind])).toEqual([
      ['console-before', 'snapshot'],
      ['console-trimmed', 'branch'],
    ]);
    expect(nodes[0]!.sessionId).toBe(SESSION_ID);
    expect(nodes[1]!.trimmed).toBe(true);
    expect(edges).toEqual([{ from: nodes[0]!.id, to: nodes[1]!.id, kind: 'branch' }]);
  });

  it('errors name the problem; admin only', async () => {
    expect((await api.call('GET', '/v1/sessions/analysis?session=snapshot:no-such', { key: keys.admin })).status).toBe(404);
    expect((await api.call('GET', '/v1/sessions/analysis?session=ffffffff-0000', { key: keys.admin })).status).toBe(404);
    const missing = await api.call('GET', '/v1/sessions/analysis', { key: keys.admin });
    expect(missing.status).toBe(400);
    expect(missing.json().error.message).toContain('query.session');
    expect((await api.call('GET', `/v1/sessions/analysis?session=${SESSION_ID}&turns=0`, { key: keys.admin })).status).toBe(400);
    expect((await api.call('GET', `/v1/sessions/analysis?session=${SESSION_ID}`, { key: keys.alice })).status).toBe(403);
    expect((await api.call('GET', '/v1/sessions/tree', { key: keys.alice })).status).toBe(403);
    expect((await api.call('GET', '/v1/sessions/tree')).status).toBe(401);
  });
});

describe('GET /v1/metrics', () => {
  it('the numbers of /metrics as JSON', async () => {
    const r = await api.call('GET', '/v1/metrics', { key: keys.admin });
    expect(r.status).toBe(200);
    const m = r.json();
    const text = (await api.call('GET', '/metrics', { key: keys.admin })).text;
    const promCount = (stage: string) => Number(new RegExp(`ctxvm_stage_duration_seconds_count\\{stage="${stage}"\\} (\\d+)`).exec(text)![1]);
    expect(Object.keys(m.stages).sort()).toEqual(['extract', 'rebuild', 'respond', 'total', 'update']);
    for (const stage of Object.keys(m.stages)) {
      const s = m.stages[stage];
      expect(s.count, stage).toBe(3); // three messages in this file
      expect(s.count).toBe(promCount(stage));
      expect(s.p50Ms).toBeLessThanOrEqual(s.p95Ms);
      expect(s.p95Ms).toBeLessThanOrEqual(s.p99Ms);
    }
    expect(m.stages.total.sumMs).toBeGreaterThan(0);
    expect(m.extractions).toMatchObject({ create_task: 2 });
    expect(m.tokens.context).toBe(Number(/ctxvm_context_tokens_total (\d+)/.exec(text)![1]));
    expect(m.tokens.fullHistory).toBe(Number(/ctxvm_full_history_tokens_total (\d+)/.exec(text)![1]));
    expect(m.tokens.savingsRatio).toBeCloseTo(1 - m.tokens.context / m.tokens.fullHistory, 10);
    expect(m.rebuildCache.hit + m.rebuildCache.miss).toBe(m.requests.byRoute['POST /v1/users/{user}/context'] ?? 0); // contexts asked for, not messages
    expect(m.refreshAhead).toEqual({ rebuilds: expect.any(Number), failed: 0 });
    expect(m.hotCache).toMatchObject({ hits: expect.any(Number), misses: expect.any(Number) });
    expect(m.memoryReads.hits).toBeLessThanOrEqual(Number(/ctxvm_memory_read_cache_total\{result="hit"\} (\d+)/.exec(text)![1])); // read a moment later
    expect(m.memoryReads.misses).toBeGreaterThan(0);
    expect(m.memoryReads.hitRatio).toBeCloseTo(m.memoryReads.hits / (m.memoryReads.hits + m.memoryReads.misses), 10);
    expect(m.requests.byRoute['POST /v1/users/{user}/messages']).toBe(3);
    expect(m.requests.total).toBe(Object.values(m.requests.byRoute as Record<string, number>).reduce((a, b) => a + b, 0));
  });

  it('admin only, unless the metrics are public', async () => {
    expect((await api.call('GET', '/v1/metrics', { key: keys.alice })).status).toBe(403);
    expect((await api.call('GET', '/v1/metrics')).status).toBe(401);
    const open = await startApi(env.services, { publicMetrics: true, consoleDir });
    try {
      const r = await open.call('GET', '/v1/metrics');
      expect(r.status).toBe(200);
      expect(r.json().stages.total.count).toBe(0); // its own metrics
    } finally {
      await open.close();
    }
  });
});

/** A raw request: the path goes on the wire exactly as given (fetch would normalise `..`). */
function rawGet(url: string, path: string): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the console files', () => {
  it('serves index.html, scripts, styles and images without a key, with the right headers', async () => {
    const index = await api.call('GET', '/console/');
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(index.headers.get('content-security-policy')).toBe("default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'");
    expect(index.text).toContain('<title>ctxvm</title>');
    expect((await api.call('GET', '/console/index.html')).text).toBe(index.text);
    for (const [path, type] of [
      ['/console/app.js', 'text/javascript; charset=utf-8'],
      ['/console/app.css', 'text/css; charset=utf-8'],
      ['/console/icons/logo.svg', 'image/svg+xml'],
    ] as const) {
      const r = await api.call('GET', path);
      expect(r.status, path).toBe(200);
      expect(r.headers.get('content-type'), path).toBe(type);
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    }
    // revalidation
    const etag = index.headers.get('etag')!;
    expect((await api.call('GET', '/console/', { headers: { 'if-none-match': etag } })).status).toBe(304);
  });

  it('redirects / and /console to /console/', async () => {
    for (const path of ['/', '/console']) {
      const r = await fetch(api.server.url + path, { redirect: 'manual' });
      expect([301, 302], path).toContain(r.status);
      expect(r.headers.get('location')).toBe('/console/');
    }
  });

  it('404 JSON for a missing file', async () => {
    const r = await api.call('GET', '/console/nope.js');
    expect(r.status).toBe(404);
    expect(r.json().error.code).toBe('E_NOT_FOUND');
    expect((await api.call('GET', '/console/icons/')).status).toBe(404); // a folder without index.html
  });

  it('rejects path traversal, raw, encoded and absolute', async () => {
    for (const path of [
      '/console/../package.json',
      '/console/../secret.txt',
      '/console/..%2fsecret.txt',
      '/console/..%2F..%2Fpackage.json',
      '/console/%2e%2e/secret.txt',
      '/console/%2E%2E%2Fsecret.txt',
      '/console/icons/..%2f..%2fsecret.txt',
      '/console/..%5csecret.txt',
      '/console/%2fetc%2fpasswd',
      '/console//etc/passwd',
      '/console/%00index.html',
      '/console/%E0%A4%A',
      '/console/%252e%252e%252fsecret.txt',
    ]) {
      const r = await rawGet(api.server.url, path);
      expect([400, 404], `${path}: ${r.status} ${r.body.slice(0, 80)}`).toContain(r.status);
      expect(r.body, path).not.toContain('outside the console');
      expect(r.body, path).not.toContain('"name": "ctxvm"');
      expect(JSON.parse(r.body).error.code, path).toMatch(/^E_(USAGE|NOT_FOUND|ROUTE)$/);
    }
    expect((await rawGet(api.server.url, '/console/..%2fsecret.txt')).status).toBe(400);
  });

  it('503 naming the fix when the console is not built; the API still works', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'ctxvm-no-console-'));
    const other = await startApi(env.services, { consoleDir: join(empty, 'missing') });
    try {
      const r = await other.call('GET', '/console/');
      expect(r.status).toBe(503);
      expect(r.json().error).toMatchObject({ code: 'E_UNAVAILABLE', hint: expect.stringContaining('npm run build') });
      expect((await other.call('GET', '/healthz')).status).toBe(200);
    } finally {
      await other.close();
      await rm(empty, { recursive: true, force: true });
    }
  });
});

describe('OpenAPI', () => {
  it('documents the new routes; the static files are not API routes', async () => {
    const doc = (await api.call('GET', '/openapi.json')).json();
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    for (const route of ['GET /v1/whoami', 'GET /v1/users', 'GET /v1/users/{user}/memory', 'GET /v1/sessions/tree', 'GET /v1/sessions/analysis', 'GET /v1/metrics']) expect(documented).toContain(route);
    expect(documented.some((r) => r.includes('/console'))).toBe(false);
    expect(doc.paths['/v1/sessions/analysis'].get.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'session', in: 'query', required: true })]));
  });
});
