import { randomUUID } from 'node:crypto';
import { mkdir, stat, writeFile, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDagEnv, type DagEnv } from '../../../test/support/dag-env.js';
import { collectSessionGarbage, diskUsage, removeSnapshot } from './maintenance.js';
import { createSnapshot, newDagId, snapshotHolder } from './snapshot.js';

let env: DagEnv;
beforeEach(async () => {
  env = await createDagEnv();
});
afterEach(async () => {
  await env.close();
});

const lines = (id: string, n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => JSON.stringify({ sessionId: id, uuid: randomUUID(), type: 'user', message: { content: `${tag} ${i} ${'z'.repeat(2000)} ${Math.random()}` } })).join('\n') + '\n';

async function snap(name: string, id = randomUUID(), content = lines(id, 50, name)) {
  const path = await env.putClaudeSession('/p', id, content);
  return createSnapshot({ catalog: env.catalog, store: env.store, source: { agent: 'claude', sessionId: id, path, project: '/p' }, name });
}

describe('gc', () => {
  it('releases the references of a snapshot whose writer died before publishing it', async () => {
    const kept = await snap('kept');
    // what a killed `ctxvm snapshot` leaves: a pending row and referenced objects, no snapshot row
    const dead = newDagId();
    await env.catalog.beginSnapshot({ id: dead, name: 'dead', pid: 999_999, host: 'this-host', startedAtMs: Date.now() });
    const orphan = await env.store.put('half a snapshot');
    await env.store.ref(orphan.hash, snapshotHolder(dead));
    const shared = (await env.catalog.snapshotObjects(kept.id))[0]!.hash;
    await env.store.ref(shared, snapshotHolder(dead));
    // a snapshot being written right now by a live process is left alone
    const live = newDagId();
    await env.catalog.beginSnapshot({ id: live, name: 'live', pid: process.pid, host: 'this-host', startedAtMs: Date.now() });
    const inFlight = await env.store.put('being written');
    await env.store.ref(inFlight.hash, snapshotHolder(live));

    const r = await collectSessionGarbage({ catalog: env.catalog, store: env.store, graceMs: 0, host: 'this-host', isAlive: (pid) => pid === process.pid });
    expect(r).toMatchObject({ abandonedSnapshots: 1, orphanReferences: 2 });
    expect(r.objects.deleted).toBe(1);
    expect(await env.store.has(orphan.hash)).toBe(false);
    expect(await env.store.holders(shared)).toEqual([snapshotHolder(kept.id)]);
    expect(await env.store.has(inFlight.hash)).toBe(true);
    expect((await env.catalog.listPendingSnapshots()).map((p) => p.id)).toEqual([live]);
    for (const o of await env.catalog.snapshotObjects(kept.id)) await env.store.verify(o.hash);
  });

  it('removes stale temp files and scratch folders, not fresh ones', async () => {
    const dir = join(env.claudeConfigDir, 'projects', '-p');
    await mkdir(dir, { recursive: true });
    const stale = join(dir, '.abc.jsonl.0123456789ab.tmp');
    const fresh = join(dir, '.def.jsonl.0123456789ab.tmp');
    await writeFile(stale, 'x');
    await writeFile(fresh, 'x');
    const old = new Date(Date.now() - 2 * 3600_000);
    await utimes(stale, old, old);
    const scratch = join(env.home, 'tmp');
    await mkdir(join(scratch, 'info-old'), { recursive: true });
    await utimes(join(scratch, 'info-old'), old, old);
    const r = await collectSessionGarbage({ catalog: env.catalog, store: env.store, tempDirs: [dir], scratchDir: scratch });
    expect(r.tempFiles).toBe(2);
    await expect(stat(stale)).rejects.toThrow();
    await stat(fresh);
  });
});

describe('rm', () => {
  it('refuses while branches depend on a snapshot, cascades on request, and relinks later snapshots', async () => {
    const id = randomUUID();
    const s1 = await snap('s1', id, lines(id, 40, 'a'));
    const s2 = await snap('s2', id, lines(id, 40, 'a') + lines(id, 10, 'b'));
    const s3 = await snap('s3', id, lines(id, 40, 'a') + lines(id, 20, 'b'));
    const bid = randomUUID();
    await env.catalog.addBranch({ id: newDagId(), name: 'b', snapshotId: s2.id, agent: 'claude', sessionId: bid, path: '/p/b.jsonl', trimmed: true, cutAt: null, createdAtMs: Date.now() });
    const bs = await snap('b-s', bid);
    expect(bs.record.sourceBranchId).not.toBeNull();
    await expect(removeSnapshot({ catalog: env.catalog, store: env.store, ref: 's2' })).rejects.toMatchObject({ code: 'E_CONFLICT' });
    const r = await removeSnapshot({ catalog: env.catalog, store: env.store, ref: 's2', cascade: true });
    expect(r.snapshots.map((s) => s.name).sort()).toEqual(['b-s', 's2']);
    expect(r.branches.map((b) => b.name)).toEqual(['b']);
    expect((await env.catalog.findSnapshot('s3'))?.parentSnapshotId).toBe(s1.id);
    // objects s2 shared with s1/s3 keep their other holders; its own go with gc
    for (const o of await env.catalog.snapshotObjects(s3.id)) expect(await env.store.holders(o.hash)).toContain(snapshotHolder(s3.id));
    const before = await diskUsage({ catalog: env.catalog, store: env.store, includeStore: true });
    await collectSessionGarbage({ catalog: env.catalog, store: env.store, graceMs: 0 });
    const after = await diskUsage({ catalog: env.catalog, store: env.store, includeStore: true });
    expect(after.store!.storedBytes).toBeLessThan(before.store!.storedBytes);
    expect(after.storedBytes).toBe(before.storedBytes);
    expect(after).toMatchObject({ snapshots: 2, branches: 0 });
    await expect(removeSnapshot({ catalog: env.catalog, store: env.store, ref: 'gone' })).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
  });
});
