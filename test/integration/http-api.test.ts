/**
 * The HTTP API over a real loopback socket and a real SQLite warm store in a temp CTXVM_HOME:
 * authentication and authorisation, validation, the body limit, every route's happy path, the
 * error shape, /metrics, /openapi.json and the request log.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeClaudeProjectDir } from '../../src/session/discovery/resolve.js';
import { createFsObjectStore } from '../../src/store/drivers/objects-fs.js';
import { CLAUDE_CORPUS_DIR } from '../support/corpus.js';
import { captureLog, createServerEnv, startApi, type CapturedLog, type RunningApi, type ServerEnv } from '../support/server-env.js';
import { containsValue, trimWithRefs, type StubRef } from '../support/trimmed-session.js';

const CORPUS_SESSION = join(CLAUDE_CORPUS_DIR, 'hillview', 'projects', '-home-jenkins-Personal-AI-Infrastructure', '155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl');
// its trim pages tool results out behind stubs (the session above only drops duplicates)
const PAGED_SESSION = join(CLAUDE_CORPUS_DIR, 'drmaciver', 'coverage-test-fix.jsonl');
const haveCorpus = existsSync(CORPUS_SESSION) && existsSync(PAGED_SESSION);
if (!haveCorpus) console.warn(`[skip] ${CORPUS_SESSION} not found: session route tests skipped`);

const NOW = '2026-03-10T09:00:00Z';
let env: ServerEnv;
let api: RunningApi;
let log: CapturedLog;
let keys: { admin: string; alice: string; bob: string; revoked: string };

beforeAll(async () => {
  // reads cached as with Redis or PostgreSQL: the refresh-ahead and read-cache metrics are tested here
  env = await createServerEnv({ cacheReads: true });
  const k = env.services.keys;
  const revoked = await k.create({ userId: 'alice' });
  await k.revoke(revoked.keyId);
  keys = { admin: (await k.create({ admin: true })).key, alice: (await k.create({ userId: 'alice' })).key, bob: (await k.create({ userId: 'bob' })).key, revoked: revoked.key };
  log = captureLog();
  api = await startApi(env.services, { logger: log.logger });
});
afterAll(async () => {
  await api?.close();
  await env?.close();
});

describe('authentication and authorisation', () => {
  it('401 without a key, with a malformed, unknown or revoked key', async () => {
    const missing = await api.call('GET', '/v1/users/alice/tasks');
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(missing.json().error).toMatchObject({ code: 'E_UNAUTHORIZED' });
    expect(missing.json().error.message).toMatch(/Authorization: Bearer/);
    for (const key of ['nonsense', `ctxvm_000000000000_${'A'.repeat(43)}`, keys.revoked, keys.alice.slice(0, -1) + (keys.alice.endsWith('A') ? 'B' : 'A')]) {
      const r = await api.call('GET', '/v1/users/alice/tasks', { key });
      expect(r.status, key).toBe(401);
      expect(r.json().error.code).toBe('E_UNAUTHORIZED');
    }
  });

  it("403 for a user key on another user's routes and on the session routes; admin reaches everything", async () => {
    const other = await api.call('GET', '/v1/users/bob/tasks', { key: keys.alice });
    expect(other.status).toBe(403);
    expect(other.json().error).toMatchObject({ code: 'E_FORBIDDEN' });
    const post = await api.call('POST', '/v1/users/bob/messages', { key: keys.alice, body: { text: 'remind me to spy on bob' } });
    expect(post.status).toBe(403);
    expect((await api.call('GET', '/v1/users/bob/history', { key: keys.bob })).status).toBe(200);
    expect((await api.call('GET', '/v1/sessions', { key: keys.alice })).status).toBe(403);
    expect((await api.call('GET', '/metrics', { key: keys.alice })).status).toBe(403);
    expect((await api.call('GET', '/v1/users/alice/tasks', { key: keys.alice })).status).toBe(200);
    expect((await api.call('GET', '/v1/users/bob/tasks', { key: keys.admin })).status).toBe(200);
    expect((await api.call('GET', '/v1/sessions', { key: keys.admin })).status).toBe(200);
  });

  it('checks the key before reading or validating the body', async () => {
    const r = await api.call('POST', '/v1/users/alice/messages', { body: { nope: 1 } });
    expect(r.status).toBe(401);
  });
});

describe('validation', () => {
  const post = (body: unknown) => api.call('POST', '/v1/users/alice/messages', { key: keys.alice, body });

  it('400 naming the field', async () => {
    for (const [body, field] of [
      [{ text: 3 }, 'body.text'],
      [{}, 'body.text'],
      [{ text: '   ' }, 'body.text'],
      [{ text: 'hi', now: 'yesterday-ish' }, 'body.now'],
      [{ text: 'hi', extra: true }, 'body'],
      [[1, 2], 'body'],
    ] as const) {
      const r = await post(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json().error.code).toBe('E_USAGE');
      expect(r.json().error.message).toContain(field);
    }
    const extra = await post({ text: 'hi', extra: true });
    expect(extra.json().error.message).toContain('extra');
  });

  it('400 for a body that is not JSON, and for bad queries and patches', async () => {
    const notJson = await api.call('POST', '/v1/users/alice/messages', { key: keys.alice, rawBody: '{"text": "unterminated', headers: { 'content-type': 'application/json' } });
    expect(notJson.status).toBe(400);
    expect(notJson.json().error.message).toMatch(/body: not valid JSON/);
    const status = await api.call('GET', '/v1/users/alice/tasks?status=todo,sleeping', { key: keys.alice });
    expect(status.status).toBe(400);
    expect(status.json().error.message).toContain('query.status');
    const limit = await api.call('GET', '/v1/users/alice/memories?limit=-3', { key: keys.alice });
    expect(limit.status).toBe(400);
    expect(limit.json().error.message).toContain('query.limit');
    const empty = await api.call('PATCH', '/v1/users/alice/tasks/whatever', { key: keys.alice, body: {} });
    expect(empty.status).toBe(400);
    expect(empty.json().error.message).toMatch(/at least one of/);
    const badStatus = await api.call('PATCH', '/v1/users/alice/tasks/whatever', { key: keys.alice, body: { status: 'finished' } });
    expect(badStatus.status).toBe(400);
    expect(badStatus.json().error.message).toContain('body.status');
    const budget = await api.call('POST', '/v1/users/alice/context', { key: keys.alice, body: { query: 'x', budget: 0 } });
    expect(budget.status).toBe(400);
    expect(budget.json().error.message).toContain('body.budget');
  });

  it('415 for a body sent as another media type; JSON with a charset is read', async () => {
    const body = JSON.stringify({ text: 'what is on my list?' });
    for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded']) {
      const r = await api.call('POST', '/v1/users/alice/context', { key: keys.alice, rawBody: JSON.stringify({ query: 'x' }), headers: { 'content-type': type } });
      expect(r.status, type).toBe(415);
      expect(r.json().error.code).toBe('E_MEDIA_TYPE');
      expect(r.json().error.message).toContain(type);
    }
    const charset = await api.call('POST', '/v1/users/alice/context', { key: keys.alice, rawBody: JSON.stringify({ query: 'x' }), headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(charset.status).toBe(200);
    const plain = await api.call('POST', '/v1/users/alice/messages', { key: keys.alice, rawBody: body, headers: { 'content-type': 'text/plain' } });
    expect(plain.status).toBe(415);
  });

  it('413 for a body over 1 MiB, announced or streamed', async () => {
    const big = JSON.stringify({ text: 'x'.repeat(1024 * 1024) });
    const announced = await api.call('POST', '/v1/users/alice/messages', { key: keys.alice, rawBody: big, headers: { 'content-type': 'application/json' } });
    expect(announced.status).toBe(413);
    expect(announced.json().error).toMatchObject({ code: 'E_TOO_LARGE' });
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 20) return controller.close();
        sent++;
        controller.enqueue(chunk);
      },
    });
    const streamed = await api.call('POST', '/v1/users/alice/messages', { key: keys.alice, rawBody: stream, headers: { 'content-type': 'application/json' } });
    expect(streamed.status).toBe(413);
    expect(streamed.json().error.code).toBe('E_TOO_LARGE');
  });

  it('404 as JSON for unknown routes and records', async () => {
    const route = await api.call('GET', '/v2/nothing', { key: keys.admin });
    expect(route.status).toBe(404);
    expect(route.json().error.code).toBe('E_ROUTE');
    const task = await api.call('PATCH', '/v1/users/alice/tasks/no-such-task', { key: keys.alice, body: { status: 'done' } });
    expect(task.status).toBe(404);
    expect(task.json().error.code).toBe('E_NOT_FOUND');
  });
});

describe('memory routes', () => {
  let taskId: string;

  it('POST /messages processes a message and stores what it says', async () => {
    const r = await api.call('POST', '/v1/users/alice/messages', { key: keys.alice, body: { text: 'Remind me to send the quarterly report tomorrow at 3pm', now: NOW } });
    expect(r.status).toBe(200);
    const body = r.json();
    expect(body.intent).toBe('create_task');
    expect(body.applied).toEqual([expect.objectContaining({ action: 'created', kind: 'task' })]);
    expect(body.response).toMatch(/report/i);
    expect(body.turnIds.user).toEqual(expect.any(String));
    expect(body.metrics.latencyMs.total).toBeGreaterThan(0);
    expect(body.context.tokens).toBeGreaterThan(0);
    taskId = body.applied[0].id;
    // Unix ms is accepted too
    const ms = await api.call('POST', '/v1/users/alice/messages', { key: keys.alice, body: { text: 'I decided to use PostgreSQL for the billing service', now: Date.parse(NOW) + 60_000 } });
    expect(ms.status).toBe(200);
  });

  it('POST /messages with an Idempotency-Key: a retry is answered 409 with the first reply and stores nothing', async () => {
    const send = (key: string) =>
      api.call('POST', '/v1/users/retrying/messages', { key: keys.admin, body: { text: 'remind me to pay rent on friday', now: NOW }, headers: { 'idempotency-key': key } });
    const first = await send('req-7f3a');
    expect(first.status).toBe(200);
    expect(first.json()).toMatchObject({ turnIds: { user: 'req-7f3a', assistant: 'req-7f3a:reply' }, resumed: false });
    const retry = await send('req-7f3a');
    expect(retry.status).toBe(409);
    expect(retry.json().error).toMatchObject({ code: 'E_CONFLICT', details: { id: 'req-7f3a', turnIds: { user: 'req-7f3a', assistant: 'req-7f3a:reply' }, response: first.json().response } });
    expect((await api.call('GET', '/v1/users/retrying/tasks', { key: keys.admin })).json().tasks).toHaveLength(1);
    // the key of another message: refused, nothing stored
    const reused = await api.call('POST', '/v1/users/retrying/messages', { key: keys.admin, body: { text: 'remind me to call mum', now: NOW }, headers: { 'idempotency-key': 'req-7f3a' } });
    expect(reused.status).toBe(409);
    expect(reused.json().error.message).toMatch(/different message/);
    expect((await send('req-7f3b')).status).toBe(200); // a new key is a new message
    expect((await api.call('GET', '/v1/users/retrying/tasks', { key: keys.admin })).json().tasks).toHaveLength(2);
    const blank = await send('   ');
    expect(blank.status).toBe(400);
    expect(blank.json().error.message).toContain('header.idempotency-key');
  });

  it('GET /tasks lists it, filtered by status', async () => {
    const r = await api.call('GET', '/v1/users/alice/tasks', { key: keys.alice });
    expect(r.status).toBe(200);
    const tasks = r.json().tasks as { id: string; title: string; status: string; due: string | null }[];
    expect(tasks).toEqual([expect.objectContaining({ id: taskId, status: 'todo', due: expect.stringMatching(/^2026-03-11T15:00/) })]);
    expect(tasks[0]!.title).toMatch(/quarterly report/);
    expect((await api.call('GET', '/v1/users/alice/tasks?status=done', { key: keys.alice })).json().tasks).toEqual([]);
    // bob sees none of alice's
    expect((await api.call('GET', '/v1/users/bob/tasks', { key: keys.bob })).json().tasks).toEqual([]);
  });

  it('PATCH /tasks/{id} changes it and the history keeps the old value', async () => {
    const r = await api.call('PATCH', `/v1/users/alice/tasks/${encodeURIComponent(taskId)}`, { key: keys.alice, body: { status: 'done', priority: 'high', project: 'Finance', due: null } });
    expect(r.status).toBe(200);
    expect(r.json().task).toMatchObject({ id: taskId, status: 'done', priority: 'high', project: 'Finance', due: null });
    expect((await api.call('GET', '/v1/users/alice/tasks?status=done', { key: keys.alice })).json().tasks).toHaveLength(1);
    const h = await api.call('GET', `/v1/users/alice/history?record=${encodeURIComponent(taskId)}`, { key: keys.alice });
    expect(h.status).toBe(200);
    const status = (h.json().history as { field: string; oldValue: unknown; newValue: unknown }[]).find((e) => e.field === 'status');
    expect(status).toMatchObject({ oldValue: 'todo', newValue: 'done' });
    const all = await api.call('GET', '/v1/users/alice/history?limit=2', { key: keys.alice });
    expect(all.json().history).toHaveLength(2);
  });

  it('GET /memories searches and lists', async () => {
    const q = await api.call('GET', `/v1/users/alice/memories?q=${encodeURIComponent('quarterly report')}`, { key: keys.alice });
    expect(q.status).toBe(200);
    expect(q.json().memories[0]).toMatchObject({ kind: 'task', id: taskId, score: expect.any(Number) });
    const decision = await api.call('GET', '/v1/users/alice/memories?q=PostgreSQL&kind=decision', { key: keys.alice });
    expect(decision.json().memories).toEqual([expect.objectContaining({ kind: 'decision', text: expect.stringMatching(/PostgreSQL/) })]);
    const recent = await api.call('GET', '/v1/users/alice/memories?kind=task,decision,turn&limit=10', { key: keys.alice });
    const kinds = new Set((recent.json().memories as { kind: string }[]).map((m) => m.kind));
    expect(kinds).toEqual(new Set(['task', 'decision', 'turn']));
  });

  it('POST /context rebuilds without storing', async () => {
    const before = (await api.call('GET', '/v1/users/alice/memories?kind=turn&limit=500', { key: keys.alice })).json().memories.length;
    const r = await api.call('POST', '/v1/users/alice/context', { key: keys.alice, body: { query: 'what did I decide about the database?', budget: 500, now: NOW } });
    expect(r.status).toBe(200);
    const c = r.json();
    expect(c.budgetTokens).toBe(500);
    expect(c.tokens).toBeLessThanOrEqual(500);
    expect(c.layers.map((l: { name: string }) => l.name)).toEqual(['system', 'profile', 'project', 'tasks', 'history', 'memories']);
    expect(c.text).toMatch(/PostgreSQL/);
    const after = (await api.call('GET', '/v1/users/alice/memories?kind=turn&limit=500', { key: keys.alice })).json().memories.length;
    expect(after).toBe(before);
  });

  it('serves a question asked again after a memory change from the hot tier (refresh-ahead), and counts it in /v1/metrics', async () => {
    const key = keys.admin;
    const ask = async () => (await api.call('POST', '/v1/users/dora/context', { key, body: { query: 'what are my open tasks?' } })).json();
    const metrics = async () => (await api.call('GET', '/v1/metrics', { key })).json();
    expect((await api.call('POST', '/v1/users/dora/messages', { key, body: { text: 'remind me to renew the passport next week' } })).status).toBe(200);
    const m0 = await metrics();
    expect((await ask()).cached).toBe(false);
    expect((await ask()).cached).toBe(true);
    const [task] = (await api.call('GET', '/v1/users/dora/tasks', { key })).json().tasks;
    expect((await api.call('PATCH', `/v1/users/dora/tasks/${task.id}`, { key, body: { priority: 'high' } })).status).toBe(200);
    // the background rebuild lands within moments; wait for the counter, not a fixed time
    for (let i = 0; i < 100 && (await metrics()).refreshAhead.rebuilds === m0.refreshAhead.rebuilds; i++) await new Promise((r) => setTimeout(r, 50));
    const again = await ask();
    expect(again.cached).toBe(true);
    expect(again.text).toMatch(/renew the passport/);
    const m1 = await metrics();
    expect(m1.refreshAhead.rebuilds).toBe(m0.refreshAhead.rebuilds + 1);
    expect(m1.rebuildCache).toEqual({ hit: m0.rebuildCache.hit + 2, miss: m0.rebuildCache.miss + 1 });
  });
});

describe.skipIf(!haveCorpus)('session routes (admin)', () => {
  const project = '/home/jenkins/Personal_AI_Infrastructure';
  const sessionId = '155715ec-f4e9-47ea-859c-2e4cfcceab6f';
  let refs: StubRef[];

  beforeAll(async () => {
    const dir = join(env.config.claudeConfigDir, 'projects', encodeClaudeProjectDir(project));
    await mkdir(dir, { recursive: true });
    await copyFile(CORPUS_SESSION, join(dir, `${sessionId}.jsonl`));
    // a file trimmed by ctxvm into this server's object store
    refs = await trimWithRefs(PAGED_SESSION, join(env.root, 'trimmed.jsonl'), createFsObjectStore({ root: env.config.objectsDir }));
  });

  it('GET /v1/sessions lists the session', async () => {
    const r = await api.call('GET', '/v1/sessions?agent=claude', { key: keys.admin });
    expect(r.status).toBe(200);
    expect(r.json().sessions).toEqual([expect.objectContaining({ agent: 'claude', id: sessionId, project })]);
    expect((await api.call('GET', '/v1/sessions?agent=codex', { key: keys.admin })).json().sessions).toEqual([]);
    expect((await api.call('GET', '/v1/sessions?agent=gemini', { key: keys.admin })).status).toBe(400);
  });

  it('POST snapshot, branch and trim', async () => {
    const snap = await api.call('POST', '/v1/sessions/snapshot', { key: keys.admin, body: { session: sessionId, name: 'before', tags: ['api'] } });
    expect(snap.status).toBe(201);
    expect(snap.json()).toMatchObject({ name: 'before', bytes: expect.any(Number), session: { id: sessionId, agent: 'claude' } });
    const again = await api.call('POST', '/v1/sessions/snapshot', { key: keys.admin, body: { session: sessionId, name: 'before' } });
    expect(again.status).toBe(409);
    expect(again.json().error.code).toBe('E_EXISTS');

    const branch = await api.call('POST', '/v1/sessions/branch', { key: keys.admin, body: { snapshot: 'before', name: 'experiment' } });
    expect(branch.status).toBe(201);
    const b = branch.json();
    expect(b.resume).toContain(b.sessionId);
    expect(existsSync(b.path)).toBe(true);
    expect(b.trimmed).not.toBeNull();

    const trim = await api.call('POST', '/v1/sessions/trim', { key: keys.admin, body: { session: sessionId, name: 'tidy' } });
    expect(trim.status).toBe(201);
    expect(trim.json()).toMatchObject({ name: 'tidy-trimmed', snapshot: { name: 'tidy' } });

    const missing = await api.call('POST', '/v1/sessions/branch', { key: keys.admin, body: { snapshot: 'no-such-snapshot', name: 'x' } });
    expect(missing.status).toBe(404);
  });

  it('GET /page-in/{ref} returns the original payload', async () => {
    expect(refs.length).toBeGreaterThan(0);
    for (const { ref, original, file } of refs.slice(0, 5)) {
      const r = await api.call('GET', `/v1/sessions/page-in/${encodeURIComponent(ref)}?session=${encodeURIComponent(file)}`, { key: keys.admin });
      expect(r.status, ref).toBe(200);
      const p = r.json();
      expect(p.ref).toBe(ref);
      expect(p.verified).toBe(true);
      expect(containsValue(original, p.content), ref).toBe(true);
    }
    const unknown = await api.call('GET', `/v1/sessions/page-in/toolu_01NoSuchCallAnywhere0000?session=${encodeURIComponent(refs[0]!.file)}`, { key: keys.admin });
    expect(unknown.status).toBe(404);
    const unknownPack = await api.call('GET', `/v1/sessions/page-in/${encodeURIComponent(`ctxvm:${'0'.repeat(16)}#0/message/content/0/content`)}`, { key: keys.admin });
    expect(unknownPack.status).toBe(404);
    const bad = await api.call('GET', '/v1/sessions/page-in/not%20a%20ref', { key: keys.admin });
    expect(bad.status).toBe(400);
  });
});

describe('system routes', () => {
  it('GET /healthz without a key', async () => {
    const r = await api.call('GET', '/healthz');
    expect(r.status).toBe(200);
    expect(r.json()).toMatchObject({ ok: true, version: 'test' });
  });

  it('GET /metrics: stage latencies, token savings, hot-cache hit rate, extractions by intent', async () => {
    expect((await api.call('GET', '/metrics')).status).toBe(401);
    const r = await api.call('GET', '/metrics', { key: keys.admin });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = r.text;
    for (const stage of ['extract', 'update', 'rebuild', 'respond', 'total']) expect(text).toMatch(new RegExp(`ctxvm_stage_duration_seconds_bucket\\{stage="${stage}",le="\\+Inf"\\} [1-9]`));
    expect(text).toMatch(/ctxvm_extractions_total\{intent="create_task"\} [1-9]/);
    expect(text).toMatch(/ctxvm_full_history_tokens_total [1-9]/);
    expect(text).toMatch(/ctxvm_context_tokens_total [1-9]/);
    expect(text).toMatch(/# TYPE ctxvm_token_savings_ratio gauge\nctxvm_token_savings_ratio -?[0-9.e-]+\n/);
    expect(text).toMatch(/ctxvm_hot_cache_hit_ratio [0-9.]+/);
    expect(text).toMatch(/ctxvm_hot_cache_requests_total\{result="miss"\} \d+/);
    // the requests above read memory through the cache: some found a current value, some went to the warm store
    expect(text).toMatch(/ctxvm_memory_read_cache_total\{result="hit"\} [1-9]/);
    expect(text).toMatch(/ctxvm_memory_read_cache_total\{result="miss"\} [1-9]/);
    expect(text).toMatch(/ctxvm_http_requests_total\{route="\/v1\/users\/\{user\}\/messages",method="POST",status="200"\} [1-9]/);
    expect(text).toMatch(/ctxvm_http_request_duration_seconds_count\{route="\/v1\/users\/\{user\}\/tasks"\} [1-9]/);
  });

  it('GET /openapi.json documents every route', async () => {
    const r = await api.call('GET', '/openapi.json');
    expect(r.status).toBe(200);
    const doc = r.json();
    expect(doc.openapi).toBe('3.1.0');
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    const mounted = api.http.routes.map((route) => `${route.method.toUpperCase()} ${route.path}`);
    expect(documented.sort()).toEqual(mounted.sort());
    for (const expected of [
      'POST /v1/users/{user}/messages',
      'POST /v1/users/{user}/context',
      'GET /v1/users/{user}/tasks',
      'PATCH /v1/users/{user}/tasks/{id}',
      'GET /v1/users/{user}/memories',
      'GET /v1/users/{user}/history',
      'GET /v1/sessions',
      'POST /v1/sessions/snapshot',
      'POST /v1/sessions/branch',
      'POST /v1/sessions/trim',
      'GET /v1/sessions/page-in/{ref}',
      'GET /healthz',
      'GET /metrics',
      'GET /openapi.json',
    ]) {
      expect(documented).toContain(expected);
    }
    const message = doc.paths['/v1/users/{user}/messages'].post;
    expect(message.requestBody.content['application/json'].schema).toMatchObject({ type: 'object', required: ['text'], properties: { text: { type: 'string' } } });
    expect(message.parameters).toEqual([
      expect.objectContaining({ name: 'user', in: 'path', required: true }),
      expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false }),
    ]);
    expect(Object.keys(message.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '409', '413']));
    expect(Object.keys(doc.paths['/v1/users/{user}/context'].post.responses)).not.toContain('409');
    expect(doc.paths['/v1/users/{user}/tasks'].get.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'status', in: 'query', required: false })]));
    expect(doc.paths['/healthz'].get.security).toEqual([]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(message.responses['200'].headers['X-Request-Id']).toEqual({ $ref: '#/components/headers/RequestId' });
    expect(message.responses['409'].headers['X-Request-Id']).toEqual({ $ref: '#/components/headers/RequestId' });
    expect(doc.components.headers.RequestId.schema).toEqual({ type: 'string' });
  });
});

describe('request log', () => {
  it('one line per request with stage timings; no message text, no key', async () => {
    const secret = 'the launch codes are 0000';
    const before = log.lines.length;
    const r = await api.call('POST', '/v1/users/alice/messages', { key: keys.alice, body: { text: `Remember that ${secret}`, now: NOW } });
    expect(r.status).toBe(200);
    const lines = log.lines.slice(before);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ method: 'POST', route: '/v1/users/{user}/messages', status: 200, user: 'alice', keyId: expect.any(String) });
    const stages = lines[0]!.stages as Record<string, number>;
    for (const s of ['auth', 'validate', 'extract', 'update', 'rebuild', 'respond', 'handler']) expect(typeof stages[s], s).toBe('number');
    expect(log.raw()).not.toContain(secret);
    for (const key of Object.values(keys)) expect(log.raw()).not.toContain(key);
    const denied = log.lines.find((l) => l.status === 401);
    expect(denied).toMatchObject({ errorCode: 'E_UNAUTHORIZED' });
  });

  it('gives every request an id, in the X-Request-Id response header and on its log line; a client id is kept if plain', async () => {
    const lineOf = async (headers: Record<string, string>, path = '/v1/users/alice/tasks') => {
      const before = log.lines.length;
      const r = await api.call('GET', path, { key: keys.alice, headers });
      const line = log.lines.slice(before).find((l) => l.route !== undefined)!;
      return { id: r.headers.get('x-request-id'), line };
    };
    const generated = await lineOf({});
    expect(generated.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(generated.line.requestId).toBe(generated.id);
    const other = await lineOf({});
    expect(other.id).not.toBe(generated.id);
    const own = await lineOf({ 'x-request-id': 'client-42.retry:1' });
    expect(own).toMatchObject({ id: 'client-42.retry:1', line: { requestId: 'client-42.retry:1' } });
    // anything else is replaced: nothing a client sends is written to the log unchecked
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon', '{"json":1}']) {
      const r = await lineOf({ 'x-request-id': bad });
      expect(r.id, bad).toMatch(/^[0-9a-f-]{36}$/);
    }
    // errors carry it too
    const failed = await lineOf({ 'x-request-id': 'req-err' }, '/v1/users/bob/tasks');
    expect(failed).toMatchObject({ id: 'req-err', line: { status: 403, requestId: 'req-err' } });
    // the app also answers without Node's server (fetch API alone, e.g. in another runtime)
    const direct = await api.http.app.request('/healthz', { headers: { 'x-request-id': 'direct-1' } });
    expect(direct.headers.get('x-request-id')).toBe('direct-1');
    expect((await api.http.app.request('/healthz')).headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('logs content only when asked', async () => {
    const loud = captureLog();
    const other = await startApi(env.services, { logger: loud.logger, logContent: true });
    try {
      await other.call('POST', '/v1/users/bob/messages', { key: keys.bob, body: { text: 'Remind me to water the plants', now: NOW } });
      expect(loud.lines[0]).toMatchObject({ content: { text: 'Remind me to water the plants', response: expect.any(String) } });
    } finally {
      await other.close();
    }
  });
});
