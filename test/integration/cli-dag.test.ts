/**
 * The DAG commands end to end, in-process, against temp CLAUDE_CONFIG_DIR / CODEX_HOME /
 * CTXVM_HOME folders populated from ../shared/corpus/sessions: sessions, snapshot, list, tree,
 * info, rm, gc, du, export, import. JSON contracts from DESIGN.md and exit codes (0 ok, 1 failed,
 * 2 bad input).
 */
import { existsSync } from 'node:fs';
import { readFile, readdir, stat, writeFile, mkdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDagEnv, type DagEnv } from '../support/dag-env.js';
import { populateAgentHomes, type PlacedSession } from '../support/agent-homes.js';
import { corpusSkipReason, printSkipReason } from '../support/corpus.js';
import { runCliInProcess } from '../support/run-cli.js';
import { newDagId } from '../../src/session/dag/snapshot.js';
import { validateSession } from '../../src/session/session.js';

const skip = corpusSkipReason();
printSkipReason(skip);

let env: DagEnv;
let placed: PlacedSession[];
const ctxvm = (...args: string[]) => runCliInProcess(args, env.env, env.root);
const ctxvmIn = (cwd: string, ...args: string[]) => runCliInProcess(args, env.env, cwd);

beforeAll(async () => {
  if (skip) return;
  env = await createDagEnv();
  placed = await populateAgentHomes(env.claudeConfigDir, env.codexHome);
});
afterAll(async () => {
  await env?.close();
});

describe.skipIf(!!skip)('ctxvm sessions', () => {
  it('lists every corpus session with the contract fields, newest first', async () => {
    const r = await ctxvm('sessions', '--json');
    expect(r.code).toBe(0);
    const list = r.json<{ agent: string; id: string; path: string; project: string | null; bytes: number; messages: number; updatedAt: string }[]>();
    expect(list.map((s) => s.path).sort()).toEqual(placed.map((p) => p.path).sort());
    for (const s of list) {
      const p = placed.find((x) => x.path === s.path)!;
      expect(s).toMatchObject({ agent: p.agent, id: p.id, bytes: p.bytes });
      expect(typeof s.messages).toBe('number');
      expect(Number.isNaN(Date.parse(s.updatedAt))).toBe(false);
      if (p.project) expect(s.project).toBe(p.project);
    }
    const times = list.map((s) => s.updatedAt);
    expect([...times].sort().reverse()).toEqual(times);
    // summary-only Claude files have no cwd of their own: the folder's is used
    const stub = list.find((s) => s.id === 'd0608523-a955-427f-bdb4-4ea27ddc16b8')!;
    expect(stub.project).toBe('/home/jenkins/Personal_AI_Infrastructure');
    expect(list.find((s) => s.id === 'd3d4e0f8-bcb2-4597-8d7e-3fbcb2d9402b')).toMatchObject({ title: 'Observability Skill Setup and Dashboard Launch' });
  });

  it('filters by agent and project, and finds the latest session of a directory', async () => {
    const codex = (await ctxvm('sessions', '--agent', 'codex', '--json')).json<{ agent: string }[]>();
    expect(codex.length).toBe(placed.filter((p) => p.agent === 'codex').length);
    expect(codex.every((s) => s.agent === 'codex')).toBe(true);
    const proj = (await ctxvm('sessions', '--project', '/home/jenkins/Personal_AI_Infrastructure', '--json')).json<{ project: string }[]>();
    expect(proj.length).toBeGreaterThan(3);
    expect(proj.every((s) => s.project === '/home/jenkins/Personal_AI_Infrastructure')).toBe(true);
    const latest = await ctxvmIn('/home/jenkins/Personal_AI_Infrastructure', 'sessions', '--latest', '--json');
    expect(latest.json()).toHaveLength(1);
    expect(latest.json()[0]).toMatchObject({ project: '/home/jenkins/Personal_AI_Infrastructure' });
    expect(latest.json()[0].messages).toBeGreaterThan(0);
    const human = await ctxvm('sessions', '--agent', 'claude');
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/agent\s+id\s+updated/);
    expect((await ctxvm('sessions', '--agent', 'gemini')).code).toBe(2);
  });
});

