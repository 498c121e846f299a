/**
 * The trimmer's decisions, made from the pass-1 index alone (no content): which lines go, which
 * tool ids vanish with pre-boundary content, which turns stay untouched, which reads are
 * superseded, where removed lines' children must be relinked, and which tool calls need a
 * synthetic answer.
 */
import type { ClaudeIndex, LineMeta } from '../claude/scan.js';
import type { TrimPolicy } from './policy.js';
import { resolvePreserved, selectClaudeChain } from '../claude/chain.js';
import { roundTripAge, splitTail } from './turn-age.js';

export type RemovalReason = 'before-compaction' | 'metadata' | 'thinking';

export interface ClaudeTrimPlan {
  /** Line numbers (1-based) of lines removed entirely, with why. */
  removed: Map<number, RemovalReason>;
  /** Lines at or after this 1-based number are the protected tail (the last K turns). */
  protectedFromLine: number;
  /** First lines of the assistant messages before the tail, in file order (how old a line is). */
  turnStarts: number[];
  /** tool_use ids whose tool_use vanished with pre-boundary content. */
  vanishingToolUses: Set<string>;
  /**
   * tool_use ids answered by results the agent would drop as orphans: the call vanished with
   * pre-boundary content, or is in no line of the file (a session that continues another).
   */
  orphanResults: Set<string>;
  /** Line number → the parentUuid it gets: a parent that names no line becomes the line Claude Code bridges to, or a root. */
  reparent: Map<number, string | null>;
  /** tool_use ids of Read calls superseded by a newer read of the same file. */
  supersededReads: Set<string>;
  /** tool_use id → tool name and identifying input. */
  tools: Map<string, { name: string; target?: string }>;
  /** uuid of a removed line → the nearest kept ancestor (null at a root). */
  relink: ReadonlyMap<string, string | null>;
  /** Line number of an assistant line → tool_use ids on it answered by nobody but followed by more conversation. */
  unanswered: Map<number, string[]>;
  /**
   * The tail's thinking may go too: the last reply ends its turn (no call of it waits on a
   * result), so once the next prompt comes the API counts that thinking as a previous turn's,
   * which it accepts without. In an open tool loop the API requires it, so it stays.
   */
  tailThinking: boolean;
  /**
   * `keepErrors` holds for error results at or after this line: the current user turn, from the
   * last prompt on, where the agent may still be working through them. An error of an earlier
   * turn was followed by replies the user read and by a new request; it pages out like any old
   * result, its stub keeping the error status and the error line.
   */
  errorsKeptFromLine: number;
}

function isThinkingType(t: string): boolean {
  return t === 'thinking' || t === 'redacted_thinking';
}

function isThinkingOnly(m: LineMeta): boolean {
  return m.kind === 'assistant' && m.blockTypes.length > 0 && m.blockTypes.every(isThinkingType);
}

/** The last reply after `start` is complete and calls no tool (a reply cut off after its thinking is not). */
function lastReplyEndsTurn(lines: LineMeta[], start: number): boolean {
  for (let i = lines.length - 1; i >= start; i--) {
    const m = lines[i]!;
    if (m.kind !== 'assistant' || m.isSidechain || m.isApiError || m.blockTypes.length === 0) continue;
    return m.toolUses.length === 0 && !isThinkingOnly(m);
  }
  return false;
}

/** The last prompt the person typed after `start` that the trim keeps, or the window's first line when there is none. */
function currentTurnStart(lines: LineMeta[], start: number, removed: Map<number, RemovalReason>): number {
  for (let i = lines.length - 1; i >= start; i--) {
    const m = lines[i]!;
    if (m.isPrompt && !m.isSidechain && !removed.has(m.line)) return m.line;
  }
  return lines[start]?.line ?? 1;
}

/**
 * The first line of the K-th last assistant message after `start` (the protected tail), and the
 * first lines of the assistant messages before it.
 */
