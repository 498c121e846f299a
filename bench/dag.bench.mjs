// `node bench/dag.bench.mjs` (or BENCH=dag npm run bench): the snapshot DAG's two targets.
//
// 1. Storage: one generated Claude Code session (BENCH_DAG_MB, default 20 MiB) taken at 10 sizes
//    as it grows (prefixes cut just before a prompt), snapshotted each time; then 10 branches of
//    those snapshots (new ids on every line) each snapshotted in turn; then 10 trimmed branches.
//    Reported: logical bytes, bytes in ctxvm's object store, and their ratio to the largest
//    session file (targets: snapshots + branches <= 1.3x, and still <= 1.3x with the trimmed
//    branches' page-outs; a plain copy per snapshot is ~10x), and `ctxvm du --json`'s own ratio.
// 2. Listing: BENCH_DAG_SESSIONS (default 1000) session files copied from ../shared/corpus into
//    temp agent folders; `ctxvm sessions --json` wall time cold (empty index) and warm (median
//    of BENCH_RUNS, target < 0.5 s), after 10 files grew, next to `node -e ''` and
//    `ctxvm --version` (process start and module loading) and the library call alone.
//
// 3. Disk: real corpus sessions of 2.5-4 MB (BENCH_DAG_DISK: paths, ','-separated), 10 growing
//    snapshots + 10 trimmed branches each; `$CTXVM_HOME` on disk (as `du` counts it) before and
//    after `ctxvm gc`, over the session's gzip size (target after gc <= 1.3x). The pack settings
//    were tuned on the first session (tune half); the others are the check half.
//
// Needs dist/ (`npm run build`) and ../shared. Prints tables; exits 1 when a target is missed.
// BENCH_DAG_PARTS=storage, =listing or =disk runs one part.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { median, requireDist, root, sharedDir, table } from './lib.mjs';

requireDist();
const gen = join(sharedDir, 'tools', 'gen-claude-session.mjs');
const corpus = join(sharedDir, 'corpus', 'sessions');
if (!existsSync(gen) || !existsSync(corpus)) {
  console.error(`bench:dag needs ${gen} and ${corpus} (../shared next to the repository)`);
  process.exit(2);
}
const dist = (p) => import(join(root, 'dist', p));
const { openWarmDatabase } = await dist('store/warm/open.js');
const { createSqlSessionCatalog } = await dist('session/dag/sql-catalog.js');
const { createFsObjectStore } = await dist('store/drivers/objects-fs.js');
const { createSnapshot } = await dist('session/dag/snapshot.js');
const { branchFromSnapshot } = await dist('session/dag/branch-snapshot.js');
const { diskUsage } = await dist('session/dag/maintenance.js');
const { discoverSessions } = await dist('session/discovery/discover.js');
const { encodeClaudeProjectDir } = await dist('session/discovery/resolve.js');

