// The "on disk vs gzip" half of bench:dag (issue 22.6): real corpus sessions, each grown by
// prefixes (10 snapshots) and branched trimmed from every snapshot (10 trimmed branches), through
// the CLI's own code; `$CTXVM_HOME` measured as `du` counts it (files and folders, allocated
// blocks) before and after `ctxvm gc`, against `gzip -6` of the session.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { root } from './lib.mjs';

const dist = (p) => import(join(root, 'dist', p));

/** Prefixes at 10%, 20%, ... 100%, each ending at a line end. */
function prefixes(data, steps = 10) {
  const out = [];
  for (let k = 1; k <= steps; k++) out.push(k === steps ? data : data.subarray(0, data.lastIndexOf(0x0a, Math.floor((data.length * k) / steps)) + 1));
  return out;
}

/** Measures one session; returns a table row. */
export async function measureSessionOnDisk(sourcePath, role) {
  const { openWarmDatabase } = await dist('store/warm/open.js');
  const { createSqlSessionCatalog } = await dist('session/dag/sql-catalog.js');
  const { createFsObjectStore } = await dist('store/drivers/objects-fs.js');
  const { createSnapshot } = await dist('session/dag/snapshot.js');
  const { branchFromSnapshot } = await dist('session/dag/branch-snapshot.js');
  const { encodeClaudeProjectDir } = await dist('session/discovery/resolve.js');
  const { measureDisk } = await dist('session/dag/disk-bytes.js');
  const main = join(root, 'dist', 'cli', 'main.js');
  const data = readFileSync(sourcePath);
  const dir = mkdtempSync(join(tmpdir(), 'ctxvm-bench-disk-'));
  const env = { CTXVM_HOME: join(dir, 'ctxvm'), CLAUDE_CONFIG_DIR: join(dir, 'claude'), CODEX_HOME: join(dir, 'codex') };
  for (const d of Object.values(env)) mkdirSync(d, { recursive: true });
  try {
    const project = /"cwd":"([^"]+)"/.exec(data.toString('utf8', 0, 1 << 20))?.[1] ?? '/work/project';
    const sessionId = randomUUID();
    const folder = join(env.CLAUDE_CONFIG_DIR, 'projects', encodeClaudeProjectDir(project));
    mkdirSync(folder, { recursive: true });
    const path = join(folder, `${sessionId}.jsonl`);
    const dbPath = join(env.CTXVM_HOME, 'ctxvm.db');
    const db = await openWarmDatabase({ db: dbPath, parts: ['sessions'] }); // as the CLI's session commands open it
    const catalog = createSqlSessionCatalog(db);
    const objectsDir = join(env.CTXVM_HOME, 'objects');
    const store = createFsObjectStore({ root: objectsDir, durability: 'deferred' });
    const t0 = performance.now();
    for (const [k, p] of prefixes(data).entries()) {
      writeFileSync(path, p);
      await createSnapshot({ catalog, store, source: { agent: 'claude', sessionId, path, project }, name: `grow-${k + 1}` });
    }
    for (let k = 1; k <= 10; k++) {
      await branchFromSnapshot({ catalog, store, snapshot: `grow-${k}`, name: `trimmed-${k}`, claudeConfigDir: env.CLAUDE_CONFIG_DIR, codexHome: env.CODEX_HOME, scratchDir: join(env.CTXVM_HOME, 'tmp'), measure: false });
    }
    const writeSeconds = (performance.now() - t0) / 1000;
    await db.close();
    const before = await measureDisk(env.CTXVM_HOME, objectsDir, dbPath);
    const t1 = performance.now();
    execFileSync(process.execPath, [main, 'gc', '--json'], { env: { ...process.env, ...env }, encoding: 'utf8' });
    const gcSeconds = (performance.now() - t1) / 1000;
    const du = JSON.parse(execFileSync(process.execPath, [main, 'du', '--json'], { env: { ...process.env, ...env }, encoding: 'utf8' }));
    const gz = gzipSync(data).length;
    return {
      row: {
        half: role,
        session: basename(sourcePath).slice(0, 8),
        'MiB': (data.length / 1048576).toFixed(2),
        'gzip KiB': (gz / 1024).toFixed(0),
        'disk before gc': `${(before.total / gz).toFixed(2)}x`,
        'disk after gc': `${(du.diskBytes / gz).toFixed(2)}x`,
        'packs KiB': (du.disk.packs / 1024).toFixed(0),
        'db KiB': (du.disk.database / 1024).toFixed(0),
        'refs KiB': (du.disk.refs / 1024).toFixed(0),
        'loose KiB': (du.disk.looseObjects / 1024).toFixed(0),
        'write s': writeSeconds.toFixed(1),
        'gc s': gcSeconds.toFixed(1),
      },
      ratio: du.diskBytes / gz,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