describe.skipIf(!!skip)('snapshot, list, tree, info, du', () => {
  it('snapshots by id prefix, path and --latest; names are unique', async () => {
    const big = placed.filter((p) => p.agent === 'claude').sort((a, b) => b.bytes - a.bytes)[0]!;
    const r = await ctxvm('snapshot', 'big-1', '--session', big.id.slice(0, 8), '-d', 'largest corpus session', '--tag', 'corpus', '--json');
    expect(r.code).toBe(0);
    const snap = r.json();
    expect(snap).toMatchObject({ name: 'big-1', bytes: big.bytes, files: 1, session: { id: big.id, path: big.path } });
    expect(snap.id).toMatch(/^[0-9a-f]{16}$/);
    const again = await ctxvm('snapshot', 'big-2', '--session', big.path, '--json');
    expect(again.json()).toMatchObject({ newObjects: 1, parent: snap.id }); // only a new manifest
    const dup = await ctxvm('snapshot', 'big-1', '--session', big.id, '--json');
    expect(dup.code).toBe(2);
    expect(dup.json().error.code).toBe('E_EXISTS');
    const latest = await ctxvmIn('/home/jenkins/Personal_AI_Infrastructure', 'snapshot', 'pai-latest', '--latest', '--json');
    expect(latest.code).toBe(0);
    expect(latest.json().session.project).toBe('/home/jenkins/Personal_AI_Infrastructure');
    expect((await ctxvm('snapshot', 'nothing', '--json')).code).toBe(2);
    expect((await ctxvm('snapshot', 'nothing', '--session', 'ffffffff-none', '--json')).code).toBe(2);
  });

  it('captures subagent folders (2.1 layout) and agent-*.jsonl siblings (2.0 layout)', async () => {
    const aforge = await ctxvm('snapshot', 'aforge', '--session', 'a8117384-8a7e-445b-9af0-ab182dd62c51', '--json');
    expect(aforge.json().files).toBe(3); // main + agent-*.jsonl + agent-*.meta.json
    const hill = await ctxvm('snapshot', 'hill', '--session', '155715ec-f4e9-47ea-859c-2e4cfcceab6f', '--json');
    expect(hill.json().files).toBe(3); // main + agent-a4e3ca2.jsonl + agent-a9d48ea.jsonl
    const info = (await ctxvm('info', 'hill', '--json')).json();
    expect(info.files.map((f: { role: string; path: string }) => `${f.role}:${f.path}`)).toEqual([
      'main:155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl',
      'subagent:agent-a4e3ca2.jsonl',
      'subagent:agent-a9d48ea.jsonl',
    ]);
  });

  it('snapshots a Codex rollout', async () => {
    const codex = placed.filter((p) => p.agent === 'codex').sort((a, b) => b.bytes - a.bytes)[0]!;
    const r = await ctxvm('snapshot', 'codex-1', '--session', codex.id, '--json');
    expect(r.json()).toMatchObject({ bytes: codex.bytes, session: { agent: 'codex', id: codex.id } });
  });

  it('lists, draws and describes snapshots', async () => {
    const list = (await ctxvm('list', '--json')).json<{ name: string; tags: string[] }[]>();
    expect(list.map((s) => s.name)).toEqual(['big-1', 'big-2', 'pai-latest', 'aforge', 'hill', 'codex-1']);
    expect(list[0]!.tags).toEqual(['corpus']);
    expect((await ctxvm('list', '--tag', 'corpus', '--json')).json()).toHaveLength(1);
    const tree = (await ctxvm('tree', '--json')).json<{ nodes: { id: string; name: string }[]; edges: { from: string; to: string; kind: string }[] }>();
    expect(tree.nodes).toHaveLength(6);
    const id = (n: string) => tree.nodes.find((x) => x.name === n)!.id;
    expect(tree.edges).toContainEqual({ from: id('big-1'), to: id('big-2'), kind: 'next' });
    const drawn = await ctxvm('tree');
    expect(drawn.stdout.split('\n')[0]).toMatch(/^\* codex-1/);
    expect(drawn.stdout).toMatch(/\* big-2 .*\n\* big-1/);
    const info = (await ctxvm('info', 'big-1', '--json')).json();
    expect(info.kind).toBe('snapshot');
    expect(info.stats.tokens).toBeGreaterThan(1000);
    expect(Object.keys(info.stats.breakdown)).toContain('toolResult');
    expect(info.children).toEqual([{ kind: 'snapshot', id: id('big-2'), name: 'big-2' }]);
    expect((await ctxvm('info', 'big-2', '--json')).json().lineage.map((n: { name: string }) => n.name)).toEqual(['big-2', 'big-1']);
    const codexInfo = (await ctxvm('info', 'codex-1', '--json')).json();
    expect(codexInfo.stats.tokens).toBeGreaterThan(100);
    const human = await ctxvm('info', 'big-1');
    expect(human.stdout).toMatch(/context +[\d,]+ tokens/);
    expect((await ctxvm('info', 'nope')).code).toBe(2);
  });

  it('reports logical and stored bytes', async () => {
    const du = (await ctxvm('du', '--all', '--json')).json();
    expect(du.snapshots).toBe(6);
    expect(du.logicalBytes).toBeGreaterThan(du.storedBytes);
    expect(du.ratio).toBeGreaterThan(0);
    expect(du.store.storedBytes).toBeGreaterThanOrEqual(du.storedBytes);
    expect((await ctxvm('du')).stdout).toMatch(/ratio +[\d.]+x the largest snapshot/);
    // bytes on disk: every part counted, and their sum is the total
    const d = du.disk;
    expect(du.diskBytes).toBe(d.total);
    expect(d.packs + d.looseObjects + d.refs + d.database + d.other).toBe(d.total);
    expect(d.database).toBeGreaterThan(0);
    expect(d.looseObjects + d.packs).toBeGreaterThan(0);
  });
});