const MB = Number(process.env.BENCH_DAG_MB ?? 20);
const SESSIONS = Number(process.env.BENCH_DAG_SESSIONS ?? 1000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const MAIN = join(root, 'dist', 'cli', 'main.js');
const PARTS = (process.env.BENCH_DAG_PARTS ?? 'storage,disk,listing').split(',');
const mib = (n) => (n / 1048576).toFixed(2);
let failed = false;

function homes(name) {
  const dir = mkdtempSync(join(tmpdir(), `ctxvm-bench-dag-${name}-`));
  const env = { CTXVM_HOME: join(dir, 'ctxvm'), CLAUDE_CONFIG_DIR: join(dir, 'claude'), CODEX_HOME: join(dir, 'codex') };
  for (const d of Object.values(env)) mkdirSync(d, { recursive: true });
  return { dir, env };
}

/** Prefixes at 10%, 20%, ... moved forward to the next prompt the person typed. */
function growingPrefixes(data, steps = 10) {
  const isPrompt = (line) => {
    try {
      const v = JSON.parse(line);
      if (v.type !== 'user' || v.isMeta || v.isSidechain || v.isCompactSummary) return false;
      const c = v.message?.content;
      return typeof c === 'string' ? !c.startsWith('<') : Array.isArray(c) && c.length > 0 && c.every((b) => b?.type === 'text' || b?.type === 'image');
    } catch {
      return false;
    }
  };
  const out = [];
  for (let k = 1; k < steps; k++) {
    let at = data.lastIndexOf(0x0a, Math.floor((data.length * k) / steps)) + 1;
    while (at < data.length) {
      const end = data.indexOf(0x0a, at);
      if (isPrompt(data.toString('utf8', at, end === -1 ? data.length : end))) break;
      at = end === -1 ? data.length : end + 1;
    }
    out.push(data.subarray(0, at));
  }
  out.push(data);
  return out;
}

// ───────────────────────────── 1. storage ─────────────────────────────
if (PARTS.includes('storage')) {
  const { dir, env } = homes('storage');
  const source = join(dir, 'gen.jsonl');
  execFileSync(process.execPath, [gen, '--target-mb', String(MB), '--compactions', 'auto', '--seed', '5', '--out', source]);
  const data = readFileSync(source);
  const project = /"cwd":"([^"]+)"/.exec(data.toString('utf8', 0, 1 << 16))[1];
  const sessionId = randomUUID();
  const folder = join(env.CLAUDE_CONFIG_DIR, 'projects', encodeClaudeProjectDir(project));
  mkdirSync(folder, { recursive: true });
  const path = join(folder, `${sessionId}.jsonl`);
  const db = await openWarmDatabase({ db: join(env.CTXVM_HOME, 'ctxvm.db') });
  const catalog = createSqlSessionCatalog(db);
  const store = createFsObjectStore({ root: join(env.CTXVM_HOME, 'objects'), durability: 'deferred' });
  const largest = data.length;
  const rows = [];
  const measure = async (stage, seconds) => {
    const u = await diskUsage({ catalog, store, includeStore: true });
    rows.push({
      stage,
      snapshots: u.snapshots,
      branches: u.branches,
      'logical MiB': mib(u.logicalBytes),
      'stored MiB': mib(u.store.storedBytes),
      'stored/largest': (u.store.storedBytes / largest).toFixed(3),
      seconds: seconds.toFixed(1),
    });
    return u;
  };
  const branchOptions = { catalog, store, claudeConfigDir: env.CLAUDE_CONFIG_DIR, codexHome: env.CODEX_HOME, scratchDir: join(env.CTXVM_HOME, 'tmp'), measure: false };

  let t0 = performance.now();
  for (const [k, prefix] of growingPrefixes(data).entries()) {
    writeFileSync(path, prefix);
    await createSnapshot({ catalog, store, source: { agent: 'claude', sessionId, path, project }, name: `grow-${k + 1}` });
  }
  await measure('10 snapshots of a growing session', (performance.now() - t0) / 1000);
  t0 = performance.now();
  for (let k = 1; k <= 10; k++) {
    const b = await branchFromSnapshot({ ...branchOptions, snapshot: `grow-${k}`, name: `branch-${k}`, trim: false });
    await createSnapshot({ catalog, store, source: { agent: 'claude', sessionId: b.sessionId, path: b.path, project }, name: `branch-${k}-snap` });
  }
  const target = await measure('+ 10 branches (new ids), each snapshotted', (performance.now() - t0) / 1000);
  t0 = performance.now();
  for (let k = 1; k <= 10; k++) await branchFromSnapshot({ ...branchOptions, snapshot: `grow-${k}`, name: `trimmed-${k}` });
  const withTrimmed = await measure('+ 10 trimmed branches (paged-out payloads)', (performance.now() - t0) / 1000);
  await db.close();
  const du = JSON.parse(execFileSync(process.execPath, [MAIN, 'du', '--json'], { env: { ...process.env, ...env }, encoding: 'utf8' }));

  console.log(`\nDAG storage: one session of ${mib(largest)} MiB (largest file) at 10 sizes, branched`);
  table(rows);
  const ratio = target.store.storedBytes / largest;
  console.log(`target: snapshots + branches stored <= 1.3x the largest file: ${ratio.toFixed(3)}x ${ratio <= 1.3 ? 'OK' : 'MISSED'}`);
  console.log(`ctxvm du --json: logicalBytes ${du.logicalBytes}, storedBytes ${du.storedBytes}, ratio ${du.ratio} (stored / largest snapshot), savings ${du.savings}x`);
  if (ratio > 1.3) failed = true;
  // trimmed branches share their page-out packs with one another (originals are stored lifted)
  const trimmedRatio = withTrimmed.store.storedBytes / largest;
  console.log(`target: with 10 trimmed branches too, stored <= 1.3x the largest file: ${trimmedRatio.toFixed(3)}x ${trimmedRatio <= 1.3 ? 'OK' : 'MISSED'}`);
  if (trimmedRatio > 1.3) failed = true;
  rmSync(dir, { recursive: true, force: true });
}

// ───────────────────────────── 3. disk ─────────────────────────────
if (PARTS.includes('disk')) {
  const { measureSessionOnDisk } = await import('./dag-disk.mjs');
  const cc = join(corpus, 'claude-code');
  const defaults = [
    'bradymholt__dotfiles/.claude/projects/-Users-bholt-dev-evergreen/354b2588-2a5c-43d7-b678-e95a4a87bd2a.jsonl',
    'leejunha781__Codex/.claude/projects/C--Users-namma--claude/0165c5fb-8d54-49b0-87ea-94460e24cdd6.jsonl',
    'austinweitao__claude-backup/projects/-home-cwtrocks-avd/sessions/2764ab64-a860-4e1a-a7be-cd583680b76b.jsonl',
    'SWORDIntel__claude-backups/config/projects/-home-ubuntu-Documents-Claude/5f2d5220-e018-4795-8fcb-23e42b068058.jsonl',
  ].map((p) => join(cc, p));
  const paths = (process.env.BENCH_DAG_DISK ? process.env.BENCH_DAG_DISK.split(',') : defaults).filter((p) => existsSync(p));
  const rows = [];
  for (const [i, p] of paths.entries()) {
    const r = await measureSessionOnDisk(p, i === 0 ? 'tune' : 'check');
    rows.push(r.row);
    if (r.ratio > 1.3) failed = true;
  }
  console.log('\nDAG on disk: 10 snapshots of a growing real session + 10 trimmed branches, $CTXVM_HOME / gzip -6 of the session');
  table(rows);
  console.log(`target: after gc <= 1.3x the session's gzip size on every session: ${rows.every((r) => parseFloat(r['disk after gc']) <= 1.3) ? 'OK' : 'MISSED'}`);
}

