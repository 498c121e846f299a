/**
 * Keeping the DAG and its storage tidy: removing snapshots (`rm`), collecting garbage (`gc`) and
 * measuring storage (`du`).
 *
 * Removal deletes the catalog rows first and releases the objects afterwards, so no row ever
 * names a missing object; a crash in between leaves references held by a snapshot that no longer
 * exists, which gc releases (it treats every `snapshot:<id>` holder without a row, and without a
 * live writer, as an orphan).
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { cleanupStaleTempFiles } from '../../core/atomic-file.js';
import { cleanupStaleBranchStaging } from '../branch/staging.js';
import { processAlive } from '../../core/process-alive.js';
import { CtxvmError, NotFoundError } from '../../errors.js';
import type { GcResult, ObjectStore } from '../../store/object-store.js';
import type { BranchRecord, SessionCatalog, SnapshotRecord } from './catalog.js';
import { measureDisk, type DiskBytes } from './disk-bytes.js';
import { snapshotHolder } from './snapshot.js';
import { parseLeaseHolder } from '../branch/held-store.js';
import { cleanupDeadWriterFiles } from '../../store/drivers/objects-fs-gc.js';

/** Options of `removeSnapshot`. */
export interface RemoveSnapshotOptions {
  catalog: SessionCatalog;
  store: ObjectStore;
  /** Snapshot name, id or id prefix. */
  ref: string;
  /** Also remove the branches made from it and, recursively, the snapshots of those branches. */
  cascade?: boolean;
}

/** What `removeSnapshot` removed. */
export interface RemoveSnapshotResult {
  snapshots: { id: string; name: string }[];
  /** Branch records removed; their session files stay where the agent keeps them. */
  branches: { id: string; name: string; path: string }[];
  /** Object references released. */
  released: number;
}

/** Removes a snapshot; refuses (`E_CONFLICT`) while branches depend on it unless `cascade`. */
export async function removeSnapshot(options: RemoveSnapshotOptions): Promise<RemoveSnapshotResult> {
  const { catalog, store } = options;
  const target = await catalog.findSnapshot(options.ref);
  if (!target) throw new NotFoundError(`no snapshot named ${JSON.stringify(options.ref)}`, { hint: 'run `ctxvm list` to see the snapshots' });
  const [snapshots, branches] = await Promise.all([catalog.listSnapshots(), catalog.listBranches()]);
  const direct = branches.filter((b) => b.snapshotId === target.id);
  if (direct.length > 0 && !options.cascade) {
    throw new CtxvmError('E_CONFLICT', `snapshot "${target.name}" has ${direct.length} branch(es): ${direct.map((b) => b.name).join(', ')}`, {
      hint: 'remove with --cascade to delete those branch records and the snapshots taken of them too (their session files are kept)',
    });
  }
  // The closure: branches of a removed snapshot, and snapshots of those branches' sessions.
  const doomedSnapshots = new Map<string, SnapshotRecord>([[target.id, target]]);
  const doomedBranches = new Map<string, BranchRecord>();
  for (let changed = true; changed; ) {
    changed = false;
    for (const b of branches) {
      if (!doomedBranches.has(b.id) && doomedSnapshots.has(b.snapshotId)) {
        doomedBranches.set(b.id, b);
        changed = true;
      }
    }
    for (const s of snapshots) {
      if (!doomedSnapshots.has(s.id) && s.sourceBranchId && doomedBranches.has(s.sourceBranchId)) {
        doomedSnapshots.set(s.id, s);
        changed = true;
      }
      // later snapshots of a doomed branch's session belong to it too
      if (!doomedSnapshots.has(s.id) && [...doomedBranches.values()].some((b) => b.sessionId === s.sessionId)) {
        doomedSnapshots.set(s.id, s);
        changed = true;
      }
    }
  }
  const objectLists = await Promise.all([...doomedSnapshots.keys()].map(async (id) => ({ id, objects: await catalog.snapshotObjects(id) })));
  // Children before parents, so a successor relinks to a surviving ancestor.
  const order = [...doomedSnapshots.values()].sort((a, b) => b.createdAtMs - a.createdAtMs).map((s) => s.id);
  await catalog.deleteSnapshots(order, [...doomedBranches.keys()]);
  let released = 0;
  for (const { id, objects } of objectLists) {
    const holder = snapshotHolder(id);
    for (let i = 0; i < objects.length; i += 32) {
      const results = await Promise.all(objects.slice(i, i + 32).map((o) => store.unref(o.hash, holder)));
      released += results.filter(Boolean).length;
    }
  }
  await store.flush();
  return {
    snapshots: [...doomedSnapshots.values()].map((s) => ({ id: s.id, name: s.name })),
    branches: [...doomedBranches.values()].map((b) => ({ id: b.id, name: b.name, path: b.path })),
    released,
  };
}

