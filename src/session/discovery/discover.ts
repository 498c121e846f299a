/**
 * Session discovery: finds Claude Code and Codex CLI session files and keeps an index of them in
 * the warm store keyed by path, size and mtime, so listing a thousand sessions re-reads only the
 * files that changed (and a file that grew only from its old end, see probe.ts).
 *
 *   Claude Code  $CLAUDE_CONFIG_DIR/projects/<encoded cwd>/<sessionId>.jsonl, or in that folder's
 *                `sessions/` (a layout seen in users' backups); subagent transcripts are indexed as
 *                subagents: older `agent-*.jsonl` beside the session, `<sessionId>/subagents/…` and
 *                `subagents/<sessionId>/workflows/<workflow>/…` under the project folder
 *   Codex CLI    $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<timestamp>-<uuid>.jsonl, and closed
 *                sessions in $CODEX_HOME/archived_sessions/rollout-*.jsonl
 */
import { readdirSync, statSync, type Dirent } from 'node:fs';
import { basename, join, sep } from 'node:path';
import type { Clock } from '../../core/clock.js';
import type { AgentKind } from '../context-model.js';
import type { BranchRecord, IndexedFile, SessionCatalog, SnapshotRecord } from '../dag/catalog.js';
import { PROBE_STATE_VERSION } from './probe-version.js';

/** One session as `ctxvm sessions` lists it (the DESIGN.md contract plus a few extras). */
export interface DiscoveredSession {
  agent: AgentKind;
  /** The id the agent resumes it by. */
  id: string;
  /** Absolute path of the session file. */
  path: string;
  /** Working directory of the session (from its lines; Claude Code's folder name is lossy), or null. */
  project: string | null;
  /** File size, bytes. */
  bytes: number;
  /** Messages the agent resends on resume (see probe.ts for the counting rule). */
  messages: number;
  /**
   * Whether `messages` comes from the full reconstruction (`session analyze` prints the same
   * number); false for files too large to reconstruct on every change, counted quickly instead.
   */
  messagesExact: boolean;
  /** Last modification of the file, ISO-8601. */
  updatedAt: string;
  /** Title, when the session has one (Claude Code `custom-title`, else `ai-title`, else `summary` lines). */
  title?: string;
  /** Claude Code: the `projects/<folder>` name. */
  projectDir?: string;
  /** Claude Code: subagent transcripts of the session (beside it, or in its subagents folders). */
  siblingFiles?: string[];
  /**
   * Codex: the model provider the rollout was recorded with, when it is not `openai`. Codex
   * resumes it only where that provider is configured (docs/resume-model.md §2.6).
   */
  modelProvider?: string;
  /** Set when ctxvm made this session: the branch (`ctxvm tree`) and the snapshot it came from. */
  ctxvmBranch?: { name: string; snapshot: string; trimmed: boolean };
}

/** Where the agents keep their sessions. */
export interface AgentRoots {
  /** `$CLAUDE_CONFIG_DIR` (default `~/.claude`). */
  claudeConfigDir: string;
  /** `$CODEX_HOME` (default `~/.codex`). */
  codexHome: string;
}

/** Options of `discoverSessions`. */
export interface DiscoverOptions extends AgentRoots {
  catalog: SessionCatalog;
  /** Only this agent's sessions. */
  agent?: AgentKind;
  clock?: Clock;
  /** Changed files read at once (default 32). */
  concurrency?: number;
}

/** Counters of one discovery run. */
export interface DiscoverStats {
  /** Files found. */
  files: number;
  /** Files read because they were new or changed. */
  probed: number;
  /** Of those, files read only from their previous end. */
  appended: number;
  /** Index rows dropped because their file is gone. */
  removed: number;
}

/** Sessions found, newest first, and what the run did. */
export interface DiscoverResult {
  sessions: DiscoveredSession[];
  stats: DiscoverStats;
}

