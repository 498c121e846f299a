/**
 * The server commands as an operator uses them: `ctxvm keys create|list|revoke` (in-process,
 * real SQLite in a temp CTXVM_HOME) and `ctxvm serve` as a subprocess of the built CLI
 * (`dist/cli/main.js`; run `npm run build` first): it listens, answers with the keys just
 * created, and exits 0 on SIGTERM.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/corpus.js';
import { runCliInProcess } from '../support/run-cli.js';
import { startServeProcess } from '../support/serve-process.js';

const MAIN = join(REPO_ROOT, 'dist', 'cli', 'main.js');
let root: string;
let env: Record<string, string>;
const ctxvm = (...args: string[]) => runCliInProcess(args, env, root);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ctxvm-http-cli-'));
  env = { CTXVM_HOME: join(root, 'ctxvm'), CLAUDE_CONFIG_DIR: join(root, 'claude'), CODEX_HOME: join(root, 'codex') };
});
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe('ctxvm keys', () => {
  it('creates, lists and revokes keys; the key is printed once and never listed', async () => {
    const created = await ctxvm('keys', 'create', '--user', 'alice', '--label', 'laptop', '--json');
    expect(created.code, created.stderr).toBe(0);
    const k = created.json<{ id: string; key: string; user: string; admin: boolean }>();
    expect(k).toMatchObject({ user: 'alice', admin: false, id: expect.stringMatching(/^[0-9a-f]{12}$/), key: expect.stringMatching(/^ctxvm_/) });
    const plain = await ctxvm('keys', 'create', '--admin');
    expect(plain.code).toBe(0);
    expect(plain.stdout.trim()).toMatch(/^ctxvm_[0-9a-f]{12}_\S{43}$/);
    expect(plain.stderr).toMatch(/shown only now/);

    const listed = await ctxvm('keys', 'list', '--json');
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(k.key);
    const list = listed.json<{ id: string; user: string | null; admin: boolean; revokedAt: string | null }[]>();
    expect(list).toHaveLength(2);
    expect(list.find((x) => x.id === k.id)).toMatchObject({ user: 'alice', admin: false, revokedAt: null });

    const revoked = await ctxvm('keys', 'revoke', k.id, '--json');
    expect(revoked.code).toBe(0);
    expect(revoked.json().revokedAt).toEqual(expect.any(String));
  });

  it('exit 2 on bad usage and unknown ids', async () => {
    expect((await ctxvm('keys', 'create')).code).toBe(2);
    expect((await ctxvm('keys', 'create', '--user', 'a', '--admin')).code).toBe(2);
    const unknown = await ctxvm('keys', 'revoke', 'ffffffffffff');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no API key/);
  });
});

describe('ctxvm serve', () => {
  it('listens, serves with the keys, and exits 0 on SIGTERM', async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} not found: run \`npm run build\` before the CLI tests`);
    const key = (await ctxvm('keys', 'create', '--user', 'bob', '--json')).json<{ key: string }>().key;
    const { url, child, stderr: stderrOf } = await startServeProcess(MAIN, ['--port', '0', '--json'], { PATH: process.env.PATH ?? '', HOME: root, ...env });
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      const tasks = await fetch(`${url}/v1/users/bob/tasks`, { headers: { authorization: `Bearer ${key}` } });
      expect(tasks.status).toBe(200);
      expect(await tasks.json()).toEqual({ tasks: [], timeZone: expect.any(String) });
      expect((await fetch(`${url}/v1/users/alice/tasks`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(403);
    } finally {
      child.kill('SIGTERM');
    }
    const [code] = await once(child, 'exit');
    const stderr = stderrOf();
    expect(code, stderr).toBe(0);
    // one JSON line per request on stderr, without the key
    const lines = stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.msg === 'request')).toHaveLength(3);
    expect(stderr).not.toContain(key);
  }, 60_000);
});
