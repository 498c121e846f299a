/**
 * What `ctxvm hooks run` does when Claude Code fires SessionEnd or PreCompact: fork a trimmed
 * branch of the session, never touching the transcript itself.
 *
 *   1. take the session's lock (`$CTXVM_HOME/locks/hook-<session>.lock`): one run per session;
 *   2. wait until the transcript's size and mtime have been stable for `stableMs` (Claude Code
 *      may still be flushing); give up after `maxWaitMs`;
 *   3. copy exactly that many bytes to a private snapshot, and check the file did not change
 *      during the copy (else back to 2);
 *   4. branch the snapshot (trimmed, validated) into the transcript's own project folder, and keep
 *      the branch only if trimming removed at least `minReduction` of the context's tokens;
 *   5. remember size+mtime (`$CTXVM_HOME/hooks/state/<session>.json`) so the same transcript is
 *      not branched twice;
 *   6. hand the branch and the copy it came from to `onBranched`, which records them in the DAG
 *      like `ctxvm trim` (snapshot of the copy + edge to the branch; see dag-record.ts), and log
 *      the outcome (`$CTXVM_HOME/logs/hooks.log`).
 *
 * `runHook` never throws: every failure becomes a `failed` log entry, because a hook must never
 * break or block the agent.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { basename, dirname, join } from 'node:path';
import { writeFileAtomic } from '../core/atomic-file.js';
import type { ObjectStore } from '../store/object-store.js';
import type { TokenCounter } from '../text/tokens.js';
import { prepareBranch, type BranchResult } from '../session/branch/branch.js';
import { cleanupStaleBranchStaging } from '../session/branch/staging.js';
import type { TrimPolicy } from '../session/trim/policy.js';
import { tryLock } from './lock.js';
import { appendHookLog, type HookDagEntry, type HookLogEntry } from './log.js';
import type { HookPayload } from './payload.js';
import type { HookEvent } from './settings.js';

export { isHookEvent, parseHookPayload, type HookPayload } from './payload.js';

export interface HookRunOptions {
  event: HookEvent;
  payload: HookPayload;
  /** `$CTXVM_HOME`: locks, state, snapshots and the log live there. */
  ctxvmHome: string;
  store: ObjectStore;
  claudeConfigDir: string;
  codexHome: string;
  /** The transcript must keep its size and mtime this long before it is read, ms (default 1500). */
  stableMs?: number;
  /** Give up when it is still changing after this long, ms (default 60 000). */
  maxWaitMs?: number;
  /** Poll interval, ms (default 250). */
  pollMs?: number;
  /** Leave transcripts smaller than this alone, bytes (default 65 536). */
  minBytes?: number;
  /** Keep the branch only when trimming removes at least this share of the context's tokens (0..1, default 0.1). */
  minReduction?: number;
  policy?: Partial<TrimPolicy>;
  tokens?: TokenCounter;
  /** Clock, Unix ms (default Date.now). */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /**
   * Called after a branch was committed, to record it in the DAG (snapshot + edge, see
   * dag-record.ts); what it returns goes into the log entry, a failure is logged only.
   */
  onBranched?: (forked: HookBranched) => Promise<HookDagEntry | void>;
}

/** A branch the hook has just committed, handed to `onBranched`. */
export interface HookBranched {
  event: HookEvent;
  payload: HookPayload;
  branch: BranchResult;
  /** The private, stable copy of the transcript the branch was made from (removed after `onBranched` returns). */
  capturedPath: string;
}

interface FileState {
  size: number;
  mtimeMs: number;
}

const sameState = (a: FileState, b: FileState) => a.size === b.size && a.mtimeMs === b.mtimeMs;

async function fileState(path: string): Promise<FileState> {
  const s = await stat(path);
  return { size: s.size, mtimeMs: s.mtimeMs };
}

/** Resolves to the transcript's state once stable for `stableMs`, or undefined after `deadline`. */
async function waitStable(path: string, stableMs: number, deadline: number, pollMs: number, now: () => number, sleep: (ms: number) => Promise<void>): Promise<FileState | undefined> {
  let last = await fileState(path);
  let since = now();
  for (;;) {
    if (now() - since >= stableMs) return last;
    if (now() >= deadline) return undefined;
    await sleep(pollMs);
    const cur = await fileState(path);
    if (!sameState(cur, last)) {
      last = cur;
      since = now();
    }
  }
}

/** Copies the first `bytes` bytes of `from` into `to`. */
async function copyPrefix(from: string, to: string, bytes: number): Promise<void> {
  if (bytes === 0) {
    await writeFileAtomic(to, '');
    return;
  }
  await pipeline(createReadStream(from, { start: 0, end: bytes - 1 }), createWriteStream(to, { flags: 'wx', mode: 0o600 }));
}

/** Runs the hook for one event; never throws (the outcome is logged and returned). */
export async function runHook(options: HookRunOptions): Promise<HookLogEntry> {
  const now = options.now ?? Date.now;
  const started = now();
  const { payload, event, ctxvmHome } = options;
  const entry = (e: Omit<HookLogEntry, 'time' | 'event' | 'sessionId' | 'transcript' | 'ms'>): HookLogEntry => ({
    time: new Date(now()).toISOString(),
    event,
    sessionId: payload.session_id,
    transcript: payload.transcript_path,
    ...e,
    ms: now() - started,
  });
  let result: HookLogEntry;
  try {
    result = await work(options, entry);
  } catch (error) {
    result = entry({ outcome: 'failed', reason: error instanceof Error ? error.message : String(error) });
  }
  await appendHookLog(ctxvmHome, result);
  return result;
}

