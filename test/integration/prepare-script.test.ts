/**
 * scripts/prepare.mjs, which `npm install` and `npx ctxvm` run: it builds when anything dist/ is
 * built from changed since the last build, and skips otherwise (`npx ctxvm` in a clone runs
 * `prepare` again, and rebuilding there made the first command take seconds). Run in a temporary
 * project whose `build` script only counts its runs.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/corpus.js';

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ctxvm-prepare-'));
  await mkdir(join(root, 'scripts'));
  await mkdir(join(root, 'src'));
  await mkdir(join(root, 'dist'));
  await copyFile(join(REPO_ROOT, 'scripts', 'prepare.mjs'), join(root, 'scripts', 'prepare.mjs'));
  await writeFile(join(root, 'src', 'a.ts'), 'export const a = 1;\n');
  const count = `node -e "const f=require('fs');const p='dist/builds';f.writeFileSync(p,String(Number(f.existsSync(p)?f.readFileSync(p,'utf8'):0)+1))"`;
  await writeFile(join(root, 'package.json'), JSON.stringify({ name: 'prepare-probe', version: '0.0.0', scripts: { build: count } }));
});
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

const prepare = (env: Record<string, string> = {}) =>
  execFileSync(process.execPath, [join(root, 'scripts', 'prepare.mjs')], { cwd: root, env: { ...process.env, ...env }, stdio: 'pipe' });
const builds = async () => Number(await readFile(join(root, 'dist', 'builds'), 'utf8'));

describe('scripts/prepare.mjs', () => {
  it('builds once, skips while nothing changed, and builds again after a source changes', async () => {
    prepare();
    expect(await builds()).toBe(1);
    prepare();
    expect(await builds()).toBe(1);
    // a source edited after the build (mtime in the future of the stamp)
    const later = new Date(Date.now() + 60_000);
    await utimes(join(root, 'src', 'a.ts'), later, later);
    prepare();
    expect(await builds()).toBe(2);
    prepare();
    expect(await builds()).toBe(2);
    prepare({ CTXVM_FORCE_BUILD: '1' });
    expect(await builds()).toBe(3);
  }, 60_000);
});
