/**
 * `ctxvm demo --serve --json --port 0` as a subprocess of the current sources (bundled, so no
 * `npm run build` is needed): the demo's JSON, then one line with the URL, the console URL and
 * an admin key; the API answers with that key over the demo's own state (the session DAG, the
 * memory user); SIGTERM stops it cleanly and removes the temporary folder. And `ctxvm serve`
 * printing the console URL.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/corpus.js';
import { bundleScript } from '../support/bundle-script.js';

let cli: string;
let root: string;

beforeAll(async () => {
  cli = await bundleScript(join(REPO_ROOT, 'src', 'cli', 'main.ts'), 'ctxvm-cli');
  root = await mkdtemp(join(tmpdir(), 'ctxvm-demo-serve-'));
}, 120_000);
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe('ctxvm demo --serve', () => {
  it('serves the demo state with a printed admin key and exits 0 on SIGTERM', async () => {
    // TMPDIR: the demo's temporary folder lands where the test can see it is removed
    const env = { PATH: process.env.PATH ?? '', HOME: root, TMPDIR: root, CTXVM_HOME: join(root, 'must-not-be-used') };
    const child = spawn(process.execPath, [cli, 'demo', '--serve', '--json', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const line = await new Promise<{ url: string; console: string; key: string }>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        stdout += d;
        const found = stdout.split('\n').find((l) => l.startsWith('{"url"'));
        if (found) resolve(JSON.parse(found));
      });
      child.once('exit', (code) => reject(new Error(`demo exited ${code} before serving: ${stderr}\n${stdout.slice(-2000)}`)));
    });
    let exited = false;
    child.once('exit', () => (exited = true));
    try {
      // the demo's own document came first, whole
      const demoDoc = JSON.parse(stdout.slice(0, stdout.indexOf('{"url"')));
      expect(demoDoc.ok).toBe(true);
      expect(line.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(line.console).toBe(`${line.url}/console/#key=${line.key}`);
      expect(line.key).toMatch(/^ctxvm_[0-9a-f]{12}_\S{43}$/);
      const get = async (path: string) => {
        const r = await fetch(line.url + path, { headers: { authorization: `Bearer ${line.key}` } });
        expect(r.status, path).toBe(200);
        return r.json() as Promise<any>;
      };
      expect(await get('/v1/whoami')).toMatchObject({ admin: true, user: null });
      const tree = await get('/v1/sessions/tree');
      const names = (tree.nodes as { name: string }[]).map((n) => n.name).sort();
      expect(names).toEqual(['demo', 'demo-trimmed', 'demo-trimmed-2']);
      expect(tree.edges).toHaveLength(2);
      // the snapshots' tokens were computed before serving
      const demoNode = tree.nodes.find((n: { name: string }) => n.name === 'demo');
      expect(demoNode.tokens).toBe(demoDoc.sessions.analyze.tokens);
      // the tour's 4 messages and their replies, and the question the server answered once itself
      expect((await get('/v1/users')).users).toEqual([expect.objectContaining({ user: 'demo-user', turns: 10, tasks: 2 })]);
      const metrics = await get('/v1/metrics');
      expect(metrics.stages.total.count).toBe(1);
      expect(metrics.extractions).toEqual({ query_tasks: 1 });
      expect(metrics.tokens.context).toBeGreaterThan(0);
      const memory = await get('/v1/users/demo-user/memory');
      expect(memory.tasks.map((t: { status: string }) => t.status).sort()).toEqual(['done', 'todo']);
      expect((await fetch(`${line.url}/v1/whoami`)).status).toBe(401);
      // the key is printed once, in that line, and never logged
      expect(stderr).not.toContain(line.key);
      expect(stdout.split(line.key).length - 1).toBe(2); // "console" and "key" of the one line
    } finally {
      if (!exited) child.kill('SIGTERM');
    }
    const [code] = child.exitCode !== null ? [child.exitCode] : await once(child, 'exit');
    expect(code, stderr).toBe(0);
    expect(stderr).toMatch(/SIGTERM/);
    // the demo's temporary folder is gone
    const { readdir } = await import('node:fs/promises');
    expect((await readdir(root)).filter((n) => n.startsWith('ctxvm-demo-'))).toEqual([]);
    expect(existsSync(join(root, 'must-not-be-used'))).toBe(false);
  }, 120_000);

  it('--port without --serve is a usage error', async () => {
    const child = spawn(process.execPath, [cli, 'demo', '--port', '0'], { env: { PATH: process.env.PATH ?? '', HOME: root, TMPDIR: root }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
    expect(stderr).toMatch(/--port only applies with --serve/);
  }, 60_000);
});

describe('ctxvm serve', () => {
  it('prints the console URL next to the listening line, and in --json', async () => {
    const env = { PATH: process.env.PATH ?? '', HOME: root, CTXVM_HOME: join(root, 'serve-home'), CLAUDE_CONFIG_DIR: join(root, 'claude'), CODEX_HOME: join(root, 'codex') };
    const child = spawn(process.execPath, [cli, 'serve', '--port', '0', '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const doc = await new Promise<{ url: string; console: string }>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        stdout += d;
        const end = stdout.indexOf('}\n');
        if (end !== -1) resolve(JSON.parse(stdout.slice(0, end + 1)));
      });
      child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    });
    try {
      expect(doc.console).toBe(`${doc.url}/console/`);
      const top = await fetch(doc.url + '/', { redirect: 'manual' });
      expect(top.headers.get('location')).toBe('/console/');
      await new Promise((r) => setTimeout(r, 100));
      expect(stderr).toContain(`console: ${doc.url}/console/`);
    } finally {
      child.kill('SIGTERM');
    }
    const [code] = await once(child, 'exit');
    expect(code, stderr).toBe(0);
  }, 60_000);
});
