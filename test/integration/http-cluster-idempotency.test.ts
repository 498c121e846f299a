/**
 * The same `Idempotency-Key` sent many times at once to `ctxvm serve --workers 2` (the built
 * CLI, `dist/cli/main.js`; run `npm run build` first) over one SQLite file, the LLM a local
 * chat-completions server that takes 600 ms to answer — the window in which a copy on the other
 * worker used to find the message stored but unanswered and answer it again (200 `resumed`).
 * Exactly one request gets 200 and is answered (one LLM call, one task); every other copy gets
 * 409 E_CONFLICT with the turn ids (response null while it is answered, the reply after).
 */
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAiReply, startProviderTestServer, type ProviderTestServer } from '../../src/llm/testing.js';
import { createApiKeyStore } from '../../src/server/api-keys.js';
import { openWarmDatabase } from '../../src/store/warm/open.js';
import { REPO_ROOT } from '../support/corpus.js';
import { freshRequest } from '../support/fresh-request.js';
import { startServeProcess, type ServeProcess } from '../support/serve-process.js';

const MAIN = join(REPO_ROOT, 'dist', 'cli', 'main.js');
const COPIES = 8;
const REPLY = 'Noted: renew the lease on Friday.';
let root: string;
let llm: ProviderTestServer;
let serve: ServeProcess | undefined;
let key: string;

const post = (path: string, body: unknown, headers: Record<string, string>) => freshRequest(serve!.url, key, 'POST', path, body, headers);
const get = async (path: string) => (await freshRequest(serve!.url, key, 'GET', path)).json;

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error('dist/cli/main.js is missing: run `npm run build` first');
  root = await mkdtemp(join(tmpdir(), 'ctxvm-http-idempotency-'));
  const home = join(root, 'ctxvm');
  await mkdir(home, { recursive: true });
  const db = await openWarmDatabase({ db: join(home, 'ctxvm.db') });
  key = (await createApiKeyStore(db).create({ userId: 'alice' })).key;
  await db.close();
  llm = await startProviderTestServer(() => ({ body: openAiReply(REPLY), delayMs: 600 }));
  serve = await startServeProcess(MAIN, ['--port', '0', '--workers', '2', '--json', '--log-level', 'warn', '--tz', 'UTC'], {
    ...process.env,
    CTXVM_HOME: home,
    CLAUDE_CONFIG_DIR: join(root, 'claude'),
    CODEX_HOME: join(root, 'codex'),
    CTXVM_DB: '',
    CTXVM_REDIS: '',
    CTXVM_LLM: 'openai',
    OPENAI_BASE_URL: `${llm.origin}/v1`,
    OPENAI_API_KEY: 'sk-test',
    CTXVM_LLM_MODEL: 'test-model',
    CTXVM_LLM_MAX_RETRIES: '0',
  });
}, 60_000);

afterAll(async () => {
  if (serve && serve.child.exitCode === null) {
    serve.child.kill('SIGKILL');
    await once(serve.child, 'exit');
  }
  await llm?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('one Idempotency-Key sent many times at once to serve --workers 2', () => {
  it('is answered once (200) and refused for every other copy (409)', async () => {
    // the schema, full-text index and both workers warm before the race
    expect((await post('/v1/users/alice/messages', { text: 'hello' }, {})).status).toBe(200);
    expect((await post('/v1/users/alice/messages', { text: 'hello again' }, {})).status).toBe(200);
    const calls = llm.requests.length;

    const body = { text: 'remind me to renew the lease on friday', now: '2026-03-10T09:00:00Z' };
    const send = async (i: number) => {
      // staggered over the first reply's 600 ms, over both workers
      await new Promise((r) => setTimeout(r, i * 50));
      return post('/v1/users/alice/messages', body, { 'idempotency-key': 'lease-1' });
    };
    const results = await Promise.all(Array.from({ length: COPIES }, (_, i) => send(i)));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 409);
    expect(ok.map((r) => ({ resumed: r.json.resumed, response: r.json.response })), serve!.stderr()).toEqual([{ resumed: false, response: REPLY }]);
    expect(refused).toHaveLength(COPIES - 1);
    for (const r of refused) {
      expect(r.json.error).toMatchObject({ code: 'E_CONFLICT', details: { id: 'lease-1', turnIds: { user: 'lease-1', assistant: 'lease-1:reply' } } });
      expect([null, REPLY]).toContain(r.json.error.details.response);
    }
    // answered once: one LLM call, one task, one pair of turns
    expect(llm.requests.length - calls).toBe(1);
    const tasks = (await get('/v1/users/alice/tasks')).tasks as { title: string }[];
    expect(tasks.map((t) => t.title)).toEqual([expect.stringMatching(/lease/)]);

    // a retry once it is answered: 409 with the stored reply
    const retry = await post('/v1/users/alice/messages', body, { 'idempotency-key': 'lease-1' });
    expect(retry.status).toBe(409);
    expect(retry.json.error.details.response).toBe(REPLY);
    expect(llm.requests.length - calls).toBe(1);
  }, 60_000);
});
