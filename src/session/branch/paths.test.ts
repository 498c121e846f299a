import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { parseBranchPoint } from './branch-point.js';
import { claudeProjectDir, codexRolloutName, codexSessionDir, encodeClaudeProjectDir, findClaudeProjectDir, isUuid, newSessionId, resumeCommand, uuidV7 } from './paths.js';

describe('agent folders and ids', () => {
  it('encodes a project folder the way Claude Code does', () => {
    expect(encodeClaudeProjectDir('/home/u/my.proj')).toBe('-home-u-my-proj');
    expect(encodeClaudeProjectDir('/Users/pretor/Documents/PAI - TPOS')).toBe('-Users-pretor-Documents-PAI---TPOS');
    expect(encodeClaudeProjectDir('C:\\Users\\é')).toBe('C--Users--');
    expect(claudeProjectDir('/c', '/root')).toBe(join('/c', 'projects', '-root'));
  });

  it('cuts names over 200 characters and appends a base-36 hash of the full path', () => {
    const long = '/' + 'abcdefghij/'.repeat(25);
    const name = encodeClaudeProjectDir(long);
    expect(name.slice(0, 200)).toBe(long.replace(/[^a-zA-Z0-9]/g, '-').slice(0, 200));
    expect(name).toMatch(/^.{200}-[0-9a-z]+$/);
    expect(encodeClaudeProjectDir(long + 'x')).not.toBe(name);
  });

  it('reuses an existing folder of a long path whatever its hash suffix', async () => {
    const { mkdtemp, mkdir, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const root = await mkdtemp(join(tmpdir(), 'ctxvm-paths-'));
    try {
      const long = '/' + 'abcdefghij/'.repeat(25);
      expect(await findClaudeProjectDir(root, long)).toBe(claudeProjectDir(root, long));
      const other = `${encodeClaudeProjectDir(long).slice(0, 200)}-bunhash`;
      await mkdir(join(root, 'projects', other), { recursive: true });
      expect(await findClaudeProjectDir(root, long)).toBe(join(root, 'projects', other));
      expect(await findClaudeProjectDir(root, '/short')).toBe(join(root, 'projects', '-short'));
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('names Codex rollouts by local time and puts them in the day folder', () => {
    const d = new Date(2025, 11, 15, 12, 0, 35);
    expect(codexRolloutName('019b21ab-55b8-7932-8d73-e85426fd3cad', d)).toBe('rollout-2025-12-15T12-00-35-019b21ab-55b8-7932-8d73-e85426fd3cad.jsonl');
    expect(codexSessionDir('/h', d)).toBe(join('/h', 'sessions', '2025', '12', '15'));
  });

  it('makes v7 ids for Codex (time first) and v4 for Claude Code', () => {
    const ms = Date.UTC(2025, 11, 15, 11, 0, 35, 384);
    const id = uuidV7(ms, Buffer.alloc(10, 0xff));
    expect(id).toMatch(/^019b21ab-55b8-7fff-bfff-ffffffffffff$/);
    expect(isUuid(newSessionId('codex', ms))).toBe(true);
    expect(newSessionId('codex', ms).slice(14, 15)).toBe('7');
    expect(newSessionId('claude', ms).slice(14, 15)).toBe('4');
    expect(resumeCommand('claude', 'x')).toBe('claude --resume x');
    expect(resumeCommand('codex', 'x')).toBe('codex resume x');
  });
});

describe('--at', () => {
  it('reads turn numbers and uuids', () => {
    expect(parseBranchPoint(3)).toEqual({ kind: 'turn', turn: 3 });
    expect(parseBranchPoint(' 12 ')).toEqual({ kind: 'turn', turn: 12 });
    expect(parseBranchPoint('4E8DB9F5-00b3-4e9c-8363-e336c010dcd8')).toEqual({ kind: 'uuid', uuid: '4e8db9f5-00b3-4e9c-8363-e336c010dcd8' });
    expect(parseBranchPoint('4e8db9f5')).toEqual({ kind: 'uuid', uuid: '4e8db9f5' });
    expect(() => parseBranchPoint(0)).toThrow(/positive integer/);
    expect(() => parseBranchPoint('4e8d')).toThrow(/expected a message uuid/);
    expect(() => parseBranchPoint('turn 3')).toThrow(/expected a message uuid/);
  });
});