// ───────────────────────────── 2. listing ─────────────────────────────
if (PARTS.includes('listing')) {
  const { dir, env } = homes('sessions');
  const sources = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'subagents') walk(p);
      } else if (e.name.endsWith('.jsonl') && !e.name.startsWith('agent-')) sources.push({ path: p, codex: e.name.startsWith('rollout-') });
    }
  };
  walk(corpus);
  let bytes = 0;
  for (let i = 0; i < SESSIONS; i++) {
    const src = sources[i % sources.length];
    const content = readFileSync(src.path);
    const id = randomUUID();
    let target;
    if (src.codex) {
      const day = join(env.CODEX_HOME, 'sessions', '2025', '10', String(1 + (i % 28)).padStart(2, '0'));
      mkdirSync(day, { recursive: true });
      target = join(day, `rollout-2025-10-01T00-00-00-${id}.jsonl`);
    } else {
      const folder = join(env.CLAUDE_CONFIG_DIR, 'projects', `-work-project-${i % 40}`);
      mkdirSync(folder, { recursive: true });
      target = join(folder, `${id}.jsonl`);
    }
    writeFileSync(target, content);
    bytes += content.length;
  }
  // The child reports its own CPU time (user + system) on exit: unlike wall time, it barely
  // depends on how busy the machine is.
  const CPU_REPORT = 'data:text/javascript,process.on("exit",()=>{const c=process.cpuUsage();process.stderr.write("\\nCPU_MS "+(c.user+c.system)/1000+"\\n")})';
  const wall = (args) => {
    const t = performance.now();
    const r = spawnSync(process.execPath, ['--import', CPU_REPORT, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 64 << 20 });
    const seconds = (performance.now() - t) / 1000;
    if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}`);
    return { seconds, cpu: Number(/CPU_MS ([\d.]+)/.exec(r.stderr)?.[1] ?? NaN) / 1000, stdout: r.stdout };
  };
  const repeat = (args) => {
    const runs = Array.from({ length: RUNS }, () => wall(args));
    return { seconds: median(runs.map((r) => r.seconds)), cpu: median(runs.map((r) => r.cpu)) };
  };
  const nodeFloor = repeat(['-e', '']);
  const version = repeat([MAIN, '--version']);
  const cold = wall([MAIN, 'sessions', '--json']);
  const listed = JSON.parse(cold.stdout).length;
  const warmRun = repeat([MAIN, 'sessions', '--json']);
  const warm = warmRun.seconds;
  // 10 sessions grow by one line each: only they are read, and only from their old end
  const claudeFiles = readdirSync(join(env.CLAUDE_CONFIG_DIR, 'projects', '-work-project-0')).slice(0, 10);
  for (const f of claudeFiles) appendFileSync(join(env.CLAUDE_CONFIG_DIR, 'projects', '-work-project-0', f), JSON.stringify({ type: 'user', message: { role: 'user', content: 'more' } }) + '\n');
  const grown = wall([MAIN, 'sessions', '--json']);
  // the library call alone, warm, in this process
  const db = await openWarmDatabase({ db: join(env.CTXVM_HOME, 'ctxvm.db') });
  const catalog = createSqlSessionCatalog(db);
  const lib = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await discoverSessions({ catalog, claudeConfigDir: env.CLAUDE_CONFIG_DIR, codexHome: env.CODEX_HOME });
    lib.push((performance.now() - t) / 1000);
  }
  await db.close();
  console.log(`\nctxvm sessions over ${listed} session files (${mib(bytes)} MiB): wall and CPU time of the CLI process (median of ${RUNS}); load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} CPUs`);
  const row = (run, r) => ({ run, 'wall s': r.seconds.toFixed(3), 'cpu s': Number.isFinite(r.cpu) ? r.cpu.toFixed(3) : '-' });
  table([
    row("node -e '' (process start floor)", nodeFloor),
    row('ctxvm --version (start + module loading)', version),
    row('ctxvm sessions --json, cold (empty index)', cold),
    row('ctxvm sessions --json, warm', warmRun),
    row('ctxvm sessions --json, after 10 files grew', grown),
    { run: 'discoverSessions() alone, warm, in-process', 'wall s': median(lib).toFixed(3), 'cpu s': '-' },
  ]);
  console.log(`target: warm listing of ${listed} files < 0.5 s: ${warm.toFixed(3)} s ${warm < 0.5 ? 'OK' : 'MISSED'}`);
  if (listed !== SESSIONS) {
    console.error(`listed ${listed} sessions, expected ${SESSIONS}`);
    failed = true;
  }
  if (warm >= 0.5) failed = true;
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
