/**
 * Where a Claude Code branch is cut (`--at`), decided from the pass-1 index alone. The branch keeps
 * the conversation up to and including the chosen message, plus what the agent needs to resume
 * it: every split line of each reply on the way (same `message.id`, also off the parent path) and
 * the tool_result lines answering their tool calls. The conversation path runs through compaction
 * boundaries by `logicalParentUuid`, so a cut before a compaction resumes the full history.
 */
import { basename } from 'node:path';
import { readJsonl } from '../../core/jsonl.js';
import { NotFoundError, UsageError, CtxvmError } from '../../errors.js';
import { PARENT_BRIDGE_MS, resolvePreserved, selectClaudeChain } from '../claude/chain.js';
import type { ClaudeIndex, LineMeta } from '../claude/scan.js';
import type { ClaudeLine } from '../claude/types.js';
import type { BranchPoint } from './branch-point.js';

/** One turn of the conversation: a prompt the person typed. */
export interface ClaudeTurn {
  /** 1-based turn number. */
  turn: number;
  /** File line (1-based) of the prompt. */
  line: number;
  uuid: string;
  timestamp?: string;
  /** The prompt's first 200 characters. */
  preview: string;
}

/** What a cut keeps. */
export interface ClaudeCut {
  /** uuids of the lines kept (the message at the cut, its ancestors and the lines its replies need). */
  keepUuids: Set<string>;
  /** Highest file line kept: lines without a uuid, and sidechain lines, are kept only before it. */
  lastLine: number;
  /** The line the cut was asked at (for a turn: the last message of that turn). */
  target: LineMeta;
  /** The turn number, when the cut was asked by turn. */
  turn?: number;
}

const isMessage = (m: LineMeta) => m.kind === 'user' || m.kind === 'assistant';

/** Walks from `from` to the root: `parentUuid`, then `logicalParentUuid` across a compaction boundary. */
function createWalker(index: ClaudeIndex) {
  const byUuid = new Map<string, LineMeta>();
  for (const m of index.lines) if (m.uuid) byUuid.set(m.uuid, m);
  // Claude Code bridges a parentUuid naming no line to the newest same-side entry ≤ 5 s older
  const bridge = (child: LineMeta, seen: Set<string>): LineMeta | undefined => {
    const t = child.timestamp ? Date.parse(child.timestamp) : NaN;
    if (Number.isNaN(t)) return undefined;
    let best: LineMeta | undefined;
    let bestT = -Infinity;
    for (const m of index.lines) {
      if (!m.uuid || seen.has(m.uuid) || m.isSidechain !== child.isSidechain) continue;
      if (m.kind === 'system' && m.subtype === 'file_snapshot') continue;
      const tt = m.timestamp ? Date.parse(m.timestamp) : NaN;
      if (!Number.isNaN(tt) && tt <= t && tt > bestT) {
        best = m;
        bestT = tt;
      }
    }
    return best && t - bestT <= PARENT_BRIDGE_MS ? best : undefined;
  };
  /** Lines from `from` (included) to the root; stops at a line for which `stop` is true (excluded). */
  const walk = (from: LineMeta, stop: (m: LineMeta) => boolean = () => false): LineMeta[] => {
    const out: LineMeta[] = [];
    const seen = new Set<string>();
    for (let cur: LineMeta | undefined = from; cur?.uuid && !seen.has(cur.uuid) && !stop(cur); ) {
      seen.add(cur.uuid);
      out.push(cur);
      const parent: string | null | undefined = cur.parentUuid ?? (cur.kind === 'system' && cur.subtype === 'compact_boundary' ? cur.logicalParentUuid : undefined);
      if (!parent) break;
      cur = byUuid.get(parent) ?? bridge(cur, seen);
    }
    return out;
  };
  return { byUuid, walk };
}

