/**
 * A `ctxvm snapshot` killed with SIGKILL at any point leaves no snapshot row pointing at missing
 * objects and no corrupt store: the built CLI (`dist/cli/main.js`, run `npm run build` first) is
 * started on generated sessions and killed at several fractions of the time a full snapshot
 * takes; after each kill every published snapshot is complete, `ctxvm gc` releases what the
 * killed writers referenced, and the same snapshot can be taken again.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadManifest } from '../../src/session/dag/manifest.js';
import { materializeSnapshot } from '../../src/session/dag/materialize.js';
import { createDagEnv, type DagEnv } from '../support/dag-env.js';
import { REPO_ROOT, generateClaudeSession, generatorSkipReason, printSkipReason } from '../support/corpus.js';

const MAIN = join(REPO_ROOT, 'dist', 'cli', 'main.js');
const skip = generatorSkipReason();
printSkipReason(skip);

let env: DagEnv;
beforeAll(async () => {
  if (skip) return;
  if (!existsSync(MAIN)) throw new Error(`${MAIN} not found: run \`npm run build\` before the CLI tests`);
  env = await createDagEnv();
});
afterAll(async () => {
  await env?.close();
});

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  ms: number;
}

function ctxvm(args: string[], killAfterMs?: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, [MAIN, ...args], { cwd: env.root, env: { ...process.env, ...env.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.resume();
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, ms: Date.now() - started });
    });
  });
}

/** Every published snapshot names only objects that exist (and, with `rebuild`, rebuilds its file exactly). */
async function checkPublishedSnapshots(rebuild = false): Promise<number> {
  const snapshots = await env.catalog.listSnapshots();
  for (const s of snapshots) {
    for (const o of await env.catalog.snapshotObjects(s.id)) expect(await env.store.has(o.hash), `object ${o.hash} of ${s.name}`).toBe(true);
    if (!rebuild) continue;
    const manifest = await loadManifest(env.store, s.manifestHash);
    const [main] = await materializeSnapshot(env.store, manifest, join(env.root, 'check', s.id), { mainOnly: true, sync: false });
    expect((await readFile(main!.path)).equals(await readFile(s.sourcePath))).toBe(true);
  }
  return snapshots.length;
}

describe.skipIf(!!skip)('a killed snapshot', () => {
  it('never leaves a published snapshot with missing objects, and gc cleans up after it', async () => {
    const session = async (seed: number) => {
      const id = `${String(seed).padStart(8, '0')}-0000-4000-8000-${String(seed).padStart(12, '0')}`;
      const path = join(env.root, `gen-${seed}.jsonl`);
      generateClaudeSession(path, { turns: 40, seed, profile: 'heavy-tools' });
      return env.putClaudeSession('/work/crash', id, await readFile(path));
    };
    const calibration = await ctxvm(['snapshot', 'full', '--session', await session(1), '--json']);
    expect(calibration.code).toBe(0);
    const fullMs = calibration.ms;
    type Outcome = 'published' | 'interrupted' | 'not started';
    const outcomes: Outcome[] = [];
    let attempts = 0;
    const attempt = async (delayMs: number): Promise<Outcome> => {
      const k = attempts++;
      const path = await session(k + 2);
      const run = await ctxvm(['snapshot', `crash-${k}`, '--session', path, '--json'], delayMs);
      const published = (await env.catalog.findSnapshot(`crash-${k}`)) !== undefined;
      const pending = (await env.catalog.listPendingSnapshots()).some((p) => p.name === `crash-${k}`);
      const outcome: Outcome = published ? 'published' : pending ? 'interrupted' : 'not started';
      outcomes.push(outcome);
      if (!published) expect(run.signal).toBe('SIGKILL');
      await checkPublishedSnapshots();
      return outcome;
    };
    const fractions = [0.15, 0.3, 0.45, 0.6, 0.75, 0.9];
    // the window in which a snapshot is pending is its last part, after the process has started:
    // on a loaded machine fixed fractions of one calibration run can all miss it, so the delay is
    // then narrowed between the last kill before it started and the first one after it published
    let before = 0;
    let after = Math.round(1.5 * fullMs);
    for (const f of fractions) {
      const delay = Math.round(f * fullMs);
      const outcome = await attempt(delay);
      if (outcome === 'not started') before = Math.max(before, delay);
      if (outcome === 'published') after = Math.min(after, delay);
    }
    for (let extra = 0; extra < 8 && !outcomes.includes('interrupted'); extra++) {
      const delay = Math.round((before + after) / 2);
      const outcome = await attempt(delay);
      if (outcome === 'not started') before = delay;
      if (outcome === 'published') after = delay;
    }
    console.log(`[crash] full snapshot ${fullMs} ms; outcomes at ${fractions.join(', ')} of it, then narrowed: ${outcomes.join(', ')}`);
    expect(outcomes).toContain('interrupted');

    const integrity = await env.db.get<{ integrity_check: string }>('PRAGMA integrity_check');
    expect(integrity?.integrity_check).toBe('ok');
    const gc = await ctxvm(['gc', '--grace', '0', '--json']);
    expect(gc.code).toBe(0);
    expect(JSON.parse(gc.stdout).abandonedSnapshots).toBe(outcomes.filter((o) => o === 'interrupted').length);
    expect(await env.catalog.listPendingSnapshots()).toEqual([]);
    const committed = new Set((await env.catalog.listSnapshots()).map((s) => `snapshot:${s.id}`));
    for await (const hash of env.store.list()) {
      for (const holder of await env.store.holders(hash)) if (holder.startsWith('snapshot:')) expect(committed.has(holder), `orphan holder ${holder}`).toBe(true);
    }
    const count = await checkPublishedSnapshots(true);
    expect(count).toBe(1 + outcomes.filter((o) => o === 'published').length);
    // the interrupted snapshots can be taken again under the same names
    for (const [k, o] of outcomes.entries()) {
      if (o === 'published') continue;
      const again = await ctxvm(['snapshot', `crash-${k}`, '--session', String(k + 2).padStart(8, '0'), '--json']);
      expect(again.code).toBe(0);
    }
    await checkPublishedSnapshots(true);
  }, 600_000);
});
