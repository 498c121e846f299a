import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { appendFile, chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { CLAUDE_CORPUS_DIR, corpusSkipReason, printSkipReason } from '../../test/support/corpus.js';
import { scratchPid } from '../session/dag/maintenance.js';
import { validateSession } from '../session/session.js';
import { createFsObjectStore } from '../store/drivers/objects-fs.js';
import type { ObjectStore } from '../store/object-store.js';
import { readHookLog } from './log.js';
import { parseHookPayload, runHook, type HookRunOptions } from './run.js';

const skip = corpusSkipReason();
printSkipReason(skip);
const SOURCE = join(CLAUDE_CORPUS_DIR, 'smartagent', 'projects', '-Users-pretor-Documents-PAI---TPOS', '351b5d6c-e802-4339-a2c5-33f48865d8bd.jsonl');
const SID = '351b5d6c-e802-4339-a2c5-33f48865d8bd';

let dir: string;
let home: string;
let project: string;
let transcript: string;
let store: ObjectStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-hookrun-'));
  home = join(dir, 'ctxvm');
  project = join(dir, 'claude', 'projects', '-Users-pretor-Documents-PAI---TPOS');
  await mkdir(project, { recursive: true });
  transcript = join(project, `${SID}.jsonl`);
  if (!skip) {
    await copyFile(SOURCE, transcript);
    await chmod(transcript, 0o644);
  }
  store = createFsObjectStore({ root: join(home, 'objects'), durability: 'deferred' });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sha = async (p: string) => createHash('sha256').update(await readFile(p)).digest('hex');
const options = (over: Partial<HookRunOptions> = {}): HookRunOptions => ({
  event: 'SessionEnd',
  payload: { session_id: SID, transcript_path: transcript, cwd: '/Users/pretor/Documents/PAI - TPOS', hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' },
  ctxvmHome: home,
  store,
  claudeConfigDir: join(dir, 'claude'),
  codexHome: join(dir, 'codex'),
  stableMs: 100,
  pollMs: 20,
  ...over,
});
const visible = async () => (await readdir(project)).filter((n) => !n.startsWith('.')).sort();

describe.skipIf(!!skip)('runHook', () => {
  it('forks a trimmed branch beside the transcript, never touching the transcript', async () => {
    const before = await sha(transcript);
    const seen: string[] = [];
    const scratchOwners: (number | undefined)[] = [];
    const r = await runHook(options({ onBranched: async (f) => {
      seen.push(f.branch.sessionId);
      // the captured copy lives in a scratch folder named by this pid: gc frees it once a killed hook is gone
      scratchOwners.push(scratchPid(basename(dirname(f.capturedPath))));
    } }));
    expect(r.outcome, r.reason).toBe('branched');
    expect(r.branch!.path.startsWith(project)).toBe(true);
    expect(r.branch!.resume).toBe(`claude --resume ${r.branch!.sessionId}`);
    expect(r.tokens!.reduction).toBeGreaterThanOrEqual(0.1);
    expect(seen).toEqual([r.branch!.sessionId]);
    expect(scratchOwners).toEqual([process.pid]);
    expect((await validateSession(r.branch!.path)).valid).toBe(true);
    expect(await sha(transcript)).toBe(before);
    expect(await visible()).toEqual([`${SID}.jsonl`, `${r.branch!.sessionId}.jsonl`].sort());
    expect((await readdir(project)).filter((n) => n.startsWith('.'))).toEqual([]);
    expect(await readdir(join(home, 'tmp'))).toEqual([]);
    expect(await readdir(join(home, 'locks'))).toEqual([]);
    const log = await readHookLog(home);
    expect(log.map((e) => e.outcome)).toEqual(['branched']);
    // the same transcript again: nothing to do
    const again = await runHook(options());
    expect(again).toMatchObject({ outcome: 'skipped', reason: 'already handled at this size' });
    expect(await visible()).toHaveLength(2);
  });

  it('waits while the transcript is being written, and gives up after maxWaitMs', async () => {
    const line = JSON.stringify({ type: 'queue-operation', operation: 'enqueue', sessionId: SID, timestamp: '2025-01-01T00:00:00.000Z' }) + '\n';
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 10 && writing; i++) {
        await appendFile(transcript, line);
        await new Promise((r) => setTimeout(r, 40));
      }
    })();
    const t0 = Date.now();
    const r = await runHook(options({ stableMs: 200 }));
    await writer;
    expect(r.outcome, r.reason).toBe('branched');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(400);

    writing = true;
    const endless = (async () => {
      while (writing) {
        await appendFile(transcript, line);
        await new Promise((r2) => setTimeout(r2, 30));
      }
    })();
    const late = await runHook(options({ stableMs: 200, maxWaitMs: 500, event: 'PreCompact', payload: { ...options().payload, hook_event_name: 'PreCompact', trigger: 'auto' } }));
    writing = false;
    await endless;
    expect(late).toMatchObject({ outcome: 'skipped', reason: 'transcript is still being written' });
  });

  it('skips while another run holds the lock, and takes over an abandoned lock', async () => {
    await mkdir(join(home, 'locks'), { recursive: true });
    const lock = join(home, 'locks', `hook-${SID}.lock`);
    await writeFile(lock, JSON.stringify({ pid: process.pid, startedAtMs: Date.now() }));
    expect(await runHook(options())).toMatchObject({ outcome: 'skipped', reason: 'another ctxvm hook is working on this session' });
    await writeFile(lock, JSON.stringify({ pid: 2 ** 22 + 12345, startedAtMs: Date.now() }));
    expect((await runHook(options())).outcome).toBe('branched');
  });

  it('keeps no branch that saves too little, and releases its objects', async () => {
    const r = await runHook(options({ minReduction: 0.99 }));
    expect(r.outcome).toBe('skipped');
    expect(r.reason).toMatch(/trimming would remove \d+\.\d% of the context/);
    expect(await visible()).toEqual([`${SID}.jsonl`]);
    for await (const h of store.list()) expect(await store.holders(h)).toEqual([]);
  });

  it('skips what is not for it, and logs failures instead of throwing', async () => {
    expect(await runHook(options({ payload: { ...options().payload, hook_event_name: 'Stop' } }))).toMatchObject({ outcome: 'skipped', reason: expect.stringMatching(/payload is for Stop/) as unknown });
    expect(await runHook(options({ payload: { ...options().payload, transcript_path: join(project, 'missing.jsonl') } }))).toMatchObject({ outcome: 'skipped', reason: 'transcript not found' });
    expect(await runHook(options({ minBytes: 10_000_000 }))).toMatchObject({ outcome: 'skipped', reason: expect.stringMatching(/small/) as unknown });
    await writeFile(transcript, '{"type":"user"'.repeat(10_000) + '\n');
    const failed = await runHook(options());
    expect(failed.outcome).toBe('failed');
    expect((await readHookLog(home, 10)).map((e) => e.outcome)).toEqual(['skipped', 'skipped', 'skipped', 'failed']);
  });
});

describe('hook payload', () => {
  it('checks the fields used in file names', () => {
    expect(parseHookPayload('{"session_id":"abc-1","transcript_path":"/p/abc-1.jsonl","hook_event_name":"SessionEnd"}').session_id).toBe('abc-1');
    expect(() => parseHookPayload('{"session_id":"../../etc","transcript_path":"/p/x.jsonl"}')).toThrow(/session_id/);
    expect(() => parseHookPayload('{"session_id":"a","transcript_path":"rel/x.jsonl"}')).toThrow(/transcript_path/);
    expect(() => parseHookPayload('not json')).toThrow(/not JSON/);
  });
});
