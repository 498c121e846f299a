/**
 * Fault injection on the storage stack with real child processes: a writer doing what `ctxvm
 * trim` does (snapshot, then a trimmed branch) is killed with SIGKILL at random moments, and
 * runs alongside `gc` with no grace period. Afterwards one gc must leave a store in which every
 * committed snapshot materializes (checked against its manifest), every committed branch
 * restores, no object is held by a writer that is gone, and no scratch, staging, lease or temp
 * file is left. Prints what was tried and what was lost.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleScript } from '../support/bundle-script.js';
import { REPO_ROOT, generateClaudeSession, generatorSkipReason, printSkipReason } from '../support/corpus.js';
import { createFsObjectStore } from '../../src/store/drivers/objects-fs.js';
import { openWarmDatabase } from '../../src/store/warm/open.js';
import { createSqlSessionCatalog } from '../../src/session/dag/sql-catalog.js';
import { collectSessionGarbage } from '../../src/session/dag/maintenance.js';
import { loadManifest } from '../../src/session/dag/manifest.js';
import { materializeSnapshot } from '../../src/session/dag/materialize.js';
import { restoreSession } from '../../src/session/trim/restore.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const RUNS = 14;

let rolldown: typeof import('rolldown') | undefined;
try {
  rolldown = await import('rolldown');
} catch {
  rolldown = undefined;
}
const skip = generatorSkipReason() ?? (rolldown ? undefined : 'rolldown not installed: the child process cannot be bundled; storage fault test skipped');
printSkipReason(skip);

const CHILD = `
import { join } from 'node:path';
import { createFsObjectStore } from ${JSON.stringify(join(SRC, 'store/drivers/objects-fs.ts'))};
import { openWarmDatabase } from ${JSON.stringify(join(SRC, 'store/warm/open.ts'))};
import { createSqlSessionCatalog } from ${JSON.stringify(join(SRC, 'session/dag/sql-catalog.ts'))};
import { createSnapshot } from ${JSON.stringify(join(SRC, 'session/dag/snapshot.ts'))};
import { branchFromSnapshot } from ${JSON.stringify(join(SRC, 'session/dag/branch-snapshot.ts'))};
const [source, home, name, sessionId] = process.argv.slice(2);
const db = await openWarmDatabase({ db: join(home, 'ctxvm', 'ctxvm.db') });
const catalog = createSqlSessionCatalog(db);
const store = createFsObjectStore({ root: join(home, 'ctxvm', 'objects'), durability: 'deferred' });
// what \`ctxvm trim\` does: the snapshot is published with its branch, never alone
const snap = await createSnapshot({ catalog, store, source: { agent: 'claude', sessionId, path: source, project: '/work/faults' }, name, tags: ['trim'], deferCommit: true });
await branchFromSnapshot({ catalog, store, snapshot: snap.id, unpublished: snap.toPublish, name: name + '-trimmed', claudeConfigDir: join(home, 'claude'), codexHome: join(home, 'codex'), scratchDir: join(home, 'ctxvm', 'tmp'), measure: false });
await db.close();
process.stdout.write('done\\n');
`;

let dir: string;
let childJs: string;
let source: string;
let sessionId: string;

function runChild(name: string, killAfterMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, [childJs, source, dir, name, sessionId], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - t0 });
    });
  });
}

async function gcOnce(graceMs = 0) {
  const db = await openWarmDatabase({ db: join(dir, 'ctxvm', 'ctxvm.db') });
  try {
    return await collectSessionGarbage({
      catalog: createSqlSessionCatalog(db),
      store: createFsObjectStore({ root: join(dir, 'ctxvm', 'objects'), durability: 'deferred' }),
      graceMs,
      tempDirs: [join(dir, 'claude', 'projects', '-work-faults')],
      scratchDir: join(dir, 'ctxvm', 'tmp'),
    });
  } finally {
    await db.close();
  }
}

async function namesIn(path: string): Promise<string[]> {
  return existsSync(path) ? readdir(path) : [];
}

describe.skipIf(!!skip)('storage under kill -9 and gc --grace 0', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(REPO_ROOT, 'node_modules', '.cache', 'ctxvm-faults-'));
    const entry = join(dir, 'child.ts');
    await writeFile(entry, CHILD);
    childJs = await bundleScript(entry, 'storage-faults-child');
    await mkdir(join(dir, 'src'), { recursive: true });
    const generated = generateClaudeSession(join(dir, 'src', 'generated.jsonl'), { turns: 30, seed: 23, images: true });
    sessionId = /"sessionId":"([^"]+)"/.exec(await readFile(generated, 'utf8'))![1]!;
    source = join(dir, 'src', `${sessionId}.jsonl`);
    await cp(generated, source);
  }, 240_000);
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('keeps every committed snapshot and branch, frees what the dead left, never fails a live writer', async () => {
    const full = await runChild('full');
    expect(full.stdout, full.stderr).toContain('done');
    const tally = { runs: 0, killed: 0, completed: 0, failedLive: 0 };
    for (let i = 0; i < RUNS; i++) {
      tally.runs++;
      const kill = i % 3 !== 2; // every third run is left to finish, with a gc racing it
      const killAt = Math.round(full.ms * (0.05 + 0.9 * Math.random()));
      const [run] = await Promise.all([
        runChild(`run-${i}`, kill ? killAt : undefined),
        (async () => {
          // gc with no grace period while the writer runs
          await new Promise((r) => setTimeout(r, Math.round(full.ms * Math.random() * 0.8)));
          await gcOnce(0);
        })(),
      ]);
      if (run.signal === 'SIGKILL') tally.killed++;
      else if (run.code === 0) tally.completed++;
      else {
        tally.failedLive++;
        console.error(`live writer failed: ${run.stderr}`);
      }
    }
    await gcOnce(0);

    // what is left: every committed snapshot materializes, every branch restores
    const db = await openWarmDatabase({ db: join(dir, 'ctxvm', 'ctxvm.db') });
    const catalog = createSqlSessionCatalog(db);
    const store = createFsObjectStore({ root: join(dir, 'ctxvm', 'objects') });
    let lost = 0;
    const snapshots = await catalog.listSnapshots();
    for (const s of snapshots) {
      const out = await mkdtemp(join(dir, 'check-'));
      try {
        await materializeSnapshot(store, await loadManifest(store, s.manifestHash), out, { mainOnly: true });
      } catch (error) {
        lost++;
        console.error(`snapshot ${s.name}: ${String(error)}`);
      } finally {
        await rm(out, { recursive: true, force: true });
      }
    }
    const branches = await catalog.listBranches();
    for (const b of branches) {
      try {
        await restoreSession({ input: b.path, output: join(dir, 'restored.jsonl'), store });
      } catch (error) {
        lost++;
        console.error(`branch ${b.name}: ${String(error)}`);
      }
    }
    // nothing held by writers that are gone, nothing unreferenced, no leftovers
    let leaseHeld = 0;
    let unreferenced = 0;
    for await (const hash of store.list()) {
      const holders = await store.holders(hash);
      if (holders.length === 0) unreferenced++;
      if (holders.some((h) => h.startsWith('lease:'))) leaseHeld++;
      await store.verify(hash);
    }
    const leftovers = [
      ...(await namesIn(join(dir, 'ctxvm', 'tmp'))),
      ...(await namesIn(join(dir, 'ctxvm', 'objects', 'leases'))),
      ...(await namesIn(join(dir, 'ctxvm', 'objects', '.staging'))),
      ...(await namesIn(join(dir, 'ctxvm', 'objects', 'packs'))).filter((n) => n.startsWith('.')),
      ...(await namesIn(join(dir, 'claude', 'projects', '-work-faults'))).filter((n) => n.startsWith('.')),
    ];
    const withoutBranch = snapshots.filter((s) => s.tags.includes('trim') && !branches.some((b) => b.snapshotId === s.id)).length;
    await db.close();
    console.table([{ ...tally, snapshots: snapshots.length, branches: branches.length, lost, leaseHeld, unreferenced, leftovers: leftovers.length, 'trim snapshots without branch': withoutBranch }]);
    expect(tally.failedLive).toBe(0);
    expect(lost).toBe(0);
    expect(leaseHeld).toBe(0);
    expect(unreferenced).toBe(0);
    expect(leftovers).toEqual([]);
    expect(withoutBranch).toBe(0);
    expect(tally.completed).toBeGreaterThan(0);
    expect(tally.killed).toBeGreaterThan(0);
  }, 900_000);
});