/** The conversation the agent resumes, root first, through compaction boundaries. */
function conversationPath(index: ClaudeIndex): LineMeta[] {
  const leafLine = selectClaudeChain(index).leafLine;
  const leaf = leafLine === undefined ? undefined : index.lines.find((m) => m.line === leafLine);
  return leaf ? createWalker(index).walk(leaf).reverse() : [];
}

/**
 * User lines Claude Code writes for things that are not prompts to the model: slash commands and
 * their output, shell-mode input and output, interruption markers.
 */
const NOT_A_PROMPT = ['<command-name>', '<command-message>', '<local-command-', '<bash-input>', '<bash-stdout>', '<bash-stderr>', '[Request interrupted by user'];

function firstText(line: ClaudeLine): string {
  const c = line.message?.content;
  if (typeof c === 'string') return c;
  const block = Array.isArray(c) ? c.find((b) => b?.type === 'text') : undefined;
  return typeof block?.text === 'string' ? block.text : '';
}

/**
 * The turns of the conversation the agent resumes, root first, numbered from 1: the prompts the
 * person typed (slash commands, their output, shell-mode lines and interruption markers are not
 * turns). Reads the text of the candidate lines for a preview.
 */
export async function listClaudeTurns(index: ClaudeIndex): Promise<ClaudeTurn[]> {
  const candidates = conversationPath(index).filter((m) => m.isPrompt && !m.isSidechain);
  const wanted = new Set(candidates.map((m) => m.line));
  const texts = new Map<number, string>();
  if (wanted.size > 0) {
    for await (const rec of readJsonl<ClaudeLine>(index.file, { onBadLine: 'yield' })) {
      if (rec.value && wanted.has(rec.raw.line)) texts.set(rec.raw.line, firstText(rec.value));
    }
  }
  return candidates
    .filter((m) => !NOT_A_PROMPT.some((p) => (texts.get(m.line) ?? '').trimStart().startsWith(p)))
    .map((m, i) => ({ turn: i + 1, line: m.line, uuid: m.uuid!, ...(m.timestamp ? { timestamp: m.timestamp } : {}), preview: (texts.get(m.line) ?? '').slice(0, 200) }));
}

/** Finds the line with `uuid`, or the one line whose uuid starts with it (hyphens ignored). */
export function findClaudeLine(index: ClaudeIndex, uuid: string): LineMeta {
  const want = uuid.toLowerCase();
  const exact = index.lines.filter((m) => m.uuid === want);
  if (exact.length > 0) return exact[exact.length - 1]!;
  const bare = want.replace(/-/g, '');
  const matches = new Map<string, LineMeta>();
  for (const m of index.lines) if (m.uuid && m.uuid.replace(/-/g, '').startsWith(bare)) matches.set(m.uuid, m);
  if (matches.size === 1) return [...matches.values()][0]!;
  if (matches.size > 1) throw new UsageError(`--at ${uuid} matches ${matches.size} lines of ${basename(index.file)}: ${[...matches.keys()].slice(0, 4).join(', ')}…`, { hint: 'give more digits of the uuid' });
  throw new NotFoundError(`--at ${uuid}: no line of ${basename(index.file)} has that uuid`, { hint: 'uuids are the `uuid` fields of the transcript lines; or pass a turn number' });
}

/** The last message of turn `turn` (1-based) on the conversation path. */
function turnTarget(index: ClaudeIndex, turns: readonly ClaudeTurn[], turn: number): LineMeta {
  if (turn > turns.length) {
    throw new UsageError(`--at ${turn}: ${basename(index.file)} has ${turns.length} turn(s) (prompts typed by the person)`, { hint: turns.length ? `pass a turn number from 1 to ${turns.length}` : 'branch without --at' });
  }
  const path = conversationPath(index);
  const at = (line: number) => path.findIndex((m) => m.line === line);
  const start = at(turns[turn - 1]!.line);
  const end = turns[turn] ? at(turns[turn]!.line) : path.length;
  for (let i = end - 1; i >= start; i--) {
    const m = path[i]!;
    if (isMessage(m) && !m.isCompactSummary) return m;
  }
  return path[start]!;
}

