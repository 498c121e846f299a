/**
 * Install anywhere: `npm pack` the project, `npm install -g` the tarball into a temporary prefix
 * (the native module built, as the README says), and run `ctxvm` from another folder: help, the
 * demo, the console files, and `hooks install`, which must write a command Claude Code can find
 * (`ctxvm` on PATH, or node and the script by absolute path when PATH has no ctxvm).
 * Building better-sqlite3 from source takes minutes, so this runs in CI (CI=true) or with
 * CTXVM_PACK_TEST=1, and skips with a printed reason elsewhere. Needs `npm run build` first.
 */
import { execFile } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/corpus.js';

const run = promisify(execFile);
const enabled = process.env.CI === 'true' || process.env.CTXVM_PACK_TEST === '1';
const built = existsSync(join(REPO_ROOT, 'dist', 'cli', 'main.js')) && existsSync(join(REPO_ROOT, 'dist', 'console', 'index.html'));
const skip = !enabled ? 'set CTXVM_PACK_TEST=1 (or CI=true) to pack and install the project (builds better-sqlite3: minutes)' : !built ? 'dist/ is not built: run `npm run build`' : undefined;
if (skip) console.log(`[skip] package install test: ${skip}`);

let root: string;
let prefix: string;
let elsewhere: string;
/** PATH without any ctxvm of the machine, and without npm's own bin folders. */
const basePath = [dirname(process.execPath), '/usr/bin', '/bin'].join(delimiter);

function env(path: string): NodeJS.ProcessEnv {
  return { HOME: root, PATH: path, CTXVM_HOME: join(root, 'ctxvm-home'), CLAUDE_CONFIG_DIR: join(root, 'claude'), CODEX_HOME: join(root, 'codex'), NO_COLOR: '1' };
}

describe.skipIf(skip !== undefined)('the packed tarball installed with npm install -g', () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ctxvm-pack-'));
    prefix = join(root, 'prefix');
    elsewhere = join(root, 'some', 'other', 'folder');
    await mkdir(elsewhere, { recursive: true });
    // dist/ is already built (npm install runs the build); packing again would rebuild it
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', root], { cwd: REPO_ROOT, maxBuffer: 1 << 24 });
    const tarball = (await readdir(root)).find((n) => /^ctxvm-.*\.tgz$/.test(n));
    expect(tarball).toBeDefined();
    await run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--allow-scripts=better-sqlite3', join(root, tarball!)], { cwd: root, maxBuffer: 1 << 24, env: { ...process.env, npm_config_cache: process.env.npm_config_cache ?? join(process.env.HOME ?? root, '.npm') } });
  }, 1_200_000);
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  const bin = () => join(prefix, 'bin', 'ctxvm');
  const installed = () => join(prefix, 'lib', 'node_modules', 'ctxvm');

  it('ships the built console and the CLI, and prints help from any folder', async () => {
    expect(existsSync(join(installed(), 'dist', 'console', 'index.html'))).toBe(true);
    const help = await run('ctxvm', ['--help'], { cwd: elsewhere, env: env(`${join(prefix, 'bin')}${delimiter}${basePath}`) });
    expect(help.stdout).toContain('Usage: ctxvm');
    for (const c of ['demo', 'session', 'snapshot', 'branch', 'tree', 'hooks', 'mcp']) expect(help.stdout).toMatch(new RegExp(`^  ${c}\\b`, 'm'));
  });

  it('runs the demo from another folder, with the native SQLite module built', async () => {
    const r = await run('ctxvm', ['demo', '--json'], { cwd: elsewhere, env: env(`${join(prefix, 'bin')}${delimiter}${basePath}`), maxBuffer: 1 << 24 });
    const demo = JSON.parse(r.stdout) as { ok: boolean; problems: string[] };
    expect(demo.problems).toEqual([]);
    expect(demo.ok).toBe(true);
  }, 120_000);

  it('hooks install writes `ctxvm` when PATH finds this installation, else node and the script by absolute path', async () => {
    const onPath = await run('ctxvm', ['hooks', 'install', '--json'], { cwd: elsewhere, env: env(`${join(prefix, 'bin')}${delimiter}${basePath}`) });
    expect(JSON.parse(onPath.stdout)).toMatchObject({ command: 'ctxvm', commandKind: 'path', commandFound: true });

    // started by absolute path with no ctxvm on PATH, as `npx` from a clone would leave it
    await rm(join(root, 'claude'), { recursive: true, force: true });
    const script = realpathSync(join(installed(), 'dist', 'cli', 'main.js'));
    const absolute = await run(process.execPath, [bin(), 'hooks', 'install', '--json'], { cwd: elsewhere, env: env(basePath) });
    expect(JSON.parse(absolute.stdout)).toMatchObject({ command: `${process.execPath} ${script}`, commandKind: 'absolute', commandFound: true });
    const settings = JSON.parse(await readFile(join(root, 'claude', 'settings.json'), 'utf8')) as { hooks: Record<string, { hooks: { command: string }[] }[]> };
    const command = settings.hooks.SessionEnd![0]!.hooks[0]!.command;
    expect(command).toBe(`${process.execPath} ${script} hooks run --event SessionEnd`);
    // and that command runs, from nowhere in particular, with no ctxvm on PATH
    const status = await run('/bin/sh', ['-c', `${command.replace('hooks run --event SessionEnd', 'hooks status --json')}`], { cwd: '/', env: env(basePath) });
    expect(JSON.parse(status.stdout)).toMatchObject({ commandFound: true, commandKinds: { SessionEnd: 'absolute', PreCompact: 'absolute' } });
  }, 60_000);
});