describe.skipIf(!!skip)('branch and trim', () => {
  it('branches a snapshot into the agent folder, trimmed, and records the edge', async () => {
    const r = await ctxvm('branch', 'big-1', '--name', 'big-b1', '--json');
    expect(r.code, r.stderr).toBe(0);
    const b = r.json();
    expect(b).toMatchObject({ name: 'big-b1', agent: 'claude', snapshot: { name: 'big-1' }, resume: `claude --resume ${b.sessionId}` });
    expect(b.trimmed.reduction).toBeGreaterThan(0);
    expect(b.path).toBe(join(env.claudeConfigDir, 'projects', basename(join(b.path, '..')), `${b.sessionId}.jsonl`));
    expect((await validateSession(b.path)).valid).toBe(true);
    // the agent sees it: it is a session like any other
    const listed = (await ctxvm('sessions', '--json')).json<{ id: string }[]>();
    expect(listed.map((x) => x.id)).toContain(b.sessionId);
    // a later snapshot of the branch hangs under it
    const later = (await ctxvm('snapshot', 'big-b1-s1', '--session', b.sessionId, '--json')).json();
    expect(later.sourceBranch).toBe(b.id);
    const tree = (await ctxvm('tree')).stdout;
    expect(tree).toMatch(/\* big-b1-s1 [^\n]*\no big-b1 +branch/);
    expect((await ctxvm('info', 'big-b1', '--json')).json()).toMatchObject({ kind: 'branch', lineage: [{ name: 'big-b1' }, { name: 'big-1' }] });
    const taken = await ctxvm('branch', 'big-1', '--name', 'big-b1', '--json');
    expect(taken.code).toBe(2);
    expect((await ctxvm('branch', 'missing', '--name', 'x', '--json')).code).toBe(2);
  });

  it('an untrimmed branch with new ids, and its snapshot, share the source snapshot’s chunks', async () => {
    const r = (await ctxvm('branch', 'big-1', '--name', 'big-plain', '--no-trim', '--json')).json();
    expect(r.trimmed).toBeNull();
    const source = await readFile(placed.filter((p) => p.agent === 'claude').sort((a, b) => b.bytes - a.bytes)[0]!.path, 'utf8');
    const branch = await readFile(r.path, 'utf8');
    expect(branch.includes(`"sessionId":"${r.sessionId}"`)).toBe(true);
    expect(branch.length).toBeGreaterThan(source.length * 0.9);
    const snap = (await ctxvm('snapshot', 'big-plain-s', '--session', r.sessionId, '--json')).json();
    expect(snap.newStoredBytes).toBeLessThan(snap.storedBytes * 0.2);
  });

  it('cuts a branch at a turn', async () => {
    const r = await ctxvm('branch', 'big-1', '--name', 'big-cut', '--at', '2', '--no-trim', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().at).toMatchObject({ turn: 2 });
    expect(r.json().at.droppedLines).toBeGreaterThan(0);
    expect((await validateSession(r.json().path)).valid).toBe(true);
  });

  it('trim --latest: snapshot and trimmed branch in one step; the original is untouched', async () => {
    const cwd = '/home/jenkins/Personal_AI_Infrastructure';
    const latest = (await ctxvmIn(cwd, 'sessions', '--latest', '--json')).json()[0];
    const before = await readFile(latest.path);
    const r = await ctxvmIn(cwd, 'trim', '--latest', '--json');
    expect(r.code, r.stderr).toBe(0);
    const t = r.json();
    expect(t.snapshot.name).toMatch(/^[0-9a-f]{8}-\d{8}-\d{6}$/);
    expect(t.name).toBe(`${t.snapshot.name}-trimmed`);
    expect(t.resume).toBe(`claude --resume ${t.sessionId}`);
    expect((await readFile(latest.path)).equals(before)).toBe(true);
    expect((await ctxvm('list', '--tag', 'trim', '--json')).json()).toHaveLength(1);
  });

  it('branches a Codex snapshot into the dated sessions folder', async () => {
    const r = await ctxvm('branch', 'codex-1', '--name', 'codex-b1', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().path).toMatch(new RegExp(`^${env.codexHome}/sessions/\\d{4}/\\d{2}/\\d{2}/rollout-.*${r.json().sessionId}\\.jsonl$`));
    expect(r.json().resume).toBe(`codex resume ${r.json().sessionId}`);
  });
});