function protectedStart(lines: LineMeta[], start: number, keepLastTurns: number): { from: number; turnStarts: number[] } {
  const firstLineOfMessage: number[] = [];
  let lastId: string | undefined;
  for (let i = start; i < lines.length; i++) {
    const m = lines[i]!;
    if (m.kind !== 'assistant' || m.isSidechain) continue;
    const id = m.messageId ?? `line:${m.line}`;
    if (id !== lastId) firstLineOfMessage.push(m.line);
    lastId = id;
  }
  return splitTail(firstLineOfMessage, keepLastTurns);
}

/**
 * How many round trips before the protected tail a line is: 0 for the last one before it, -1
 * inside the tail. A tool result belongs to the round trip of the call it answers (the assistant
 * message that starts at or before it).
 */
export function ageOfLine(plan: Pick<ClaudeTrimPlan, 'protectedFromLine' | 'turnStarts'>, line: number): number {
  return roundTripAge(plan, line);
}

export function planClaudeTrim(index: ClaudeIndex, policy: TrimPolicy): ClaudeTrimPlan {
  const { lines } = index;
  const removed = new Map<number, RemovalReason>();
  const vanishingToolUses = new Set<string>();
  const tools = new Map<string, { name: string; target?: string }>();
  const boundary = policy.dropBeforeCompaction ? index.lastBoundary : -1;
  const byUuid = new Map<string, LineMeta>();
  for (const m of lines) if (m.uuid) byUuid.set(m.uuid, m);
  const preserved = new Set(boundary >= 0 ? (resolvePreserved(lines[boundary], byUuid)?.uuids ?? []) : []);
  const { from: protectedFromLine, turnStarts } = protectedStart(lines, Math.max(0, boundary), policy.keepLastTurns);

  for (const m of lines) for (const u of m.toolUses) tools.set(u.id, { name: u.name, ...(u.target ? { target: u.target } : {}) });

  // 1. content before the last compaction boundary (but summaries, preserved messages and the
  //    lines that carry no message: titles, modes, links and unknown types stay as they are)
  for (let i = 0; i < boundary; i++) {
    const m = lines[i]!;
    if (m.kind === 'summary' || m.kind === 'other' || (m.uuid && preserved.has(m.uuid))) continue;
    removed.set(m.line, 'before-compaction');
    for (const u of m.toolUses) vanishingToolUses.add(u.id);
  }
  // tool_uses that survive (preserved) are not vanishing even if listed above
  for (let i = 0; i < boundary; i++) {
    const m = lines[i]!;
    if (!removed.has(m.line)) for (const u of m.toolUses) vanishingToolUses.delete(u.id);
  }

  const tailThinking = policy.thinking && lastReplyEndsTurn(lines, Math.max(0, boundary));
  // 3. per-line removals after the boundary
  for (let i = Math.max(0, boundary); i < lines.length; i++) {
    const m = lines[i]!;
    if (removed.has(m.line)) continue;
    if (m.line >= protectedFromLine) {
      if (tailThinking && isThinkingOnly(m)) removed.set(m.line, 'thinking');
      continue;
    }
    if (policy.metadataLines && (m.kind === 'file-history-snapshot' || m.kind === 'queue-operation' || m.kind === 'progress')) {
      removed.set(m.line, 'metadata');
    } else if (policy.thinking && isThinkingOnly(m)) {
      // Claude Code drops a reply made only of thinking anyway, so removing the line keeps the structure
      removed.set(m.line, 'thinking');
    }
  }

  // 3b. results the agent would drop as orphans: their call vanished with pre-boundary content, or
  //     is in no line of the file at all (a session that continues another one)
  const present = new Set<string>();
  for (const m of lines) if (!removed.has(m.line)) for (const u of m.toolUses) present.add(u.id);
  const orphanResults = new Set<string>();
  for (let i = Math.max(0, boundary); i < lines.length; i++) {
    const m = lines[i]!;
    if (removed.has(m.line) || m.isSidechain) continue;
    for (const r of m.toolResults) if (vanishingToolUses.has(r.toolUseId) || !present.has(r.toolUseId)) orphanResults.add(r.toolUseId);
  }

  // 4. superseded reads: only the newest read of each file keeps its content
  const supersededReads = new Set<string>();
  if (policy.keepNewestReadOnly) {
    const newestRead = new Map<string, string>();
    for (const m of lines) for (const u of m.toolUses) if (u.name === 'Read' && u.target) newestRead.set(u.target, u.id);
    for (const m of lines) for (const u of m.toolUses) if (u.name === 'Read' && u.target && newestRead.get(u.target) !== u.id) supersededReads.add(u.id);
  }

  // 5. parents that name no line get the line Claude Code would bridge to, or none (the walk would
  //    end there anyway): the file then says what the agent does, whatever is removed around it
  const known = new Set<string>();
  for (const m of lines) if (m.uuid) known.add(m.uuid);
  const bridgeTo = new Map<number, string | null>();
  const dangling = lines.filter((m) => typeof m.parentUuid === 'string' && !known.has(m.parentUuid));
  if (dangling.length > 0) {
    const chain = selectClaudeChain(index);
    const uuidOfLine = new Map<number, string>();
    for (const m of lines) if (m.uuid) uuidOfLine.set(m.line, m.uuid);
    const bridged = new Map(chain.missingParents.filter((x) => x.bridgedTo !== undefined).map((x) => [x.line, uuidOfLine.get(x.bridgedTo!)] as const));
    for (const m of dangling) bridgeTo.set(m.line, bridged.get(m.line) ?? null);
  }
  const parentOf = (m: LineMeta) => (bridgeTo.has(m.line) ? bridgeTo.get(m.line)! : (m.parentUuid ?? null));

  // 5b. relink children of removed lines to the nearest kept ancestor (parents precede children)
  const relink = new Map<string, string | null>();
  const keptAncestor = (parent: string | null) => {
    let p = parent;
    for (let hops = 0; p !== null && relink.has(p) && hops < lines.length + 1; hops++) p = relink.get(p)!;
    return p;
  };
  for (const m of lines) if (removed.has(m.line) && m.uuid) relink.set(m.uuid, keptAncestor(parentOf(m)));
  const reparent = new Map<number, string | null>();
  for (const m of dangling) if (!removed.has(m.line)) reparent.set(m.line, keptAncestor(bridgeTo.get(m.line)!));

  // 6. tool calls nobody answers although the conversation goes on after them
  const answered = new Set<string>();
  for (const m of lines) if (!removed.has(m.line)) for (const r of m.toolResults) if (!orphanResults.has(r.toolUseId)) answered.add(r.toolUseId);
  const unanswered = new Map<number, string[]>();
  let lastConversationLine = 0;
  for (const m of lines) if ((m.kind === 'user' || m.kind === 'assistant') && !m.isSidechain && !removed.has(m.line)) lastConversationLine = m.line;
  const lastLineOfMessage = new Map<string, number>();
  for (const m of lines) if (m.kind === 'assistant' && m.messageId && !removed.has(m.line)) lastLineOfMessage.set(m.messageId, m.line);
  for (const m of lines) {
    if (m.kind !== 'assistant' || m.isSidechain || removed.has(m.line)) continue;
    const open = m.toolUses.filter((u) => !answered.has(u.id)).map((u) => u.id);
    if (open.length === 0) continue;
    const anchor = (m.messageId && lastLineOfMessage.get(m.messageId)) || m.line;
    if (anchor >= lastConversationLine) continue; // the session ends here: the agent resolves it itself
    unanswered.set(anchor, [...(unanswered.get(anchor) ?? []), ...open]);
  }

  const errorsKeptFromLine = policy.keepErrors ? currentTurnStart(lines, Math.max(0, boundary), removed) : Number.POSITIVE_INFINITY;
  return { removed, protectedFromLine, turnStarts, vanishingToolUses, orphanResults, reparent, supersededReads, tools, relink, unanswered, tailThinking, errorsKeptFromLine };
}
