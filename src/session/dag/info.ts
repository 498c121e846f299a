/**
 * `info` for a snapshot or a branch: its record, files, lineage and children in the DAG, storage,
 * and the token composition of the context the agent would send on resume. The tokens are
 * computed once — by materializing the main file to a scratch folder and reconstructing it with
 * the session drivers — and cached in the catalog.
 */
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CtxvmError, NotFoundError } from '../../errors.js';
import type { ObjectStore } from '../../store/object-store.js';
import { createTokenCounter, type TokenCounter } from '../../text/tokens.js';
import { codexDriver } from '../codex/driver.js';
import { driverFor, loadSession, registerSessionDriver } from '../session.js';
import { countContextTokens } from '../token-breakdown.js';
import type { BranchRecord, SessionCatalog, SnapshotRecord, SnapshotStats } from './catalog.js';
import { loadManifest, type SnapshotManifest } from './manifest.js';
import { materializeSnapshot } from './materialize.js';
import { buildDag, childrenOf, lineageOf, type DagNode } from './tree.js';

/** Options of `computeSnapshotStats`. */
export interface SnapshotStatsOptions {
  store: ObjectStore;
  manifest: SnapshotManifest;
  /** Folder for the scratch copy (removed afterwards). */
  scratchDir: string;
  /** Token counter (default: o200k_base calibrated for the session's model). */
  tokens?: TokenCounter;
  now?: () => number;
}

/** Codex support is registered by whoever imports its driver; info needs it either way. */
function ensureCodexDriver(): void {
  try {
    driverFor('codex');
  } catch {
    registerSessionDriver(codexDriver);
  }
}