describe.skipIf(!!skip)('rm and gc', () => {
  it('refuses to remove a snapshot with branches unless --cascade, then gc reclaims its objects', async () => {
    const snap = await env.catalog.findSnapshot('aforge');
    // a branch record as `ctxvm branch` writes it, and a snapshot taken of that branch's session
    const branchSession = 'bbbbbbbb-0000-4000-8000-000000000001';
    const dir = join(env.claudeConfigDir, 'projects', '-root');
    const original = await readFile(join(dir, 'a8117384-8a7e-445b-9af0-ab182dd62c51.jsonl'), 'utf8');
    const branchPath = join(dir, `${branchSession}.jsonl`);
    await writeFile(branchPath, original.replaceAll('a8117384-8a7e-445b-9af0-ab182dd62c51', branchSession));
    await env.catalog.addBranch({ id: newDagId(), name: 'aforge-b1', snapshotId: snap!.id, agent: 'claude', sessionId: branchSession, path: branchPath, trimmed: false, cutAt: null, createdAtMs: Date.now() });
    expect((await ctxvm('snapshot', 'aforge-b1-s1', '--session', branchSession, '--json')).json().sourceBranch).toBeTruthy();
    const tree = await ctxvm('tree');
    // the later snapshot sits on the branch, which hangs under its snapshot
    expect(tree.stdout).toMatch(/^\* aforge-b1-s1 .*\no aforge-b1 +branch /m);
    const graph = (await ctxvm('tree', '--json')).json<{ nodes: { id: string; name: string }[]; edges: { from: string; to: string; kind: string }[] }>();
    const idOf = (n: string) => graph.nodes.find((x) => x.name === n)!.id;
    expect(graph.edges).toContainEqual({ from: idOf('aforge'), to: idOf('aforge-b1'), kind: 'branch' });
    expect(graph.edges).toContainEqual({ from: idOf('aforge-b1'), to: idOf('aforge-b1-s1'), kind: 'snapshot' });

    const refused = await ctxvm('rm', 'aforge', '--json');
    expect(refused.code).toBe(1);
    expect(refused.json().error.code).toBe('E_CONFLICT');
    const before = (await ctxvm('du', '--all', '--json')).json();
    const removed = await ctxvm('rm', 'aforge', '--cascade', '--json');
    expect(removed.code).toBe(0);
    expect(removed.json().snapshots.map((s: { name: string }) => s.name).sort()).toEqual(['aforge', 'aforge-b1-s1']);
    expect(removed.json().branches.map((b: { name: string }) => b.name)).toEqual(['aforge-b1']);
    await stat(branchPath); // the branch's session file is kept
    const gc = (await ctxvm('gc', '--grace', '0', '--json')).json();
    expect(gc.objects.deleted).toBeGreaterThan(0);
    // the removed snapshots' catalog rows freed pages, and gc gave them back to the file system
    expect(gc.database.releasedBytes).toBeGreaterThan(0);
    expect(gc.database.remainingFreeBytes).toBe(0);
    const after = (await ctxvm('du', '--all', '--json')).json();
    expect(after.store.storedBytes).toBeLessThan(before.store.storedBytes);
    // gc packed what it kept, and the disk shrank
    expect(after.disk.packs).toBeGreaterThan(0);
    expect(after.diskBytes).toBeLessThan(before.diskBytes);
    expect(after.snapshots).toBe(before.snapshots - 2);
    // the remaining snapshots are intact
    const info = await ctxvm('info', 'hill', '--refresh', '--json');
    expect(info.code).toBe(0);
    expect((await ctxvm('gc', '--grace', 'soon')).code).toBe(2);
  });
});