interface Candidate {
  path: string;
  agent: AgentKind;
  role: IndexedFile['role'];
  projectDir: string | null;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

// Listing folders and stat'ing files use the synchronous calls: for metadata they are several times
// faster than the thread-pool round trips (1 000 stats: ~6 ms against ~30 ms), and discovery is
// a short burst of them. Reading the files that changed stays asynchronous.
function dirEntries(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** Subagent transcripts under `dir` (`agent-*.jsonl` at any depth up to `depth`). */
function subagentFiles(dir: string, depth: number, out: string[]): void {
  for (const e of dirEntries(dir)) {
    if (e.isDirectory() && depth > 0) subagentFiles(join(dir, e.name), depth - 1, out);
    else if (e.isFile() && e.name.startsWith('agent-') && e.name.endsWith('.jsonl')) out.push(join(dir, e.name));
  }
}

function claudeCandidates(root: string): Candidate[] {
  const projects = join(root, 'projects');
  const out: Candidate[] = [];
  for (const d of dirEntries(projects)) {
    if (!d.isDirectory()) continue;
    const folder = join(projects, d.name);
    const add = (dir: string, f: Dirent) => {
      if (f.isFile() && f.name.endsWith('.jsonl') && !f.name.startsWith('.')) out.push({ path: join(dir, f.name), agent: 'claude', role: f.name.startsWith('agent-') ? 'subagent' : 'main', projectDir: d.name });
    };
    const subagents: string[] = [];
    for (const f of dirEntries(folder)) {
      if (f.isDirectory() && f.name === 'sessions') for (const g of dirEntries(join(folder, f.name))) add(join(folder, f.name), g);
      else if (f.isDirectory() && f.name === 'subagents') subagentFiles(join(folder, f.name), 4, subagents);
      else if (f.isDirectory() && UUID.test(f.name)) subagentFiles(join(folder, f.name, 'subagents'), 3, subagents);
      else add(folder, f);
    }
    for (const path of subagents) out.push({ path, agent: 'claude', role: 'subagent', projectDir: d.name });
  }
  return out;
}

function codexCandidates(root: string): Candidate[] {
  const out: Candidate[] = [];
  const rollout = (dir: string, e: Dirent) => {
    if (e.isFile() && e.name.startsWith('rollout-') && e.name.endsWith('.jsonl')) out.push({ path: join(dir, e.name), agent: 'codex', role: 'main', projectDir: null });
  };
  const level = (dir: string, depth: number): void => {
    for (const e of dirEntries(dir)) {
      if (depth === 3) rollout(dir, e);
      else if (e.isDirectory() && /^\d+$/.test(e.name)) level(join(dir, e.name), depth + 1);
    }
  };
  level(join(root, 'sessions'), 0);
  for (const e of dirEntries(join(root, 'archived_sessions'))) rollout(join(root, 'archived_sessions'), e);
  return out;
}

async function pool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** The id an agent resumes a session file by. */
export function sessionIdOf(file: Pick<IndexedFile, 'agent' | 'path' | 'sessionId'>): string {
  const name = basename(file.path, '.jsonl');
  if (file.agent === 'claude') return name;
  return file.sessionId ?? UUID.exec(name)?.[0] ?? name;
}

/**
 * Files up to this size get the exact message count from the reconstruction on each change (it
 * reads about as fast as the quick probe per byte, and a listing re-reads only changed files);
 * larger ones, typically a live session growing turn by turn, keep the quick count.
 */
export const EXACT_COUNT_MAX_BYTES = 16 * 1024 * 1024;

/** The messages the agent resends, as `session analyze` counts them; undefined if it cannot load. */
export async function resentMessages(path: string): Promise<number | undefined> {
  try {
    const { loadSession } = await import('../session.js');
    return (await loadSession(path)).context.entries.length;
  } catch {
    return undefined;
  }
}

/** Probes one candidate into an index row, resuming from `previous` when the file only grew. */
export async function indexFile(candidate: Candidate, size: number, mtimeMs: number, previous: IndexedFile | undefined, nowMs: number): Promise<{ row: IndexedFile; appended: boolean }> {
  // Loaded on first use: a warm listing (nothing changed) never reads a file, so it skips the
  // prober and what it pulls in (JSON skimming, hashing).
  const { parseProbeState, probeSessionFile } = await import('./probe.js');
  const prevState = previous ? parseProbeState(previous.scanState, candidate.agent) : undefined;
  const resume = previous && prevState && previous.role === 'main' && size >= previous.sizeBytes ? { offset: previous.scanOffset, state: prevState } : undefined;
  const probe = await probeSessionFile(candidate.path, { agent: candidate.agent, size, ...(resume ? { resume } : {}), firstLineOnly: candidate.role === 'subagent' });
  const v = probe.view;
  if (candidate.role === 'main' && size <= EXACT_COUNT_MAX_BYTES) {
    const resent = await resentMessages(candidate.path);
    if (resent !== undefined) probe.state.resent = v.resent = resent;
  }
  return {
    appended: probe.resumedFrom > 0,
    row: {
      path: candidate.path,
      agent: candidate.agent,
      role: candidate.role,
      sessionId: v.sessionId ?? null,
      project: v.cwd ?? null,
      projectDir: candidate.projectDir,
      sizeBytes: size,
      mtimeMs,
      messages: v.resent ?? v.messages,
      title: v.customTitle ?? v.aiTitle ?? v.summary ?? null,
      scanOffset: probe.offset,
      scanState: JSON.stringify(probe.state),
      indexedAtMs: nowMs,
    },
  };
}

const under = (path: string, root: string) => path.startsWith(root.endsWith(sep) ? root : root + sep);

/** Builds the listing from index rows: main files only, projects filled in from siblings, newest first. */
export function sessionsFromIndex(rows: readonly IndexedFile[]): DiscoveredSession[] {
  // Summary-only Claude files carry no cwd: borrow it from another session of the same folder.
  const folderCwd = new Map<string, string>();
  const siblings = new Map<string, string[]>();
  for (const r of rows) {
    if (r.agent !== 'claude' || !r.projectDir) continue;
    if (r.project && !folderCwd.has(r.projectDir)) folderCwd.set(r.projectDir, r.project);
    if (r.role === 'subagent' && r.sessionId) {
      const key = `${r.projectDir}\0${r.sessionId}`;
      siblings.set(key, [...(siblings.get(key) ?? []), r.path]);
    }
  }
  // Sort rows by mtime first (numbers, not ISO strings), then build the output in that order.
  const mains = rows.filter((r) => r.role === 'main').sort((a, b) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : 1));
  return mains.map((r): DiscoveredSession => {
    const id = sessionIdOf(r);
    const project = r.project ?? (r.projectDir ? folderCwd.get(r.projectDir) ?? null : null);
    const sib = siblings.size && r.agent === 'claude' ? siblings.get(`${r.projectDir}\0${id}`) : undefined;
    return {
      agent: r.agent,
      id,
      path: r.path,
      project,
      bytes: r.sizeBytes,
      messages: r.messages,
      messagesExact: r.role === 'main' && r.scanState.includes('"resent":'),
      updatedAt: new Date(r.mtimeMs).toISOString(),
      ...(r.title ? { title: r.title } : {}),
      ...(r.projectDir ? { projectDir: r.projectDir } : {}),
      ...(sib?.length ? { siblingFiles: sib.sort() } : {}),
      ...codexProvider(r),
    };
  });
}

/** `{modelProvider}` of a Codex row recorded with a provider other than openai, else `{}`. */
function codexProvider(r: IndexedFile): { modelProvider?: string } {
  if (r.agent !== 'codex' || !r.scanState.includes('modelProvider')) return {};
  try {
    const p = (JSON.parse(r.scanState) as { modelProvider?: unknown }).modelProvider;
    return typeof p === 'string' && p !== 'openai' ? { modelProvider: p } : {};
  } catch {
    return {};
  }
}

/** Scans the agents' folders, refreshes the index for changed files, and lists the sessions. */
export async function discoverSessions(options: DiscoverOptions): Promise<DiscoverResult> {
  const { catalog } = options;
  const nowMs = (options.clock ?? { now: Date.now }).now();
  const concurrency = options.concurrency ?? 32;
  const roots: { agent: AgentKind; root: string; find: () => Candidate[] }[] = [
    { agent: 'claude', root: join(options.claudeConfigDir, 'projects'), find: () => claudeCandidates(options.claudeConfigDir) },
    { agent: 'codex', root: options.codexHome, find: () => codexCandidates(options.codexHome) },
  ];
  const active = roots.filter((r) => !options.agent || r.agent === options.agent);
  const indexed = await catalog.listIndexedFiles();
  const candidates = active.flatMap((r) => r.find());
  const byPath = new Map(indexed.map((r) => [r.path, r]));
  const stats: DiscoverStats = { files: candidates.length, probed: 0, appended: 0, removed: 0 };

  const changed: IndexedFile[] = [];
  const current = new Map<string, IndexedFile>();
  const toProbe: { c: Candidate; size: number; mtimeMs: number; previous: IndexedFile | undefined }[] = [];
  for (const c of candidates) {
    const info = statSync(c.path, { throwIfNoEntry: false });
    if (!info?.isFile()) continue; // removed between listing and stat
    const mtimeMs = Math.round(info.mtimeMs);
    const previous = byPath.get(c.path);
    const sameVersion = previous?.scanState.startsWith(`{"v":${PROBE_STATE_VERSION},`) === true;
    if (previous && sameVersion && previous.sizeBytes === info.size && previous.mtimeMs === mtimeMs && previous.role === c.role && previous.projectDir === c.projectDir) {
      current.set(c.path, previous);
    } else toProbe.push({ c, size: info.size, mtimeMs, previous });
  }
  await pool(toProbe, concurrency, async ({ c, size, mtimeMs, previous }) => {
    try {
      const { row, appended } = await indexFile(c, size, mtimeMs, previous, nowMs);
      stats.probed++;
      if (appended) stats.appended++;
      changed.push(row);
      current.set(c.path, row);
    } catch {
      // unreadable (permissions, removed meanwhile): leave it out of this listing
    }
  });

  const gone = indexed.filter((r) => !current.has(r.path) && active.some((a) => a.agent === r.agent && under(r.path, a.root))).map((r) => r.path);
  stats.removed = gone.length;
  if (changed.length) await catalog.upsertIndexedFiles(changed);
  if (gone.length) await catalog.removeIndexedFiles(gone);
  return { sessions: markBranches(sessionsFromIndex([...current.values()]), await catalog.listBranches(), await catalog.listSnapshots()), stats };
}

/** Marks the sessions ctxvm created as branches (matched by the file the branch was written to). */
function markBranches(sessions: DiscoveredSession[], branches: readonly BranchRecord[], snapshots: readonly SnapshotRecord[]): DiscoveredSession[] {
  if (branches.length === 0) return sessions;
  const snapshotName = new Map(snapshots.map((s) => [s.id, s.name]));
  const byPath = new Map(branches.map((b) => [b.path, b]));
  return sessions.map((s) => {
    const b = byPath.get(s.path);
    return b && b.sessionId === s.id ? { ...s, ctxvmBranch: { name: b.name, snapshot: snapshotName.get(b.snapshotId) ?? b.snapshotId, trimmed: b.trimmed } } : s;
  });
}
