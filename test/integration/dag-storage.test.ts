/**
 * The storage target of the snapshot DAG: 10 snapshots of one session taken as it grows, plus 10
 * branches of them (new session ids, every line's ids rewritten), each branch snapshotted in turn,
 * cost at most 1.3x the bytes of the largest session file (a plain copy per snapshot would be
 * ~10x). Counted: every object in ctxvm's store (chunks, manifests, UUID side streams). The
 * branch files themselves live in the agent's folder, like the session they came from.
 *
 * Trimmed branches must fit too: the trimmer stores originals in page-out packs in lifted form
 * (ids moved out to a small per-trim list), so a branch's packs are the same objects as its
 * siblings' (see also the report printed by bench/dag.bench.mjs).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { branchFromSnapshot } from '../../src/session/dag/branch-snapshot.js';
import { diskUsage } from '../../src/session/dag/maintenance.js';
import { createSnapshot } from '../../src/session/dag/snapshot.js';
import { createDagEnv, type DagEnv } from '../support/dag-env.js';
import { generateClaudeSession, generatorSkipReason, printSkipReason } from '../support/corpus.js';
import { growingPrefixes } from '../support/growing.js';

const skip = generatorSkipReason();
printSkipReason(skip);

let env: DagEnv;
let largest = 0;
let project: string | null = null;
const SESSION = '5e551011-0000-4000-8000-000000000001';

beforeAll(async () => {
  if (skip) return;
  env = await createDagEnv();
});
afterAll(async () => {
  await env?.close();
});

const branchOptions = () => ({ catalog: env.catalog, store: env.store, claudeConfigDir: env.claudeConfigDir, codexHome: env.codexHome, scratchDir: join(env.home, 'tmp'), measure: false });
const ratioOf = (bytes: number) => (bytes / largest).toFixed(3);

describe.skipIf(!!skip)('storage of a growing session and its branches', () => {
  it('10 snapshots + 10 branches, each snapshotted, fit in 1.3x the largest session file', async () => {
    const generated = join(env.root, 'gen.jsonl');
    generateClaudeSession(generated, { turns: 60, seed: 11, compactions: 1 });
    const data = await readFile(generated);
    largest = data.length;
    project = (/"cwd":"([^"]+)"/.exec(data.toString('utf8', 0, 64 * 1024)) ?? [])[1] ?? null;
    expect(project).not.toBeNull();
    for (const [k, prefix] of growingPrefixes(data).entries()) {
      const path = await env.putClaudeSession(project!, SESSION, prefix);
      await createSnapshot({ catalog: env.catalog, store: env.store, source: { agent: 'claude', sessionId: SESSION, path, project }, name: `grow-${k + 1}` });
    }
    const afterSnapshots = await diskUsage({ catalog: env.catalog, store: env.store, includeStore: true });
    for (let k = 1; k <= 10; k++) {
      const b = await branchFromSnapshot({ ...branchOptions(), snapshot: `grow-${k}`, name: `branch-${k}`, trim: false });
      await createSnapshot({ catalog: env.catalog, store: env.store, source: { agent: 'claude', sessionId: b.sessionId, path: b.path, project }, name: `branch-${k}-s` });
    }
    const u = await diskUsage({ catalog: env.catalog, store: env.store, includeStore: true });
    console.log(
      `[storage] largest file ${largest} B; 10 growing snapshots: logical ${afterSnapshots.logicalBytes} B, stored ${afterSnapshots.store!.storedBytes} B (${ratioOf(afterSnapshots.store!.storedBytes)}x); ` +
        `+ 10 branches snapshotted: logical ${u.logicalBytes} B, stored ${u.store!.storedBytes} B (${ratioOf(u.store!.storedBytes)}x); du ratio ${u.ratio}`,
    );
    expect(u).toMatchObject({ snapshots: 20, branches: 10 });
    expect(u.logicalBytes).toBeGreaterThan(largest * 10);
    expect(u.ratio).toBeLessThanOrEqual(1.3);
    expect(u.store!.storedBytes / largest).toBeLessThanOrEqual(1.3);
  });

  it('10 trimmed branches too still fit in 1.3x: their page-outs are shared, not per branch', async () => {
    const before = await diskUsage({ catalog: env.catalog, store: env.store, includeStore: true });
    for (let k = 1; k <= 10; k++) await branchFromSnapshot({ ...branchOptions(), snapshot: `grow-${k}`, name: `trimmed-${k}` });
    const u = await diskUsage({ catalog: env.catalog, store: env.store, includeStore: true });
    const added = u.store!.storedBytes - before.store!.storedBytes;
    console.log(`[storage] + 10 trimmed branches: stored +${added} B (${ratioOf(added)}x the largest file); store total ${ratioOf(u.store!.storedBytes)}x`);
    expect(u.branches).toBe(20);
    expect(u.storedBytes).toBe(before.storedBytes); // snapshots untouched
    // originals are stored lifted (ids out), so a branch's packs are its siblings'
    expect(u.store!.storedBytes / largest).toBeLessThanOrEqual(1.3);
  });
});
