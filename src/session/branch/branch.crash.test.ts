/**
 * A branch process killed at any moment (SIGKILL, no cleanup) leaves the agent's folder holding
 * only complete sessions: either nothing, or the whole branch byte for byte; never a partial
 * `.jsonl`, and no hidden staging entry either (staging lives under `$CTXVM_HOME/tmp`). What it
 * left there, `ctxvm gc --grace 0` (collectSessionGarbage, as the CLI calls it) removes at once,
 * with the objects its lease held. The child is a real Node process running the library, bundled on the fly with
 * rolldown (a dependency of vite); the test skips with a reason where rolldown is unavailable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLAUDE_CORPUS_DIR, REPO_ROOT, generateClaudeSession, generatorSkipReason, printSkipReason } from '../../../test/support/corpus.js';
import { createFsObjectStore } from '../../store/drivers/objects-fs.js';
import { openWarmDatabase } from '../../store/warm/open.js';
import { collectSessionGarbage } from '../dag/maintenance.js';
import { createSqlSessionCatalog } from '../dag/sql-catalog.js';
import { validateSession } from '../session.js';
import { branchSession } from './branch.js';
import { countingUuids, createBranchTestEnv, type BranchTestEnv } from './testing.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const SUBAGENT = join(CLAUDE_CORPUS_DIR, 'aforge', 'projects', '-root', 'a8117384-8a7e-445b-9af0-ab182dd62c51', 'subagents');
const NEW_ID = 'c4a5c4a5-0000-4000-8000-000000000001';
const CWD = '/home/dev/crash-test';
const KILLS = 10;

let rolldown: typeof import('rolldown') | undefined;
try {
  rolldown = await import('rolldown');
} catch {
  rolldown = undefined;
}
const skip = generatorSkipReason() ?? (rolldown ? undefined : 'rolldown not installed: cannot bundle the child process; crash test skipped');
printSkipReason(skip);

/** The child: branches `source` with a fixed id and uuids, then prints "done". */
const CHILD = `
import { branchSession } from ${JSON.stringify(join(HERE, 'branch.ts'))};
import { countingUuids } from ${JSON.stringify(join(HERE, 'testing.ts'))};
import { createFsObjectStore } from ${JSON.stringify(join(HERE, '..', '..', 'store', 'drivers', 'objects-fs.ts'))};
const [source, root, newId, cwd] = process.argv.slice(2);
process.stdout.write('start\\n');
await branchSession({
  source, newId, cwd, newUuid: countingUuids(), measure: false,
  store: createFsObjectStore({ root: root + '/ctxvm/objects', durability: 'deferred' }),
  claudeConfigDir: root + '/claude', codexHome: root + '/codex', scratchDir: root + '/ctxvm/tmp',
});
process.stdout.write('done\\n');
`;

let env: BranchTestEnv;
let childJs: string;
let source: string;
let reference: Map<string, Buffer>;

/** Files under `dir` (relative paths, sorted) with their bytes; hidden entries (staging) left out. */
async function visibleFiles(dir: string, prefix = ''): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  if (!existsSync(dir)) return out;
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.')) continue;
    const rel = prefix + e.name;
    if (e.isDirectory()) for (const [k, v] of await visibleFiles(join(dir, e.name), rel + '/')) out.set(k, v);
    else out.set(rel, await readFile(join(dir, e.name)));
  }
  return out;
}

async function namesIn(dir: string): Promise<string[]> {
  return existsSync(dir) ? readdir(dir) : [];
}

function runChild(root: string, killAfterMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, [childJs, source, root, NEW_ID, CWD], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      if (code !== 0 && signal === null) reject(new Error(`child failed (${code}): ${stderr}`));
      else resolve({ code, signal, stdout, ms: Date.now() - t0 });
    });
  });
}

