/**
 * `ctxvm trim` of one session twice at once gets two snapshots with their branches (a generated
 * name taken meanwhile moves to the next suffix), and a trim that fails leaves no snapshot and
 * names the session file, not the scratch copy it was branched from.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Transcript, text, writeTranscript } from '../support/claude-transcript.js';
import { runCliInProcess } from '../support/run-cli.js';

let dir: string;
let env: Record<string, string>;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-trim-concurrent-'));
  env = { CTXVM_HOME: join(dir, 'home'), HOME: join(dir, 'user'), CLAUDE_CONFIG_DIR: join(dir, 'user', '.claude'), CODEX_HOME: join(dir, 'user', '.codex') };
  await mkdir(env.HOME!, { recursive: true });
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe('ctxvm trim', () => {
  it('twice at once: both succeed, with distinct snapshots and branches', async () => {
    const t = new Transcript();
    for (let i = 0; i < 4; i++) {
      t.user(`question ${i}`);
      t.assistant(`msg_${i}`, text(`answer ${i}`));
    }
    const session = await writeTranscript(dir, t, 'twice.jsonl');
    const runs = await Promise.all([0, 1, 2].map(() => runCliInProcess(['trim', '-s', session, '--json'], env, dir)));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const names = runs.map((r) => r.json<{ snapshot: { name: string } }>().snapshot.name);
    expect(new Set(names).size).toBe(3);
    const list = await runCliInProcess(['list', '--json'], env, dir);
    const listed = list.json<{ snapshots: { name: string; branches: number }[] } | { name: string; branches: number }[]>();
    const rows = Array.isArray(listed) ? listed : listed.snapshots;
    expect(rows.map((s) => s.name).sort()).toEqual([...names].sort());
    for (const s of rows) expect(s.branches).toBe(1);
  });

  it('that fails leaves no snapshot and names the session file', async () => {
    const bad = join(dir, 'bad.jsonl');
    const t = new Transcript();
    t.user('hello');
    t.assistant('msg_1', text('hi'));
    await writeFile(bad, t.text() + '{"broken": \n' + t.text());
    const before = (await runCliInProcess(['list', '--json'], env, dir)).stdout;
    const r = await runCliInProcess(['trim', '-s', bad], env, dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${bad} (as captured in snapshot `);
    expect(r.stderr).not.toContain(join(env.CTXVM_HOME!, 'tmp'));
    expect((await runCliInProcess(['list', '--json'], env, dir)).stdout).toBe(before);
  });
});
