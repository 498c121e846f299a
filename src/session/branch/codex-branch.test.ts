import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { CORPUS_DIR, printSkipReason } from '../../../test/support/corpus.js';
import { scanCodexSession } from '../codex/scan.js';
import { reconstructCodexContext } from '../codex/context.js';
import { validateSession } from '../session.js';
import { restoreSession } from '../trim/restore.js';
import { branchSession } from './branch.js';
import { listCodexTurns } from './codex-rewrite.js';
import { codexRolloutName, codexSessionDir } from './paths.js';
import { createBranchTestEnv, type BranchTestEnv } from './testing.js';

const CODEX_CORPUS = join(CORPUS_DIR, 'sessions', 'codex');
function rollouts(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) rollouts(p, out);
    else if (name.startsWith('rollout-') && name.endsWith('.jsonl')) out.push(p);
  }
  return out;
}
const files = rollouts(CODEX_CORPUS);
const skip = files.length === 0 ? `Codex corpus not found at ${CODEX_CORPUS}: Codex branch tests skipped` : undefined;
printSkipReason(skip);

const NOW = new Date(2026, 0, 2, 3, 4, 5); // local time, as Codex names its files
const NEW_ID = '019b0000-0000-7000-8000-000000000001';

let env: BranchTestEnv;
beforeEach(async () => {
  env = await createBranchTestEnv();
});
afterEach(async () => {
  await env.cleanup();
});
const base = () => ({ store: env.store, claudeConfigDir: env.claudeConfigDir, codexHome: env.codexHome, scratchDir: env.scratchDir, measure: false, now: NOW });

const lines = async (p: string) => (await readFile(p, 'utf8')).split('\n').filter(Boolean);
async function items(file: string) {
  return (await reconstructCodexContext(await scanCodexSession(file))).items.map((i) => i.item);
}

describe.skipIf(!!skip)('branchSession on every corpus rollout (Codex)', () => {
  it.each(files.map((f) => [basename(f), f]))('%s: new id in session_meta and file name, everything else byte for byte', async (_n, file) => {
    const r = await branchSession({ ...base(), source: file, trim: false, newId: NEW_ID });
    expect(r.path).toBe(join(codexSessionDir(env.codexHome, NOW), codexRolloutName(NEW_ID, NOW)));
    expect(r.path).toContain(join('sessions', '2026', '01', '02', 'rollout-2026-01-02T03-04-05-'));
    expect(r.resume).toBe(`codex resume ${NEW_ID}`);
    const src = await lines(file);
    const out = await lines(r.path);
    expect(out).toHaveLength(src.length);
    expect(JSON.parse(out[0]!).payload.id).toBe(NEW_ID);
    expect({ ...JSON.parse(out[0]!), payload: { ...JSON.parse(out[0]!).payload, id: 'x' } }).toEqual({ ...JSON.parse(src[0]!), payload: { ...JSON.parse(src[0]!).payload, id: 'x' } });
    expect(out.slice(1)).toEqual(src.slice(1));
    expect((await validateSession(r.path)).valid).toBe(true);
    expect(await items(r.path)).toEqual(await items(file));
    // nothing but the branch is visible in the day folder
    expect((await readdir(join(env.codexHome, 'sessions', '2026', '01', '02'))).filter((n) => !n.startsWith('.'))).toEqual([basename(r.path)]);
  });

  it.each(files.map((f) => [basename(f), f]))('%s: trimmed branch validates and restores to the pre-trim branch', async (_n, file) => {
    const plain = await branchSession({ ...base(), source: file, trim: false, newId: NEW_ID, targetDir: join(env.dir, 'plain') });
    const r = await branchSession({ ...base(), source: file, newId: NEW_ID });
    expect((await validateSession(r.path)).valid).toBe(true);
    const back = join(env.dir, 'back.jsonl');
    // a trim with nothing to do leaves the branch as it is: restore only copies it when asked
    const untouched = !(await readFile(r.path, 'utf8')).includes('"ctxvm":{');
    await restoreSession({ input: r.path, output: back, store: env.store, allowUntrimmed: untouched });
    expect(await readFile(back)).toEqual(await readFile(plain.path));
  });

  it.each(files.map((f) => [basename(f), f]))('%s: cut at every turn', async (_n, file) => {
    const turns = listCodexTurns(await scanCodexSession(file)).length;
    for (let k = 1; k <= turns; k++) {
      const trim = k % 2 === 1;
      const r = await branchSession({ ...base(), source: file, at: k, trim, targetDir: join(env.dir, `t${k}`) });
      expect((await validateSession(r.path)).valid, `turn ${k}`).toBe(true);
      // a trim pages out the items a compaction replaced, user turns too: count on the cut before it
      let cut = r.path;
      if (trim && (await readFile(r.path, 'utf8')).includes('"ctxvm":{')) {
        cut = join(env.dir, `t${k}-untrimmed.jsonl`);
        await restoreSession({ input: r.path, output: cut, store: env.store });
      }
      expect(listCodexTurns(await scanCodexSession(cut)), `turn ${k}`).toHaveLength(k);
    }
  });
});

describe.skipIf(!!skip)('Codex refusals', () => {
  it('has no uuids to cut at, and turns are counted', async () => {
    const file = files.find((f) => basename(f).includes('14-44-44'))!;
    await expect(branchSession({ ...base(), source: file, at: '019b2241-a0a9' })).rejects.toMatchObject({ code: 'E_USAGE', message: /no message uuids/ });
    await expect(branchSession({ ...base(), source: file, at: 9 })).rejects.toMatchObject({ code: 'E_USAGE', message: /2 user turn/ });
    await expect(branchSession({ ...base(), source: file, agent: 'claude' })).rejects.toMatchObject({ code: 'E_USAGE' });
  });

  it('moves cwd in session_meta and turn_context with --cwd', async () => {
    const file = files.find((f) => basename(f).includes('14-44-44'))!;
    const r = await branchSession({ ...base(), source: file, trim: false, cwd: '/srv/elsewhere' });
    const parsed = (await lines(r.path)).map((l) => JSON.parse(l) as { type: string; payload: { cwd?: string } });
    expect(parsed.filter((l) => l.type === 'session_meta' || l.type === 'turn_context').every((l) => l.payload.cwd === '/srv/elsewhere')).toBe(true);
    expect(r.cwd).toBe('/srv/elsewhere');
  });
});