/** A pending snapshot older than this is abandoned whatever its writer looks like, ms (1 day). */
export const PENDING_MAX_AGE_MS = 24 * 60 * 60_000;
/** Scratch folders left by a killed command whose name records no pid are removed after this long, ms (1 hour). */
export const STALE_SCRATCH_MS = 60 * 60_000;

export { processAlive } from '../../core/process-alive.js';

/** Options of `collectSessionGarbage`. */
export interface SessionGcOptions {
  catalog: SessionCatalog;
  store: ObjectStore;
  /** Keep unreferenced objects younger than this, ms (the object store's default when omitted). */
  graceMs?: number;
  /**
   * Agents' session folders, where an interrupted write may have left an atomic writer's
   * `.<name>.<random>.tmp` file, or a branch its hidden landing folder (a commit across file
   * systems) or, from an older ctxvm, its staging folder.
   */
  tempDirs?: readonly string[];
  /**
   * ctxvm's scratch folder (`$CTXVM_HOME/tmp`, where branches are staged): a subfolder named
   * with a pid (`<kind>-<pid>-<random>`) is removed once that process is gone, others after an hour.
   */
  scratchDir?: string;
  /** Clock, Unix ms (default `Date.now`). */
  now?: () => number;
  /** This host's name (default `os.hostname()`). */
  host?: string;
  /** Liveness check for a pid on this host (default `processAlive`). */
  isAlive?: (pid: number) => boolean;
}

/** What a gc run did. */
export interface SessionGcResult {
  /** Pending snapshots whose writer is gone, forgotten. */
  abandonedSnapshots: number;
  /** References held by snapshots that do not exist, released. */
  orphanReferences: number;
  /** The object store's own collection. */
  objects: GcResult;
  /** Temp files and scratch folders removed. */
  tempFiles: number;
}

/** Releases what crashed writers left behind, then collects unreferenced objects and temp files. */
export async function collectSessionGarbage(options: SessionGcOptions): Promise<SessionGcResult> {
  const { catalog, store } = options;
  const now = options.now ?? Date.now;
  const host = options.host ?? hostname();
  const isAlive = options.isAlive ?? processAlive;
  let abandonedSnapshots = 0;
  const live = new Set<string>();
  for (const p of await catalog.listPendingSnapshots()) {
    const dead = (p.host === host && !isAlive(p.pid)) || now() - p.startedAtMs > PENDING_MAX_AGE_MS;
    if (dead) {
      await catalog.abandonSnapshot(p.id);
      abandonedSnapshots++;
    } else live.add(p.id);
  }
  const committed = new Set((await catalog.listSnapshots()).map((s) => s.id));
  let orphanReferences = 0;
  for await (const hash of store.list()) {
    for (const holder of await store.holders(hash)) {
      // a branch's references before its commit: released once its process is gone
      const lease = parseLeaseHolder(holder);
      if (lease) {
        if (lease.host === host && !isAlive(lease.pid)) {
          if (await store.unref(hash, holder)) orphanReferences++;
        }
        continue;
      }
      if (!holder.startsWith('snapshot:')) continue;
      const id = holder.slice('snapshot:'.length);
      if (committed.has(id) || live.has(id)) continue;
      // A snapshot may have been published since the list above was read.
      if (await catalog.findSnapshot(id)) continue;
      if (await store.unref(hash, holder)) orphanReferences++;
    }
  }
  await store.flush();
  const objects = await store.gc(options.graceMs !== undefined ? { graceMs: options.graceMs } : {});
  let tempFiles = 0;
  for (const dir of options.tempDirs ?? []) {
    tempFiles += await cleanupStaleTempFiles(dir, STALE_SCRATCH_MS, now());
    tempFiles += await cleanupDeadWriterFiles(dir);
    tempFiles += await cleanupStaleBranchStaging(dir, STALE_SCRATCH_MS, now(), isAlive);
  }
  if (options.scratchDir) tempFiles += await removeStaleScratch(options.scratchDir, now(), isAlive);
  return { abandonedSnapshots, orphanReferences, objects, tempFiles };
}

