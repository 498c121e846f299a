import { readFile, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDagEnv, type DagEnv } from '../../test/support/dag-env.js';
import { buildDemoClaudeSession } from '../demo/claude-session.js';
import { loadManifest } from '../session/dag/manifest.js';
import { readSnapshotFile } from '../session/dag/materialize.js';
import { buildDag, renderDag } from '../session/dag/tree.js';
import { recordHookBranch } from './dag-record.js';
import { readHookLog } from './log.js';
import { runHook, type HookRunOptions } from './run.js';

const SID = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';
const CWD = '/home/demo/app';

let env: DagEnv;
let transcript: string;
beforeEach(async () => {
  env = await createDagEnv();
  transcript = await env.putClaudeSession(CWD, SID, buildDemoClaudeSession({ sessionId: SID, cwd: CWD }).join('\n') + '\n');
});
afterEach(async () => {
  await env.close();
});

const options = (over: Partial<HookRunOptions> = {}): HookRunOptions => ({
  event: 'SessionEnd',
  payload: { session_id: SID, transcript_path: transcript, cwd: CWD, hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' },
  ctxvmHome: env.home,
  store: env.store,
  claudeConfigDir: env.claudeConfigDir,
  codexHome: env.codexHome,
  stableMs: 50,
  pollMs: 10,
  minBytes: 0,
  onBranched: (forked) => recordHookBranch({ catalog: env.catalog, store: env.store }, forked),
  ...over,
});

async function capturedMain(snapshotId: string): Promise<Buffer> {
  const record = (await env.catalog.findSnapshot(snapshotId))!;
  const manifest = await loadManifest(env.store, record.manifestHash);
  const parts: Buffer[] = [];
  for await (const b of readSnapshotFile(env.store, manifest.files[0]!)) parts.push(b);
  return Buffer.concat(parts);
}

describe('recordHookBranch', () => {
  it('records an auto-trim branch like `ctxvm trim`: a snapshot of the bytes branched, and the edge to the trimmed branch', async () => {
    const r = await runHook(options());
    expect(r.outcome, r.reason).toBe('branched');
    expect(r.reason).toBeUndefined();
    const [snap] = await env.catalog.listSnapshots();
    const [branch] = await env.catalog.listBranches();
    expect(r.dag).toEqual({ snapshot: snap!.name, branch: `${snap!.name}-trimmed` });
    expect(snap).toMatchObject({ agent: 'claude', sessionId: SID, sourcePath: transcript, project: CWD, tags: ['auto-trim'], description: 'auto-trim at SessionEnd (prompt_input_exit)', parentSnapshotId: null });
    expect(snap!.name).toMatch(new RegExp(`^${SID.slice(0, 8)}-\\d{8}-\\d{6}$`));
    expect(branch).toMatchObject({ name: `${snap!.name}-trimmed`, snapshotId: snap!.id, sessionId: r.branch!.sessionId, path: r.branch!.path, trimmed: true, cutAt: null });
    // the snapshot holds the transcript as it was branched, byte for byte
    expect((await capturedMain(snap!.id)).equals(await readFile(transcript))).toBe(true);
    expect((await readHookLog(env.home)).at(-1)?.dag).toEqual(r.dag);

    const graph = buildDag(await env.catalog.listSnapshots(), await env.catalog.listBranches());
    expect(graph.edges).toEqual([{ from: snap!.id, to: branch!.id, kind: 'branch' }]);
    expect(renderDag(graph, (n) => n.name)).toEqual([`o ${branch!.name}`, `* ${snap!.name}`]);
  });

  it('publishes the snapshot with its edge or not at all', async () => {
    // the edge cannot be recorded (a write the catalog refuses): the snapshot is not published either
    const catalog = { ...env.catalog, addBranch: () => Promise.reject(new Error('refused')) };
    const r = await runHook(options({ onBranched: (forked) => recordHookBranch({ catalog, store: env.store }, forked) }));
    expect(r.dag).toBeUndefined();
    expect(await env.catalog.listSnapshots()).toEqual([]);
    expect(await env.catalog.listPendingSnapshots()).toEqual([]);
    for await (const hash of env.store.list()) expect((await env.store.holders(hash)).filter((h) => h.startsWith('snapshot:'))).toEqual([]);
  });

  it('chains the snapshots of a growing session, and keeps names unique', async () => {
    const fixed = () => Date.UTC(2026, 0, 2, 3, 4, 5);
    const first = await runHook(options({ onBranched: (f) => recordHookBranch({ catalog: env.catalog, store: env.store, now: fixed }, f) }));
    expect(first.dag?.snapshot).toBe(`${SID.slice(0, 8)}-20260102-030405`);
    // the session grows by two turns (the 7-turn transcript is a prefix of the 9-turn one)
    await writeFile(transcript, buildDemoClaudeSession({ sessionId: SID, cwd: CWD, turns: 9 }).join('\n') + '\n');
    const second = await runHook(options({ onBranched: (f) => recordHookBranch({ catalog: env.catalog, store: env.store, now: fixed }, f) }));
    expect(second.outcome, second.reason).toBe('branched');
    expect(second.dag?.snapshot).toBe(`${SID.slice(0, 8)}-20260102-030405-2`);
    const a = (await env.catalog.findSnapshot(first.dag!.snapshot))!;
    const b = (await env.catalog.findSnapshot(second.dag!.snapshot))!;
    expect(b.parentSnapshotId).toBe(a.id);
    expect((await env.catalog.listBranches()).map((x) => x.name).sort()).toEqual([`${a.name}-trimmed`, `${b.name}-trimmed`].sort());
  });

  it('keeps the branch and logs the reason when recording fails', async () => {
    const r = await runHook(options({ onBranched: () => Promise.reject(new Error('database is locked')) }));
    expect(r).toMatchObject({ outcome: 'branched', reason: 'branch written, but recording it failed: database is locked' });
    expect(r.dag).toBeUndefined();
    expect(await env.catalog.listBranches()).toEqual([]);
  });
});
