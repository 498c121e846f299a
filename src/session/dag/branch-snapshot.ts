/**
 * Branching from a snapshot — the DAG edge snapshot → new session: the snapshot's files are
 * materialized into a scratch folder (verified against the manifest), the branch library
 * (`src/session/branch`) writes the new session into the agent's folder (new ids, optional cut,
 * trimmed by default, validated, atomic), and the edge is recorded in the catalog.
 *
 * Order: the branch is committed first and the edge recorded after it. A process killed in
 * between leaves a usable session without its edge (lineage lost), never an edge to a missing
 * file; the name is checked before any work so the usual conflict fails fast. A snapshot taken
 * for the branch (`ctxvm trim`) is published with the edge, in one transaction: a kill between
 * two writes once left it published without its branch.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CtxvmError, NotFoundError } from '../../errors.js';
import type { ObjectStore } from '../../store/object-store.js';
import type { TokenCounter } from '../../text/tokens.js';
import { prepareBranch, type BranchResult } from '../branch/branch.js';
import type { TrimPolicy } from '../trim/policy.js';
import type { BranchRecord, SessionCatalog, SnapshotRecord, SnapshotToPublish } from './catalog.js';
import { loadManifest } from './manifest.js';
import { materializeSnapshot } from './materialize.js';
import { recordBranchEdge } from './record-branch.js';
import { assertNameFree, assertValidName } from './snapshot.js';

/** Options of `branchFromSnapshot`. */
export interface BranchFromSnapshotOptions {
  catalog: SessionCatalog;
  store: ObjectStore;
  /** Snapshot name, id or id prefix. */
  snapshot: string;
  /** Unique name of the branch (shared namespace with snapshots). */
  name: string;
  /** Cut point: a message uuid (or 8+ hex prefix) or a turn number (see branch-point.ts). */
  at?: string | number;
  /** Trim the branch (default true). */
  trim?: boolean;
  policy?: Partial<TrimPolicy>;
  /** `$CLAUDE_CONFIG_DIR`. */
  claudeConfigDir: string;
  /** `$CODEX_HOME`. */
  codexHome: string;
  /** ctxvm's scratch folder (`$CTXVM_HOME/tmp`); the materialized copy is removed afterwards. */
  scratchDir: string;
  /** A title for the session picker (Claude Code). */
  title?: string;
  tokens?: TokenCounter;
  /** Count tokens before and after trimming for the report (default true; off for speed). */
  measure?: boolean;
  /** Clock, Unix ms (default `Date.now`). */
  now?: () => number;
  signal?: AbortSignal;
  /**
   * A snapshot not published yet (`createSnapshot` with `deferCommit`, its `toPublish`): branched
   * from as it is, and published with the branch's edge, in one transaction, once the branch is
   * committed: the two appear together or not at all, whenever the process dies.
   */
  unpublished?: SnapshotToPublish;
}

/** What `branchFromSnapshot` did. */
export interface SnapshotBranchResult extends BranchResult {
  /** The recorded edge. */
  branch: BranchRecord;
  /** The snapshot it came from. */
  snapshot: Pick<SnapshotRecord, 'id' | 'name'>;
}

/** Creates a new session from a snapshot and records the edge. */
export async function branchFromSnapshot(options: BranchFromSnapshotOptions): Promise<SnapshotBranchResult> {
  const { catalog, store } = options;
  const now = options.now ?? Date.now;
  assertValidName(options.name, 'branch name');
  const snapshot = options.unpublished?.record ?? (await catalog.findSnapshot(options.snapshot));
  if (!snapshot) throw new NotFoundError(`no snapshot named ${JSON.stringify(options.snapshot)}`, { hint: 'run `ctxvm list` to see the snapshots' });
  await assertNameFree(catalog, options.name);
  const manifest = await loadManifest(store, snapshot.manifestHash);

  await mkdir(options.scratchDir, { recursive: true });
  const dir = await mkdtemp(join(options.scratchDir, `branch-${process.pid}-`));
  try {
    const files = await materializeSnapshot(store, manifest, dir, { sync: false });
    const main = files[0]!;
    const stem = main.relativePath.replace(/\.jsonl$/, '');
    const prepared = await prepareBranch({
      source: main.path,
      agent: snapshot.agent,
      store,
      claudeConfigDir: options.claudeConfigDir,
      codexHome: options.codexHome,
      scratchDir: options.scratchDir,
      // the session's own side folder, as captured (`<stem>/subagents`, `<stem>/tool-results`)
      sessionDir: join(dir, stem),
      ...(snapshot.project ? { cwd: snapshot.project } : {}),
      ...(options.at !== undefined ? { at: options.at } : {}),
      ...(options.trim !== undefined ? { trim: options.trim } : {}),
      ...(options.policy ? { policy: options.policy } : {}),
      ...(options.title !== undefined ? { title: options.title } : {}),
      ...(options.tokens ? { tokens: options.tokens } : {}),
      ...(options.measure !== undefined ? { measure: options.measure } : {}),
      now: now(),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    // Re-check just before the session becomes visible: the name may have been taken meanwhile.
    try {
      await assertNameFree(catalog, options.name);
    } catch (error) {
      await prepared.discard();
      throw error;
    }
    const result = await prepared.commit();
    const branch = await recordBranchEdge(catalog, { name: options.name, snapshotId: snapshot.id, result, ...(options.at !== undefined ? { at: options.at } : {}), createdAtMs: now() }, options.unpublished);
    return { ...result, branch, snapshot: { id: snapshot.id, name: snapshot.name } };
  } catch (error) {
    throw namingTheSource(error, dir, snapshot);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * An error about the snapshot's copy in the scratch folder names the session it was captured
 * from instead: that folder is gone when the user reads the message.
 */
function namingTheSource(error: unknown, dir: string, snapshot: SnapshotRecord): unknown {
  if (!CtxvmError.is(error) || !error.message.includes(dir)) return error;
  const named = `${snapshot.sourcePath} (as captured in snapshot ${snapshot.name})`;
  // each mention of a file in the folder: the folder, then the file's path up to a ':' or a space
  const message = error.message
    .split(dir)
    .map((part, i) => (i === 0 ? part : named + part.replace(/^[^:\s]*/, '')))
    .join('');
  return new CtxvmError(error.code, message, { cause: error, ...(error.hint ? { hint: error.hint } : {}), ...(error.details ? { details: error.details } : {}) });
}