/** Decides what a branch cut at `point` keeps (`turns` from `listClaudeTurns`, needed for a turn). */
export function planClaudeCut(index: ClaudeIndex, point: BranchPoint, turns: readonly ClaudeTurn[] = []): ClaudeCut {
  const target = point.kind === 'turn' ? turnTarget(index, turns, point.turn) : findClaudeLine(index, point.uuid);
  if (target.isSidechain) {
    throw new UsageError(`--at ${target.uuid}: line ${target.line} belongs to a subagent (sidechain), not to the conversation`, { hint: 'branch at a message of the main conversation' });
  }
  const { byUuid, walk } = createWalker(index);
  const keepUuids = new Set<string>();
  const addPath = (m: LineMeta) => {
    for (const cur of walk(m, (x) => keepUuids.has(x.uuid!))) keepUuids.add(cur.uuid!);
  };
  addPath(target);
  // preserved messages of a kept compaction boundary must exist, or Claude Code drops them
  for (const m of index.lines) {
    if (m.kind === 'system' && m.subtype === 'compact_boundary' && m.uuid && keepUuids.has(m.uuid)) {
      for (const u of resolvePreserved(m, byUuid)?.uuids ?? []) addPath(byUuid.get(u)!);
    }
  }
  // every split line of a kept reply, and the tool results answering its calls (to a fixed point)
  for (let changed = true; changed; ) {
    changed = false;
    const replies = new Set<string>();
    const calls = new Set<string>();
    for (const m of index.lines) {
      if (!m.uuid || !keepUuids.has(m.uuid) || m.isSidechain || m.kind !== 'assistant') continue;
      if (m.messageId) replies.add(m.messageId);
      for (const u of m.toolUses) calls.add(u.id);
    }
    for (const m of index.lines) {
      if (!m.uuid || keepUuids.has(m.uuid) || m.isSidechain) continue;
      const sameReply = m.kind === 'assistant' && m.messageId !== undefined && replies.has(m.messageId);
      const answers = m.kind === 'user' && m.toolResults.some((r) => calls.has(r.toolUseId));
      // hanging under a kept line: a session that continues another holds a copy of its history
      // (same message and tool ids, other uuids), which must not join the cut
      if ((sameReply || answers) && m.parentUuid && keepUuids.has(m.parentUuid)) {
        addPath(m);
        changed = true;
      }
    }
  }
  let lastLine = 0;
  for (const m of index.lines) if (m.uuid && keepUuids.has(m.uuid)) lastLine = Math.max(lastLine, m.line);
  if (lastLine === 0) throw new CtxvmError('E_INTERNAL', `--at: the cut at line ${target.line} of ${basename(index.file)} keeps nothing`);
  return { keepUuids, lastLine, target, ...(point.kind === 'turn' ? { turn: point.turn } : {}) };
}

/** Session-level records that describe the whole session (kept wherever they are in the file). */
const SESSION_RECORD_TYPES: ReadonlySet<string> = new Set(['custom-title', 'ai-title', 'tag', 'agent-name']);

/**
 * Whether `cut` keeps a line. Lines with a uuid: the kept messages, and subagent (sidechain) lines
 * written before the cut. Lines without one (titles, file-history snapshots, queue records): those
 * before the cut, unless they name a message the cut dropped; after the cut, only those naming
 * kept messages (a `summary` of a kept leaf) and session-level titles. `references` are the source
 * uuids the line names.
 */
export function keptByCut(cut: ClaudeCut, meta: LineMeta, references: readonly string[] = [], type?: unknown): boolean {
  if (meta.uuid) return cut.keepUuids.has(meta.uuid) || (meta.isSidechain && meta.line < cut.lastLine);
  const refsKept = references.every((r) => cut.keepUuids.has(r));
  if (meta.line < cut.lastLine) return refsKept;
  return (references.length > 0 && refsKept) || (typeof type === 'string' && SESSION_RECORD_TYPES.has(type));
}
