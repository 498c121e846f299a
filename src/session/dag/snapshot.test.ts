import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyWithNewIds, createDagEnv, type DagEnv } from '../../../test/support/dag-env.js';
import { loadManifest } from './manifest.js';
import { materializeSnapshot } from './materialize.js';
import { collectSessionFiles, createSnapshot, snapshotHolder } from './snapshot.js';

let env: DagEnv;
beforeEach(async () => {
  env = await createDagEnv();
});
afterEach(async () => {
  await env.close();
});

/** A session-like JSONL file of about `lines` lines with bulky tool output. */
function sessionText(sessionId: string, lines: number, seed = 7): string {
  let s = seed;
  const rnd = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const out: string[] = [];
  let parent: string | null = null;
  for (let i = 0; i < lines; i++) {
    const uuid = randomUUID();
    const size = rnd() < 0.2 ? Math.floor(rnd() * 30_000) : Math.floor(rnd() * 800);
    const body = Array.from({ length: Math.ceil(size / 40) }, (_, k) => `line ${k} of output ${i} ${Math.floor(rnd() * 1e6)}`).join('\n');
    out.push(JSON.stringify({ parentUuid: parent, sessionId, cwd: '/work/proj', type: i % 2 ? 'assistant' : 'user', message: { role: i % 2 ? 'assistant' : 'user', content: body }, uuid }));
    parent = uuid;
  }
  return out.join('\n') + '\n';
}

describe('createSnapshot', () => {
  it('captures main, subagent and tool-result files and materializes them byte for byte', async () => {
    const id = randomUUID();
    const main = await env.putClaudeSession('/work/proj', id, sessionText(id, 300));
    const dir = join(main, '..', id);
    await mkdir(join(dir, 'subagents'), { recursive: true });
    await mkdir(join(dir, 'tool-results'), { recursive: true });
    await writeFile(join(dir, 'subagents', 'agent-a1.jsonl'), sessionText(id, 20, 3));
    await writeFile(join(dir, 'subagents', 'agent-a1.meta.json'), '{"agentType":"general"}');
    await writeFile(join(dir, 'tool-results', 'toolu_1.txt'), 'x'.repeat(100_000));
    await writeFile(join(dir, 'subagents', '.agent-a2.jsonl.0123456789ab.tmp'), 'partial');
    const source = { agent: 'claude' as const, sessionId: id, path: main, project: '/work/proj' };
    const files = await collectSessionFiles(source);
    expect(files.map((f) => [f.role, f.relativePath])).toEqual([
      ['main', `${id}.jsonl`],
      ['subagent', `${id}/subagents/agent-a1.jsonl`],
      ['subagent', `${id}/subagents/agent-a1.meta.json`],
      ['tool-result', `${id}/tool-results/toolu_1.txt`],
    ]);
    const snap = await createSnapshot({ catalog: env.catalog, store: env.store, source, name: 'first', tags: ['b', 'a'], description: 'before refactor' });
    expect(snap.files).toBe(4);
    expect(snap.record.tags).toEqual(['a', 'b']);
    const manifest = await loadManifest(env.store, snap.manifestHash);
    const out = join(env.root, 'out');
    const written = await materializeSnapshot(env.store, manifest, out);
    for (const f of written) {
      const original = await readFile(join(main, '..', f.relativePath));
      expect((await readFile(f.path)).equals(original)).toBe(true);
    }
    // every object is referenced by the snapshot's holder and listed in the catalog
    const objects = await env.catalog.snapshotObjects(snap.id);
    expect(objects.length).toBe(snap.objects);
    for (const o of objects) expect(await env.store.holders(o.hash)).toContain(snapshotHolder(snap.id));
    expect(await env.catalog.listPendingSnapshots()).toEqual([]);
  });

  it('refuses a name already in use', async () => {
    const id = randomUUID();
    const main = await env.putClaudeSession('/p', id, sessionText(id, 10));
    const source = { agent: 'claude' as const, sessionId: id, path: main, project: '/p' };
    await createSnapshot({ catalog: env.catalog, store: env.store, source, name: 'x' });
    await expect(createSnapshot({ catalog: env.catalog, store: env.store, source, name: 'x' })).rejects.toMatchObject({ code: 'E_EXISTS' });
    await expect(createSnapshot({ catalog: env.catalog, store: env.store, source, name: '-bad' })).rejects.toMatchObject({ code: 'E_USAGE' });
  });

  it('shares chunks between snapshots of a growing session and of its id-rewritten copies', async () => {
    const id = randomUUID();
    const full = sessionText(id, 3000);
    const cut = (ratio: number) => full.slice(0, full.lastIndexOf('\n', Math.floor(full.length * ratio)) + 1);
    let path = '';
    for (let k = 1; k <= 10; k++) {
      path = await env.putClaudeSession('/work/proj', id, cut(k / 10));
      await createSnapshot({ catalog: env.catalog, store: env.store, source: { agent: 'claude', sessionId: id, path, project: '/work/proj' }, name: `grow-${k}` });
    }
    const afterGrowth = await env.catalog.storageTotals();
    const copy = copyWithNewIds(full);
    const bid = copy.ids.get(id)!;
    const bpath = await env.putClaudeSession('/work/proj', bid, copy.content);
    const b = await createSnapshot({ catalog: env.catalog, store: env.store, source: { agent: 'claude', sessionId: bid, path: bpath, project: '/work/proj' }, name: 'branch-copy' });
    const totals = await env.catalog.storageTotals();
    const largest = Buffer.byteLength(full);
    // the copy's text stream is shared; it adds its UUID side stream and manifest only
    expect(b.newStoredBytes).toBeLessThan(largest * 0.05);
    expect(totals.storedBytes / largest).toBeLessThan(1.3);
    expect(afterGrowth.logicalBytes).toBeGreaterThan(largest * 5);
    const manifest = await loadManifest(env.store, b.manifestHash);
    const [file] = await materializeSnapshot(env.store, manifest, join(env.root, 'b'));
    expect(await readFile(file!.path, 'utf8')).toBe(copy.content);
  });

  it('leaves out an unterminated last line that is not JSON (a line being written)', async () => {
    const id = randomUUID();
    const text = sessionText(id, 5);
    const main = await env.putClaudeSession('/p', id, text + '{"type":"user","mess');
    const snap = await createSnapshot({ catalog: env.catalog, store: env.store, source: { agent: 'claude', sessionId: id, path: main, project: '/p' }, name: 's' });
    expect(snap.droppedTailBytes).toBe(20);
    expect(snap.bytes).toBe(Buffer.byteLength(text));
    const complete = await env.putClaudeSession('/p', id, text + '{"type":"summary"}');
    const snap2 = await createSnapshot({ catalog: env.catalog, store: env.store, source: { agent: 'claude', sessionId: id, path: complete, project: '/p' }, name: 's2' });
    expect(snap2.droppedTailBytes).toBe(0);
    expect(snap2.record.parentSnapshotId).toBe(snap.id);
  });
});
