import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ParseError } from '../errors.js';
import { firstJsonErrorOffset } from './json-position.js';
import { editSettingsFile, hookCommand, hooksStatus, installHooks, isCtxvmHookCommand, parseSettings, readSettingsFile, uninstallHooks, type Settings } from './settings.js';

/** A settings file as people have them: other keys, other hooks on the same events and elsewhere. */
const FOREIGN: Settings = {
  model: 'opus',
  permissions: { allow: ['Bash(npm test:*)'] },
  hooks: {
    PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'audit.sh' }] }],
    SessionEnd: [{ hooks: [{ type: 'command', command: 'notify-send bye', timeout: 5 }] }],
  },
  statusLine: { type: 'command', command: 'status.sh' },
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-settings-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const backups = async () => (await readdir(dir)).filter((n) => n.includes('.ctxvm-backup-')).sort();

describe('install / uninstall / status (pure)', () => {
  it('adds one entry per event next to foreign hooks, and is idempotent', () => {
    const a = installHooks(FOREIGN, 'ctxvm');
    expect(a.changed).toBe(true);
    expect(a.events).toEqual(['SessionEnd', 'PreCompact']);
    expect(a.settings.hooks!.SessionEnd).toEqual([
      { hooks: [{ type: 'command', command: 'notify-send bye', timeout: 5 }] },
      { hooks: [{ type: 'command', command: 'ctxvm hooks run --event SessionEnd' }] },
    ]);
    expect(a.settings.hooks!.PreCompact).toEqual([{ hooks: [{ type: 'command', command: 'ctxvm hooks run --event PreCompact' }] }]);
    expect(a.settings.hooks!.PreToolUse).toEqual(FOREIGN.hooks!.PreToolUse);
    const b = installHooks(a.settings, 'ctxvm');
    expect(b.changed).toBe(false);
    expect(b.settings).toBe(a.settings);
    expect(FOREIGN.hooks!.PreCompact).toBeUndefined(); // the input is not mutated
  });

  it('updates an entry installed with another command in place and drops duplicates', () => {
    const s: Settings = {
      hooks: {
        SessionEnd: [
          { hooks: [{ type: 'command', command: 'node /old/main.js hooks run --event SessionEnd' }, { type: 'command', command: 'other' }] },
          { hooks: [{ type: 'command', command: 'ctxvm hooks run --event SessionEnd' }] },
        ],
      },
    };
    const r = installHooks(s, 'ctxvm', ['SessionEnd']);
    expect(r.settings.hooks!.SessionEnd).toEqual([{ hooks: [{ type: 'command', command: 'ctxvm hooks run --event SessionEnd' }, { type: 'command', command: 'other' }] }]);
  });

  it('uninstall removes only ctxvm entries, and what they alone filled', () => {
    const installed = installHooks(FOREIGN, 'ctxvm').settings;
    const r = uninstallHooks(installed);
    expect(r.changed).toBe(true);
    expect(r.settings).toEqual(FOREIGN);
    expect(uninstallHooks(r.settings).changed).toBe(false);
    const only = uninstallHooks(installHooks({}, 'ctxvm').settings);
    expect(only.settings).toEqual({});
  });

  it('reports what is installed', () => {
    expect(hooksStatus(FOREIGN)).toEqual({ installed: { SessionEnd: null, PreCompact: null }, foreignHooks: { SessionEnd: 1, PreCompact: 0 }, disableAllHooks: false });
    const s = installHooks({ ...FOREIGN, disableAllHooks: true }, 'ctxvm').settings;
    expect(hooksStatus(s).installed).toEqual({ SessionEnd: hookCommand('ctxvm', 'SessionEnd'), PreCompact: hookCommand('ctxvm', 'PreCompact') });
    expect(hooksStatus(s).disableAllHooks).toBe(true);
    expect(isCtxvmHookCommand('node x.js hooks run --event PreCompact')).toBe(true);
    expect(isCtxvmHookCommand('echo hooks run --event Stop')).toBe(false);
  });
});

describe('parsing', () => {
  it('names the file, line and column of a JSON error', () => {
    const text = '{\n  "model": "opus",\n  "hooks": {,}\n}\n';
    try {
      parseSettings(text, '/x/settings.json');
      expect.unreachable();
    } catch (e) {
      expect(ParseError.is(e)).toBe(true);
      const p = e as ParseError;
      expect(p.message).toMatch(/^\/x\/settings\.json:3: not valid JSON at column 13: /);
      expect(p.line).toBe(3);
      expect(p.byteOffset).toBe(text.indexOf('  "hooks"'));
    }
    expect(() => parseSettings('// comment\n{}', 'f')).toThrow(/^f:1: not valid JSON at column 1/);
    expect(() => parseSettings('{"a": 1', 'f')).toThrow(/^f:1: not valid JSON at column 8/);
    expect(() => parseSettings('[1]', 'f')).toThrow(/top level/);
    expect(() => parseSettings('{"hooks": {"SessionEnd": {"hooks": []}}}', 'f')).toThrow(/"hooks.SessionEnd" should be a list/);
    expect(() => parseSettings('{"hooks": {"PreCompact": [{"matcher": "auto"}]}}', 'f')).toThrow(/"hooks.PreCompact\[0\].hooks" should be a list/);
    expect(parseSettings('  ', 'f')).toEqual({});
  });

  it('finds the first error offset like a JSON parser', () => {
    for (const good of ['{}', '[]', ' {"a":[1,-2.5e3,true,false,null,"x\\u00e9\\n"]} ', '"s"', '0']) expect(firstJsonErrorOffset(good)).toBe(-1);
    expect(firstJsonErrorOffset('{"a":1,}')).toBe(7);
    expect(firstJsonErrorOffset('{"a" 1}')).toBe(5);
    expect(firstJsonErrorOffset('{} x')).toBe(3);
    expect(firstJsonErrorOffset('{"a":"b\n"}')).toBe(7);
    expect(firstJsonErrorOffset('{"a":01}')).toBe(6);
    expect(firstJsonErrorOffset('')).toBe(0);
  });
});

