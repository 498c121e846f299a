/**
 * Records an auto-trim branch in the snapshot DAG, the way `ctxvm trim` does: a snapshot of the
 * exact bytes the hook branched (its private copy of the transcript, plus the session's subagent
 * and tool-result files), tagged `auto-trim`, and the edge snapshot → `<snapshot>-trimmed`
 * branch — so `ctxvm tree`, `list`, `info` and `rm` see it like any other branch. Repeated runs
 * on a growing session chain their snapshots (each one's parent is the previous snapshot).
 *
 * The catalog and store are passed in (the CLI opens them only when a branch was made).
 */
import type { SessionCatalog } from '../session/dag/catalog.js';
import { recordForkedBranch } from '../session/dag/record-branch.js';
import type { ObjectStore } from '../store/object-store.js';
import type { HookDagEntry } from './log.js';
import type { HookBranched } from './run.js';

/** Tags on the snapshots the hooks take. */
export const HOOK_SNAPSHOT_TAGS: readonly string[] = ['auto-trim'];

/** Where `recordHookBranch` writes. */
export interface HookDagServices {
  catalog: SessionCatalog;
  store: ObjectStore;
  /** Clock, Unix ms (default `Date.now`). */
  now?: () => number;
}

/** Snapshots the copy the hook branched and records the edge; resolves to the names for the log. */
export async function recordHookBranch(services: HookDagServices, forked: HookBranched): Promise<HookDagEntry> {
  const { payload, branch, event } = forked;
  const detail = payload.trigger ?? payload.reason;
  const r = await recordForkedBranch({
    catalog: services.catalog,
    store: services.store,
    source: { agent: 'claude', sessionId: payload.session_id, path: payload.transcript_path, project: branch.cwd ?? payload.cwd ?? null },
    capturedPath: forked.capturedPath,
    branch,
    tags: HOOK_SNAPSHOT_TAGS,
    description: `auto-trim at ${event}${typeof detail === 'string' && detail ? ` (${detail})` : ''}`,
    ...(services.now ? { now: services.now } : {}),
  });
  return { snapshot: r.snapshot.name, branch: r.branch.name };
}
