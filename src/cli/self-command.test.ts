import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commandKind, commandRunnable, findOnPath, selfCommand, shellWord, shellWords } from './self-command.js';

const root = mkdtempSync(join(tmpdir(), 'ctxvm-self-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** An installed CLI script and a bin folder whose `ctxvm` links to it, as `npm install -g` makes. */
function install(name: string): { script: string; bin: string } {
  const pkg = join(root, name, 'lib', 'node_modules', 'ctxvm', 'dist', 'cli');
  mkdirSync(pkg, { recursive: true });
  const script = join(pkg, 'main.js');
  writeFileSync(script, '#!/usr/bin/env node\n');
  chmodSync(script, 0o755);
  const bin = join(root, name, 'bin');
  mkdirSync(bin, { recursive: true });
  symlinkSync(script, join(bin, 'ctxvm'));
  return { script, bin };
}

describe('selfCommand', () => {
  const global = install('global');
  const other = install('other');
  const npx = join(root, 'cache', '_npx', '1f2e', 'node_modules', '.bin');
  mkdirSync(npx, { recursive: true });
  symlinkSync(global.script, join(npx, 'ctxvm'));

  it('is plain `ctxvm` when the ctxvm on PATH is this installation', () => {
    expect(selfCommand({ PATH: global.bin }, global.script, '/usr/bin/node')).toEqual({ command: 'ctxvm', kind: 'path', script: global.script });
  });

  it('is node and the script by absolute path when PATH finds another ctxvm, or none', () => {
    expect(selfCommand({ PATH: other.bin }, global.script, '/usr/bin/node')).toEqual({ command: `/usr/bin/node ${global.script}`, kind: 'absolute', script: global.script });
    expect(selfCommand({ PATH: '' }, global.script, '/usr/bin/node').kind).toBe('absolute');
  });

  it("does not count npx's temporary bin folder: Claude Code will not have it on PATH", () => {
    expect(findOnPath('ctxvm', { PATH: npx })).toBeUndefined();
    expect(selfCommand({ PATH: npx }, global.script, '/usr/bin/node').kind).toBe('absolute');
    expect(commandRunnable('ctxvm hooks run --event SessionEnd', { PATH: npx })).toBe(false);
    expect(commandRunnable('ctxvm hooks run --event SessionEnd', { PATH: `${npx}:${global.bin}` })).toBe(true);
  });

  it('quotes paths with spaces, and reads them back', () => {
    const spaced = "/opt/my node/bin/node";
    expect(shellWord(spaced)).toBe("'/opt/my node/bin/node'");
    expect(shellWord("it's")).toBe(`'it'\\''s'`);
    expect(shellWords(`${shellWord(spaced)} ${shellWord("/a b/main.js")} hooks run`)).toEqual([spaced, '/a b/main.js', 'hooks', 'run']);
    expect(shellWords(`"/x y/node" a\\ b`)).toEqual(['/x y/node', 'a b']);
  });

  it('checks both node and the script of an absolute command', () => {
    expect(commandRunnable(`${process.execPath} ${global.script} hooks run`, {})).toBe(true);
    expect(commandRunnable(`${process.execPath} ${join(root, 'gone', 'main.js')} hooks run`, {})).toBe(false);
    expect(commandKind(`${process.execPath} ${global.script}`)).toBe('absolute');
    expect(commandKind('ctxvm')).toBe('path');
  });
});