describe('editing the file', () => {
  const install = (path: string, nowMs = Date.UTC(2026, 0, 2, 3, 4, 5, 6)) => editSettingsFile(path, (s) => installHooks(s, 'ctxvm'), { nowMs });

  it('installs with a backup, keeps indentation, mode and foreign settings; a second install changes nothing', async () => {
    const path = join(dir, 'settings.json');
    const original = JSON.stringify(FOREIGN, null, 4) + '\n';
    await writeFile(path, original, { mode: 0o640 });
    const r = await install(path);
    expect(r.changed).toBe(true);
    expect(r.backup).toBe(`${path}.ctxvm-backup-20260102T030405006Z`);
    expect(await readFile(r.backup!, 'utf8')).toBe(original);
    const text = await readFile(path, 'utf8');
    expect(text).toMatch(/^\{\n {4}"model": "opus",/);
    expect(text.endsWith('}\n')).toBe(true);
    expect((await stat(path)).mode & 0o777).toBe(0o640);
    const parsed = JSON.parse(text) as Settings;
    expect({ ...parsed, hooks: { ...parsed.hooks, SessionEnd: parsed.hooks!.SessionEnd!.slice(0, 1), PreCompact: undefined } }).toEqual({ ...FOREIGN, hooks: { ...FOREIGN.hooks, PreCompact: undefined } });

    const again = await install(path, Date.UTC(2026, 0, 2, 3, 5));
    expect(again.changed).toBe(false);
    expect(again.backup).toBeUndefined();
    expect(await readFile(path, 'utf8')).toBe(text);
    expect(await backups()).toHaveLength(1);
  });

  it('creates a missing file (no backup) and uninstall restores the original content', async () => {
    const path = join(dir, 'new', 'settings.json');
    const r = await install(path);
    expect(r.backup).toBeUndefined();
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ hooks: { SessionEnd: [{ hooks: [{ type: 'command', command: 'ctxvm hooks run --event SessionEnd' }] }], PreCompact: [{ hooks: [{ type: 'command', command: 'ctxvm hooks run --event PreCompact' }] }] } });
    expect((await stat(path)).mode & 0o777).toBe(0o600);

    const p2 = join(dir, 'settings.json');
    const original = JSON.stringify(FOREIGN, null, 2) + '\n';
    await writeFile(p2, original);
    await install(p2);
    const u = await editSettingsFile(p2, (s) => uninstallHooks(s), { nowMs: Date.UTC(2026, 0, 2, 3, 6) });
    expect(u.changed).toBe(true);
    expect(await readFile(p2, 'utf8')).toBe(original);
    expect((await editSettingsFile(p2, (s) => uninstallHooks(s))).changed).toBe(false);
  });

  it('aborts on a file it cannot parse, touching nothing', async () => {
    const path = join(dir, 'settings.json');
    const bad = '{\n  "model": "opus",\n  "hooks": {\n    "SessionEnd": [ { "hooks": [] }, ]\n  }\n}\n';
    await writeFile(path, bad);
    await expect(install(path)).rejects.toMatchObject({ code: 'E_PARSE', line: 4, message: expect.stringMatching(/settings\.json:4: not valid JSON at column 38: Unexpected token '\]'$/) as unknown });
    await expect(editSettingsFile(path, (s) => uninstallHooks(s))).rejects.toMatchObject({ code: 'E_PARSE' });
    expect(await readFile(path, 'utf8')).toBe(bad);
    expect(await backups()).toEqual([]);
    expect((await readdir(dir)).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  it('edits the target of a symlinked settings file and keeps a BOM', async () => {
    const real = join(dir, 'dotfiles-settings.json');
    await writeFile(real, '\ufeff{"model": "opus"}');
    const link = join(dir, 'settings.json');
    await symlink(real, link);
    const r = await install(link);
    expect(r.backup!.startsWith(real)).toBe(true);
    const text = await readFile(real, 'utf8');
    expect(text.startsWith('\ufeff{')).toBe(true);
    expect(JSON.parse(text.slice(1)).model).toBe('opus');
    expect((await readSettingsFile(link)).realPath).toBe(real);
  });

  it('never loses a change made while it edits: retries, then gives up with E_CONFLICT', async () => {
    const path = join(dir, 'settings.json');
    await writeFile(path, '{"model": "opus"}\n');
    let n = 0;
    // Claude Code saves a setting between our read and our write, once
    const r = await editSettingsFile(path, (s) => {
      if (n++ === 0) writeFileSync(path, '{"model": "sonnet"}\n');
      return installHooks(s, 'ctxvm');
    });
    expect(r.changed).toBe(true);
    const now = JSON.parse(await readFile(path, 'utf8')) as Settings;
    expect(now.model).toBe('sonnet');
    expect(hooksStatus(now).installed.SessionEnd).toBe('ctxvm hooks run --event SessionEnd');

    writeFileSync(path, '{"model": "opus"}\n');
    let k = 0;
    await expect(
      editSettingsFile(path, (s) => {
        // a writer that never stops
        writeFileSync(path, `{"model": "m${k++}"}\n`);
        return installHooks(s, 'ctxvm');
      }),
    ).rejects.toMatchObject({ code: 'E_CONFLICT' });
  });
});

