import { describe, it, expect } from 'vitest';
import { loadConfig, redactUrl } from './config.js';
import { CtxvmError } from '../errors.js';

const base = { homeDir: '/home/ada', cwd: '/work/proj' };

describe('loadConfig', () => {
  it('uses defaults under the home directory', () => {
    const c = loadConfig({}, base);
    expect(c).toEqual({
      home: '/home/ada/.ctxvm',
      objectsDir: '/home/ada/.ctxvm/objects',
      db: '/home/ada/.ctxvm/ctxvm.db',
      redis: undefined,
      claudeConfigDir: '/home/ada/.claude',
      codexHome: '/home/ada/.codex',
    });
  });

  it('reads every variable, expanding ~ and relative paths', () => {
    const c = loadConfig(
      { CTXVM_HOME: '~/data/ctx', CTXVM_DB: 'db/mem.sqlite', CTXVM_REDIS: 'redis://127.0.0.1:6379', CLAUDE_CONFIG_DIR: '/tmp/claude', CODEX_HOME: 'codex' },
      base,
    );
    expect(c.home).toBe('/home/ada/data/ctx');
    expect(c.objectsDir).toBe('/home/ada/data/ctx/objects');
    expect(c.db).toBe('/work/proj/db/mem.sqlite');
    expect(c.redis).toBe('redis://127.0.0.1:6379');
    expect(c.claudeConfigDir).toBe('/tmp/claude');
    expect(c.codexHome).toBe('/work/proj/codex');
  });

  it('keeps postgres URLs as they are and treats blank values as unset', () => {
    const c = loadConfig({ CTXVM_DB: 'postgres://u:p@127.0.0.1/test', CTXVM_REDIS: '  ' }, base);
    expect(c.db).toBe('postgres://u:p@127.0.0.1/test');
    expect(c.redis).toBeUndefined();
  });

  it('rejects unsupported URLs with a usage error that hides the password', () => {
    let caught: unknown;
    try {
      loadConfig({ CTXVM_DB: 'mysql://root:secret@host/db' }, base);
    } catch (e) {
      caught = e;
    }
    expect(CtxvmError.is(caught) && caught.code).toBe('E_USAGE');
    expect(String((caught as Error).message)).not.toContain('secret');
    expect(() => loadConfig({ CTXVM_REDIS: 'http://x' }, base)).toThrow(/redis:\/\//);
  });
});

describe('redactUrl', () => {
  it('hides passwords', () => {
    expect(redactUrl('postgres://bob:hunter2@db:5432/x')).toBe('postgres://bob:***@db:5432/x');
    expect(redactUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
  });
});