/** Tokens and composition of a snapshot's main session, as the agent would resume it. */
export async function computeSnapshotStats(options: SnapshotStatsOptions): Promise<SnapshotStats> {
  ensureCodexDriver();
  await mkdir(options.scratchDir, { recursive: true });
  const dir = await mkdtemp(join(options.scratchDir, `info-${process.pid}-`));
  try {
    const [main] = await materializeSnapshot(options.store, options.manifest, dir, { mainOnly: true, sync: false });
    return await computeFileStats(main!.path, options);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A DAG neighbour as `info` shows it. */
export interface NodeRef {
  kind: DagNode['kind'];
  id: string;
  name: string;
}

/** `info` of a snapshot. */
export interface SnapshotInfo {
  kind: 'snapshot';
  snapshot: SnapshotRecord;
  files: { role: string; path: string; bytes: number; sha256: string; chunks: number }[];
  /** From this snapshot up to its root, this one first. */
  lineage: NodeRef[];
  /** Branches made from it and later snapshots of its session. */
  children: NodeRef[];
  storage: {
    objects: number;
    /** Stored bytes of all objects it references. */
    storedBytes: number;
    /** Stored bytes only it references: what removing it would free. */
    exclusiveBytes: number;
  };
  /** Tokens and composition (null when they could not be computed; see statsError). */
  stats: SnapshotStats | null;
  statsError?: string;
}

/** `info` of a branch. */
export interface BranchInfo {
  kind: 'branch';
  branch: BranchRecord;
  /** Whether the branch's session file is still where it was written. */
  fileExists: boolean;
  /** Size of the branch's session file now (it grows when the agent resumes it), bytes. */
  bytes: number | null;
  lineage: NodeRef[];
  children: NodeRef[];
  /** Tokens and composition of the branch file as it is now (null when it is gone or unreadable). */
  stats: SnapshotStats | null;
  statsError?: string;
}

/** Tokens and composition of a session file as the agent would resume it. */
export async function computeFileStats(path: string, options: { tokens?: TokenCounter; now?: () => number } = {}): Promise<SnapshotStats> {
  ensureCodexDriver();
  const loaded = await loadSession(path);
  const counter = options.tokens ?? createTokenCounter(loaded.context.model ? { model: loaded.context.model } : {});
  const counted = countContextTokens(loaded.context, counter);
  return {
    tokens: counted.tokens,
    breakdown: counted.breakdown,
    tokenizer: counted.method,
    messages: loaded.context.entries.length,
    errors: loaded.findings.filter((f) => f.severity === 'error').length,
    model: loaded.context.model ?? null,
    computedAtMs: (options.now ?? Date.now)(),
  };
}

/** A branch file's stats, or why there are none (a file the drivers cannot read is not fatal). */
export async function branchStats(branch: BranchRecord, options: { tokens?: TokenCounter; now?: () => number } = {}): Promise<{ bytes: number | null; stats: SnapshotStats | null; statsError?: string }> {
  const bytes = await stat(branch.path).then((i) => (i.isFile() ? i.size : null), () => null);
  if (bytes === null) return { bytes, stats: null, statsError: `${branch.path} is no longer there` };
  try {
    return { bytes, stats: await computeFileStats(branch.path, options) };
  } catch (error) {
    if (!CtxvmError.is(error) || error.code === 'E_IO') throw error;
    return { bytes, stats: null, statsError: error.message };
  }
}

/** Options of `describeNode`. */
export interface DescribeOptions {
  catalog: SessionCatalog;
  store: ObjectStore;
  /** Snapshot or branch name, id or id prefix. */
  ref: string;
  /** Scratch folder for token counting. */
  scratchDir: string;
  /** Recompute the cached numbers. */
  refresh?: boolean;
  tokens?: TokenCounter;
  now?: () => number;
}

const toRef = (n: DagNode): NodeRef => ({ kind: n.kind, id: n.id, name: n.name });

/** Describes a snapshot (computing and caching its token numbers on first use) or a branch. */
export async function describeNode(options: DescribeOptions): Promise<SnapshotInfo | BranchInfo> {
  const { catalog, store } = options;
  const snapshot = await catalog.findSnapshot(options.ref);
  const branch = snapshot ? undefined : await catalog.findBranch(options.ref);
  if (!snapshot && !branch) throw new NotFoundError(`no snapshot or branch named ${JSON.stringify(options.ref)}`, { hint: 'run `ctxvm list` or `ctxvm tree`' });
  const graph = buildDag(await catalog.listSnapshots(), await catalog.listBranches());
  const id = snapshot?.id ?? branch!.id;
  const lineage = lineageOf(graph, id).map(toRef);
  const children = childrenOf(graph, id).map(toRef);
  if (branch) {
    const b = await branchStats(branch, options);
    return { kind: 'branch', branch, fileExists: b.bytes !== null, bytes: b.bytes, lineage, children, stats: b.stats, ...(b.statsError ? { statsError: b.statsError } : {}) };
  }

  const s = snapshot!;
  const manifest = await loadManifest(store, s.manifestHash);
  const objects = await catalog.snapshotObjects(s.id);
  let exclusiveBytes = 0;
  const holders = await catalog.countHolders(objects.map((o) => o.hash));
  for (const o of objects) if (holders.get(o.hash) === 1) exclusiveBytes += o.storedBytes;
  let stats = options.refresh ? null : s.stats;
  let statsError: string | undefined;
  if (!stats) {
    try {
      stats = await computeSnapshotStats({ store, manifest, scratchDir: options.scratchDir, ...(options.tokens ? { tokens: options.tokens } : {}), ...(options.now ? { now: options.now } : {}) });
      await catalog.setSnapshotStats(s.id, stats);
    } catch (error) {
      // A session the drivers cannot read still has a lineage and a size worth showing.
      if (!CtxvmError.is(error) || error.code === 'E_INTEGRITY' || error.code === 'E_IO') throw error;
      statsError = error.message;
    }
  }
  return {
    kind: 'snapshot',
    snapshot: { ...s, stats },
    files: manifest.files.map((f) => ({ role: f.role, path: f.path, bytes: f.bytes, sha256: f.sha256, chunks: f.text.length + f.uuids.length })),
    lineage,
    children,
    storage: { objects: objects.length, storedBytes: objects.reduce((n, o) => n + o.storedBytes, 0), exclusiveBytes },
    stats,
    ...(statsError ? { statsError } : {}),
  };
}