describe.skipIf(!!skip)('export and import', () => {
  it('round-trips a snapshot through an archive, remapping the project directory', async () => {
    const out = join(env.root, 'hill.tar.gz');
    const ex = await ctxvm('export', 'hill', '-o', out, '--json');
    expect(ex.code).toBe(0);
    expect(ex.json()).toMatchObject({ gzip: true, files: 3, path: out });
    const im = await ctxvm('import', out, '--name', 'hill-moved', '--cwd', '/srv/moved project', '--json');
    expect(im.code).toBe(0);
    expect(im.json()).toMatchObject({ name: 'hill-moved', project: '/srv/moved project', exportedName: 'hill', remapped: { from: '/home/jenkins/Personal_AI_Infrastructure', to: '/srv/moved project' } });
    expect(im.json().remapped.lines).toBeGreaterThan(5);
    // the imported content: cwd rewritten, everything else identical
    const tar = join(env.root, 'moved.tar');
    await ctxvm('export', 'hill-moved', '-o', tar);
    const text = (await readFile(tar)).toString('utf8');
    expect(text).toContain('"cwd":"/srv/moved project"');
    expect(text).not.toContain('"cwd":"/home/jenkins/Personal_AI_Infrastructure"');
    const same = await ctxvm('import', out, '--json');
    expect(same.code).toBe(2); // name "hill" is taken
    expect(same.json().error.code).toBe('E_EXISTS');
    const kept = await ctxvm('import', out, '--name', 'hill-copy', '--json');
    expect(kept.json()).toMatchObject({ remapped: null, project: '/home/jenkins/Personal_AI_Infrastructure', newObjects: 1 }); // all chunks shared
    // the printed next step works as written and gives a session the agent lists
    const next = im.json<{ next: string }>().next;
    expect(next).toBe('ctxvm branch hill-moved --name hill-moved-imported');
    const human = await ctxvm('import', out, '--name', 'hill-human');
    expect(human.stdout).toContain('next: ctxvm branch hill-human --name hill-human-imported');
    const branched = await ctxvm(...next.split(' ').slice(1), '--json');
    expect(branched.code, branched.stderr).toBe(0);
    const listed = (await ctxvm('sessions', '--json')).json<{ id: string }[]>();
    expect(listed.map((s) => s.id)).toContain(branched.json<{ sessionId: string }>().sessionId);
  });
});

describe('ctxvm demo', () => {
  it('--json prints one document with every section, offline, and leaves nothing behind', async () => {
    const r = await runCliInProcess(['demo', '--json'], { CTXVM_HOME: '/nonexistent/ctxvm-demo-must-not-use-this' }, process.cwd());
    expect(r.code, r.stderr).toBe(0);
    const doc = r.json<{ ok: boolean; problems: string[]; home: string; kept: boolean; ms: Record<string, number>; text: unknown[]; sessions: Record<string, any> }>();
    expect(doc).toMatchObject({ ok: true, problems: [], kept: false });
    // the folder the tour ran in, removed since it was not kept
    expect(existsSync(doc.home)).toBe(false);
    expect(doc.text).toHaveLength(3);
    const s = doc.sessions;
    expect(s.trim).toMatchObject({ input: { bytes: expect.any(Number), tokens: expect.any(Number) }, output: { bytes: expect.any(Number), tokens: expect.any(Number) } });
    expect(s.validate.valid).toBe(true);
    expect(s.restore.identical).toBe(true);
    expect(s.tree.nodes.map((n: { name: string }) => n.name).sort()).toEqual(['demo', 'demo-trimmed', 'demo-trimmed-2']);
    expect(s.du).toMatchObject({ snapshots: 2, branches: 1, logicalBytes: expect.any(Number), storedBytes: expect.any(Number) });
    expect(s.pageIn.inOriginal).toBe(true);
  }, 60_000);
});
