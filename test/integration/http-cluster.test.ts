/**
 * `ctxvm serve --workers 2` as real processes (the built CLI, `dist/cli/main.js`; run
 * `npm run build` first): both workers answer on one port, each with its own SQLite connection
 * and its own in-process hot cache. Every request here opens a new connection, so node:cluster
 * hands consecutive requests to alternating workers: a write through one worker is read back
 * through the other, after both have cached the user's memory — a stale private cache would
 * show. Reminders are scanned by the primary alone and reach an SSE stream on either worker.
 * On SIGTERM everything stops with exit 0 and the cold archive holds every stored turn.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKeyStore } from '../../src/server/api-keys.js';
import { openWarmDatabase } from '../../src/store/warm/open.js';
import { REPO_ROOT } from '../support/corpus.js';
import { freshRequest } from '../support/fresh-request.js';

const MAIN = join(REPO_ROOT, 'dist', 'cli', 'main.js');
let root: string;
let dbPath: string;
let server: ChildProcess | undefined;
let url: string;
let key: string;
let stderr = '';

const call = (method: string, path: string, body?: unknown) => freshRequest(url, key, method, path, body);

const titles = async () => ((await call('GET', '/v1/users/alice/tasks')).json.tasks as { title: string; status: string }[]).map((t) => `${t.title}:${t.status}`);

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error('dist/cli/main.js is missing: run `npm run build` first');
  root = await mkdtemp(join(tmpdir(), 'ctxvm-http-cluster-'));
  const home = join(root, 'ctxvm');
  await mkdir(home, { recursive: true });
  dbPath = join(home, 'ctxvm.db');
  const db = await openWarmDatabase({ db: dbPath });
  key = (await createApiKeyStore(db).create({ userId: 'alice' })).key;
  await db.close();
  server = spawn(process.execPath, [MAIN, 'serve', '--port', '0', '--workers', '2', '--json', '--log-level', 'warn', '--reminder-interval', '1', '--tz', 'UTC'], {
    env: { ...process.env, CTXVM_HOME: home, CLAUDE_CONFIG_DIR: join(root, 'claude'), CODEX_HOME: join(root, 'codex'), CTXVM_DB: '', CTXVM_REDIS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stderr!.on('data', (d) => (stderr += d));
  let out = '';
  const info = await new Promise<{ url: string; workers: number }>((resolve, reject) => {
    server!.stdout!.on('data', (d) => {
      out += d;
      const end = out.indexOf('}\n');
      if (end !== -1) resolve(JSON.parse(out.slice(0, end + 1)));
    });
    server!.once('exit', (code) => reject(new Error(`serve exited with ${code} before listening: ${stderr}`)));
  });
  expect(info.workers).toBe(2);
  url = info.url;
}, 60_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    server.kill('SIGKILL');
    await once(server, 'exit');
  }
  if (root) await rm(root, { recursive: true, force: true });
});

describe('ctxvm serve --workers 2', () => {
  it('answers from both workers on one port', async () => {
    const seen = new Set<number>();
    for (let i = 0; i < 8 && seen.size < 2; i++) seen.add((await call('GET', '/healthz')).json.worker);
    expect([...seen].sort()).toEqual([1, 2]);
  });

  it('never serves a stale read: a write through one worker is seen through the other', async () => {
    for (let i = 0; i < 6; i++) {
      // both workers read (and cache) the task list and a rebuilt context first
      for (let j = 0; j < 2; j++) {
        await titles();
        await call('POST', '/v1/users/alice/context', { query: `send report ${i}` });
      }
      const sent = await call('POST', '/v1/users/alice/messages', { text: `Remind me to send report ${i} tomorrow at 3pm` });
      expect(sent.status, JSON.stringify(sent.json)).toBe(200);
      const created = sent.json.applied.find((a: { kind: string }) => a.kind === 'task');
      expect(created, JSON.stringify(sent.json)).toBeDefined();
      // read back twice: once on each worker
      for (let j = 0; j < 2; j++) {
        expect(await titles()).toContain(`${created.text}:todo`);
        const ctx = await call('POST', '/v1/users/alice/context', { query: `send report ${i}` });
        expect(ctx.json.text).toContain(created.text);
      }
      // a reference to the task just made, resolved on whichever worker gets the next request
      const done = await call('POST', '/v1/users/alice/messages', { text: "I finished it" });
      expect(done.status).toBe(200);
      for (let j = 0; j < 2; j++) expect(await titles()).toContain(`${created.text}:done`);
    }
  }, 120_000);

  it('delivers a reminder scanned by the primary to an SSE stream on a worker', async () => {
    const got = new Promise<string>((resolve, reject) => {
      const req = request(`${url}/v1/users/alice/reminders/stream`, { agent: false, headers: { authorization: `Bearer ${key}` } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
          if (text.includes('event: reminder')) {
            resolve(text);
            req.destroy();
          }
        });
      });
      req.on('error', (e) => (e.message === 'socket hang up' ? undefined : reject(e)));
      req.end();
    });
    await new Promise((r) => setTimeout(r, 200)); // let the stream subscribe
    const sent = await call('POST', '/v1/users/alice/messages', { text: 'Remind me to call the plumber in 5 minutes' });
    expect(sent.status).toBe(200);
    expect(await got).toMatch(/plumber/);
  }, 60_000);

  it('stops on SIGTERM with exit 0; the cold archive holds every stored turn', async () => {
    server!.kill('SIGTERM');
    const [code] = await once(server!, 'exit');
    expect(code, stderr).toBe(0);
    const db = await openWarmDatabase({ db: dbPath });
    try {
      const turns = await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM memory_turns WHERE user_id = 'alice'");
      const archived = await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM memory_archive_open WHERE user_id = 'alice'");
      expect(Number(turns!.n)).toBeGreaterThan(20);
      expect(Number(archived!.n)).toBe(Number(turns!.n));
    } finally {
      await db.close();
    }
  }, 60_000);
});