describe.skipIf(!!skip)('a branch process killed mid-branch', () => {
  beforeAll(async () => {
    env = await createBranchTestEnv('ctxvm-crash-');
    // the child is bundled next to node_modules so anything it loads lazily resolves
    const cache = join(REPO_ROOT, 'node_modules', '.cache', 'ctxvm-tests');
    await mkdir(cache, { recursive: true });
    const entry = join(env.dir, 'child.ts');
    await writeFile(entry, CHILD);
    childJs = join(cache, `branch-child-${process.pid}.mjs`);
    await rolldown!.build({ input: entry, platform: 'node', resolve: { extensionAlias: { '.js': ['.ts', '.js'] } }, output: { file: childJs, format: 'esm' }, logLevel: 'silent' });

    // a session of a few MB with a subagent folder beside it
    const proj = join(env.dir, 'source');
    await mkdir(proj, { recursive: true });
    const generated = generateClaudeSession(join(proj, 'generated.jsonl'), { turns: 40, seed: 11, images: true });
    const sid = /"sessionId":"([^"]+)"/.exec(await readFile(generated, 'utf8'))![1]!;
    source = join(proj, `${sid}.jsonl`);
    await cp(generated, source);
    if (existsSync(SUBAGENT)) await cp(SUBAGENT, join(proj, sid, 'subagents'), { recursive: true });
    await mkdir(join(proj, sid, 'tool-results'), { recursive: true });
    await writeFile(join(proj, sid, 'tool-results', 'out.txt'), 'x'.repeat(100_000));

    const r = await branchSession({
      source,
      newId: NEW_ID,
      cwd: CWD,
      newUuid: countingUuids(),
      measure: false,
      store: env.store,
      claudeConfigDir: join(env.dir, 'reference', 'claude'),
      codexHome: join(env.dir, 'reference', 'codex'),
      scratchDir: env.scratchDir,
    });
    expect((await validateSession(r.path)).valid).toBe(true);
    reference = await visibleFiles(join(env.dir, 'reference', 'claude', 'projects'));
    expect([...reference.keys()].some((k) => k.endsWith(`${NEW_ID}.jsonl`))).toBe(true);
  }, 240_000);
  afterAll(async () => {
    if (childJs) await rm(childJs, { force: true });
    await env?.cleanup();
  });

  it('leaves nothing, or the complete branch, and an intact store', async () => {
    // an unkilled child writes exactly the reference
    const full = await runChild(join(env.dir, 'full'));
    expect(full.stdout).toContain('done');
    expect(await visibleFiles(join(env.dir, 'full', 'claude', 'projects'))).toEqual(reference);

    const outcomes = { nothing: 0, staging: 0, sideOnly: 0, complete: 0 };
    let stagingRemoved = 0;
    // kill points spread over the run, the last one after it (a branch that finished is complete)
    for (let i = 0; i <= KILLS; i++) {
      const root = join(env.dir, `kill-${i}`);
      const run = await runChild(root, i === KILLS ? full.ms * 3 : Math.round((full.ms * (i + 0.5)) / KILLS));
      const projectDir = join(root, 'claude', 'projects', CWD.replace(/[^a-zA-Z0-9]/g, '-'));
      // nothing hidden in the agent's folder, whenever the kill came
      if (existsSync(projectDir)) expect((await readdir(projectDir)).filter((n) => n.startsWith('.')), `after kill ${i}`).toEqual([]);
      const seen = await visibleFiles(join(root, 'claude', 'projects'));
      const mainKey = [...reference.keys()].find((k) => k.endsWith('.jsonl') && !k.includes('/subagents/'))!;
      for (const [k, bytes] of seen) {
        // every visible file is a complete copy of the reference file
        expect(reference.has(k), `${k} after kill ${i}`).toBe(true);
        expect(bytes.equals(reference.get(k)!), `${k} after kill ${i} is partial`).toBe(true);
      }
      const scratch = join(root, 'ctxvm', 'tmp');
      const staged = (await namesIn(scratch)).filter((n) => n.startsWith('staging-'));
      if (seen.has(mainKey)) {
        expect(seen).toEqual(reference);
        expect((await validateSession(join(root, 'claude', 'projects', mainKey))).valid).toBe(true);
        outcomes.complete++;
      } else if (seen.size > 0) {
        // killed between the two renames: the side folder is complete, the session not yet there
        expect([...seen.keys()].sort()).toEqual([...reference.keys()].filter((k) => k !== mainKey).sort());
        outcomes.sideOnly++;
      } else {
        if (staged.length > 0) outcomes.staging++;
        else outcomes.nothing++;
        expect(run.signal === 'SIGKILL' || run.stdout.includes('done')).toBe(true);
      }
      // the object store survives too: every object reads back and matches its hash
      const store = createFsObjectStore({ root: join(root, 'ctxvm', 'objects') });
      for await (const h of store.list()) await store.verify(h);
      // `ctxvm gc --grace 0` right away: the dead process's staging goes, and what its lease held
      const db = await openWarmDatabase({ db: join(root, 'ctxvm', 'ctxvm.db') });
      try {
        const gc = await collectSessionGarbage({ catalog: createSqlSessionCatalog(db), store, graceMs: 0, tempDirs: [projectDir], scratchDir: scratch });
        expect(gc.tempFiles).toBeGreaterThanOrEqual(staged.length);
      } finally {
        await db.close();
      }
      stagingRemoved += staged.length;
      expect(await namesIn(scratch), `scratch after kill ${i} and gc`).toEqual([]);
      for await (const h of store.list()) expect((await store.holders(h)).filter((x) => x.startsWith('lease:')), `object ${h} after kill ${i} and gc`).toEqual([]);
    }
    console.log(`kills at ${KILLS} points over ${full.ms} ms: ${JSON.stringify(outcomes)}; staging folders gc removed: ${stagingRemoved}`);
    // the kills landed while the branch was being built, not only before or after
    expect(outcomes.staging).toBeGreaterThan(0);
    expect(outcomes.complete).toBeGreaterThan(0);
  }, 600_000);
});
