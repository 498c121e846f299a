/**
 * Recording branches in the DAG, shared by everything that makes one:
 *
 * - `branchFromSnapshot` records the edge snapshot → new session after the branch is committed;
 * - `recordForkedBranch` brings a session forked outside the DAG into it the way `ctxvm trim`
 *   does — a snapshot of the bytes the branch was made from, then the edge snapshot → branch. The
 *   hooks' auto-trim uses it: it branches a private, stable copy of the live transcript.
 *
 * Order, in both: the branch file first, the edge after it. A process killed in between leaves a
 * usable session without its edge (lineage lost), never an edge to a missing file. A snapshot
 * taken for the branch is published with the edge, in one transaction, never alone.
 */
import { CtxvmError } from '../../errors.js';
import type { ObjectStore } from '../../store/object-store.js';
import type { BranchResult } from '../branch/branch.js';
import type { BranchRecord, SessionCatalog, SnapshotToPublish } from './catalog.js';
import { assertNameFree, collectSessionFiles, createSnapshot, newDagId, type SnapshotResult, type SnapshotSource } from './snapshot.js';

/** "20251130-123456": a UTC timestamp for generated names, from Unix ms. */
export function nameStamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

/** The snapshot name `ctxvm trim` and the hooks generate: `<first 8 of the session id>-<UTC time>`. */
export function generatedSnapshotName(sessionId: string, nowMs: number): string {
  return `${sessionId.slice(0, 8)}-${nameStamp(nowMs)}`;
}

/** `base`, or `base-2`, `base-3`, … — the first name that no snapshot or branch uses, with each of `suffixes` appended free too. */
export async function freeSnapshotName(catalog: SessionCatalog, base: string, suffixes: readonly string[] = []): Promise<string> {
  for (let i = 1; i < 1000; i++) {
    const name = i === 1 ? base : `${base}-${i}`;
    const used = await Promise.all([name, ...suffixes.map((s) => name + s)].map((n) => catalog.nameInUse(n)));
    if (used.every((u) => u === undefined)) return name;
  }
  throw new CtxvmError('E_EXISTS', `no free name left for ${JSON.stringify(base)}`);
}

/** What an edge records. */
export interface BranchEdge {
  /** Unique name of the branch. */
  name: string;
  /** The snapshot the branch was made from. */
  snapshotId: string;
  /** The committed branch. */
  result: BranchResult;
  /** Cut point as given (uuid or turn), if any. */
  at?: string | number;
  /** Unix ms. */
  createdAtMs: number;
}

/** Records the edge snapshot → branch; a failure says the session exists without its edge. */
export async function recordBranchEdge(catalog: SessionCatalog, edge: BranchEdge, publish?: SnapshotToPublish): Promise<BranchRecord> {
  const { result } = edge;
  const branch: BranchRecord = {
    id: newDagId(),
    name: edge.name,
    snapshotId: edge.snapshotId,
    agent: result.agent,
    sessionId: result.sessionId,
    path: result.path,
    trimmed: result.trimmed !== undefined,
    cutAt: edge.at === undefined ? null : String(edge.at),
    createdAtMs: edge.createdAtMs,
  };
  try {
    await catalog.addBranch(branch, publish);
  } catch (error) {
    if (!CtxvmError.is(error)) throw error;
    throw new CtxvmError(error.code, `${error.message}; the new session was written (${result.path}) but its edge was not recorded`, {
      cause: error,
      hint: `resume it with \`${result.resume}\`; snapshot it to bring it into the tree`,
    });
  }
  return branch;
}

/** Options of `recordForkedBranch`. */
export interface RecordForkedBranchOptions {
  catalog: SessionCatalog;
  store: ObjectStore;
  /** The session the branch was forked from (its real path and id; side files are read beside it). */
  source: SnapshotSource;
  /** The file the branch was actually made from, when it is a copy of `source.path` (captured instead of it). */
  capturedPath?: string;
  /** The committed branch. */
  branch: BranchResult;
  /** Snapshot name (default `generatedSnapshotName`, made unique); the branch is `<name>-trimmed` (or `-branch` untrimmed). */
  name?: string;
  description?: string;
  tags?: readonly string[];
  /** Clock, Unix ms (default `Date.now`). */
  now?: () => number;
}

/** What `recordForkedBranch` recorded. */
export interface ForkedBranchRecord {
  snapshot: SnapshotResult;
  branch: BranchRecord;
}

/** Snapshots the bytes a branch was forked from and publishes it with the edge snapshot → branch. */
export async function recordForkedBranch(options: RecordForkedBranchOptions): Promise<ForkedBranchRecord> {
  const { catalog, store, source, branch } = options;
  const now = options.now ?? Date.now;
  const suffix = branch.trimmed ? '-trimmed' : '-branch';
  const name = options.name ?? (await freeSnapshotName(catalog, generatedSnapshotName(source.sessionId, now()), [suffix]));
  // both names are checked before anything is written (createSnapshot checks its own again)
  await assertNameFree(catalog, name + suffix);
  const files = await collectSessionFiles(source);
  if (options.capturedPath) files[0] = { ...files[0]!, path: options.capturedPath };
  const snapshot = await createSnapshot({
    catalog,
    store,
    source,
    files,
    name,
    ...(options.description !== undefined ? { description: options.description } : {}),
    ...(options.tags ? { tags: options.tags } : {}),
    now,
    deferCommit: true,
  });
  try {
    const edge = await recordBranchEdge(catalog, { name: name + suffix, snapshotId: snapshot.id, result: branch, createdAtMs: now() }, snapshot.toPublish);
    return { snapshot, branch: edge };
  } catch (error) {
    // neither is published: the snapshot's objects are let go (a killed process leaves its
    // pending row, which gc abandons)
    await snapshot.abandon!();
    throw error;
  }
}