async function work(options: HookRunOptions, entry: (e: Omit<HookLogEntry, 'time' | 'event' | 'sessionId' | 'transcript' | 'ms'>) => HookLogEntry): Promise<HookLogEntry> {
  const { payload, event, ctxvmHome } = options;
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const transcript = payload.transcript_path;
  if (payload.hook_event_name !== undefined && payload.hook_event_name !== event) {
    return entry({ outcome: 'skipped', reason: `payload is for ${String(payload.hook_event_name)}, this hook runs on ${event}` });
  }
  const initial = await fileState(transcript).catch(() => undefined);
  if (!initial) return entry({ outcome: 'skipped', reason: 'transcript not found' });
  if (initial.size < (options.minBytes ?? 65_536)) return entry({ outcome: 'skipped', reason: `transcript is small (${initial.size} bytes)` });

  const lock = await tryLock(join(ctxvmHome, 'locks', `hook-${payload.session_id}.lock`), { now });
  if (!lock) return entry({ outcome: 'skipped', reason: 'another ctxvm hook is working on this session' });
  let snapshotDir: string;
  try {
    // `hook-<pid>-<random>`: the scratch naming gc reads, so a killed hook's copy goes once its process is gone
    await mkdir(join(ctxvmHome, 'tmp'), { recursive: true });
    snapshotDir = await mkdtemp(join(ctxvmHome, 'tmp', `hook-${process.pid}-`));
  } catch (error) {
    await lock.release();
    throw error;
  }
  try {
    const statePath = join(ctxvmHome, 'hooks', 'state', `${payload.session_id}.json`);
    const deadline = now() + (options.maxWaitMs ?? 60_000);
    const snapshot = join(snapshotDir, basename(transcript));
    let state: FileState | undefined;
    for (;;) {
      state = await waitStable(transcript, options.stableMs ?? 1500, deadline, options.pollMs ?? 250, now, sleep);
      if (!state) return entry({ outcome: 'skipped', reason: 'transcript is still being written' });
      const previous = await readFile(statePath, 'utf8').then((t) => JSON.parse(t) as FileState, () => undefined);
      if (previous && sameState(previous, state)) return entry({ outcome: 'skipped', reason: 'already handled at this size' });
      await rm(snapshotDir, { recursive: true, force: true });
      await mkdir(snapshotDir, { recursive: true });
      await copyPrefix(transcript, snapshot, state.size);
      // the agent wrote while we copied: the copy may be torn; wait for the next quiet moment
      if (sameState(await fileState(transcript), state)) break;
      if (now() >= deadline) return entry({ outcome: 'skipped', reason: 'transcript is still being written' });
    }
    const projectDir = dirname(transcript);
    // staging folders an older ctxvm left in the project folder (this one stages under <home>/tmp)
    await cleanupStaleBranchStaging(projectDir).catch(() => 0);
    const prepared = await prepareBranch({
      source: snapshot,
      agent: 'claude',
      sessionDir: join(projectDir, payload.session_id),
      targetDir: projectDir,
      store: options.store,
      claudeConfigDir: options.claudeConfigDir,
      codexHome: options.codexHome,
      scratchDir: join(ctxvmHome, 'tmp'),
      title: `ctxvm: trimmed copy of ${payload.session_id.slice(0, 8)}`,
      ...(options.policy ? { policy: options.policy } : {}),
      ...(options.tokens ? { tokens: options.tokens } : {}),
      now: now(),
    });
    const t = prepared.result.trimmed;
    const tokens = { ...(t?.input.tokens !== undefined ? { before: t.input.tokens } : {}), ...(t?.output.tokens !== undefined ? { after: t.output.tokens } : {}), ...(t?.reduction !== undefined ? { reduction: t.reduction } : {}) };
    const minReduction = options.minReduction ?? 0.1;
    if ((t?.reduction ?? 0) < minReduction) {
      await prepared.discard();
      await writeFileAtomic(statePath, JSON.stringify(state));
      return entry({ outcome: 'skipped', reason: `trimming would remove ${(100 * (t?.reduction ?? 0)).toFixed(1)}% of the context (< ${(100 * minReduction).toFixed(0)}%)`, tokens });
    }
    const branch = await prepared.commit();
    await writeFileAtomic(statePath, JSON.stringify({ ...state, branch: branch.sessionId }));
    let reason: string | undefined;
    let dag: HookDagEntry | undefined;
    if (options.onBranched) {
      dag = await options.onBranched({ event, payload, branch, capturedPath: snapshot }).then(
        (d) => d ?? undefined,
        (e: unknown) => {
          reason = `branch written, but recording it failed: ${e instanceof Error ? e.message : String(e)}`;
          return undefined;
        },
      );
    }
    return entry({ outcome: 'branched', branch: { sessionId: branch.sessionId, path: branch.path, resume: branch.resume }, tokens, ...(dag ? { dag } : {}), ...(reason ? { reason } : {}) });
  } finally {
    await lock.release();
    await rm(snapshotDir, { recursive: true, force: true });
  }
}