/** The pid a scratch folder's name records (`branch-<pid>-<random>`), if any. */
export function scratchPid(name: string): number | undefined {
  const m = /^[a-z]+-(\d+)-[A-Za-z0-9]+$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

async function removeStaleScratch(dir: string, nowMs: number, isAlive: (pid: number) => boolean): Promise<number> {
  let removed = 0;
  let names: string[] = [];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    const path = join(dir, name);
    try {
      // a folder of a process that is gone goes at once; one without a pid in its name by age
      const pid = scratchPid(name);
      if (pid !== undefined ? isAlive(pid) : nowMs - (await stat(path)).mtimeMs < STALE_SCRATCH_MS) continue;
      await rm(path, { recursive: true, force: true });
      removed++;
    } catch {
      // raced with another cleaner or its owner
    }
  }
  return removed;
}

/** Storage report of `du`. */
export interface DiskUsage {
  snapshots: number;
  branches: number;
  /** Sum of the captured files' sizes over all snapshots, bytes. */
  logicalBytes: number;
  /** Bytes of the distinct objects the snapshots reference, as stored (compressed), bytes. */
  storedBytes: number;
  /** Distinct objects the snapshots reference. */
  objects: number;
  /** Largest snapshot's logical size, bytes. */
  largestSnapshotBytes: number;
  /** storedBytes / largestSnapshotBytes: what all snapshots cost, in units of the largest one (0 when empty). */
  ratio: number;
  /** logicalBytes / storedBytes: how much deduplication and compression saved (0 when empty). */
  savings: number;
  /** The whole object store (also paged-out payloads of trimmed sessions), when asked for. */
  store?: { objects: number; storedBytes: number };
  /** What `$CTXVM_HOME` occupies on disk (files and folders, as `du` counts them), when its paths are given. */
  diskBytes?: number;
  /** `diskBytes` by part: loose objects, packs, refs, database, other. */
  disk?: DiskBytes;
}

/** Options of `diskUsage`. */
export interface DiskUsageOptions {
  catalog: SessionCatalog;
  store: ObjectStore;
  /** Also walk the whole object store (slower: one stat per object). */
  includeStore?: boolean;
  /** `$CTXVM_HOME`, its objects folder and the SQLite file (undefined for PostgreSQL): measure the disk too. */
  home?: { dir: string; objectsDir: string; dbPath: string | undefined };
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** Logical versus stored bytes of all snapshots. */
export async function diskUsage(options: DiskUsageOptions): Promise<DiskUsage> {
  const [totals, branches] = await Promise.all([options.catalog.storageTotals(), options.catalog.listBranches()]);
  const usage: DiskUsage = {
    snapshots: totals.snapshots,
    branches: branches.length,
    logicalBytes: totals.logicalBytes,
    storedBytes: totals.storedBytes,
    objects: totals.objects,
    largestSnapshotBytes: totals.largestSnapshotBytes,
    ratio: totals.largestSnapshotBytes > 0 ? round4(totals.storedBytes / totals.largestSnapshotBytes) : 0,
    savings: totals.storedBytes > 0 ? round4(totals.logicalBytes / totals.storedBytes) : 0,
  };
  if (options.includeStore) {
    let objects = 0;
    let storedBytes = 0;
    for await (const hash of options.store.list()) {
      const s = await options.store.stat(hash);
      if (!s) continue;
      objects++;
      storedBytes += s.storedSize;
    }
    usage.store = { objects, storedBytes };
  }
  if (options.home) {
    usage.disk = await measureDisk(options.home.dir, options.home.objectsDir, options.home.dbPath);
    usage.diskBytes = usage.disk.total;
  }
  return usage;
}
