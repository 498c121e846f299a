/**
 * Pass 2 of the Codex trimmer: decisions made from the pass-1 index alone (no content): which
 * lines go (history a compaction replaced, reasoning of earlier round trips, display-only events,
 * ghost snapshots, outputs whose call is gone), which round trips stay untouched, which reads are
 * superseded, and which calls need the "aborted" output Codex would add itself.
 */
import type { TrimPolicy } from '../trim/policy.js';
import type { CodexIndex, CodexLineMeta } from './scan.js';
import { isCallType, isModelOutput, isOutputType, outputTypeFor } from './types.js';
import { roundTripAge, splitTail } from '../trim/turn-age.js';

export type CodexRemovalReason = 'before-compaction' | 'orphan-output' | 'reasoning' | 'event' | 'ghost-snapshot';

/**
 * `event_msg` types that only feed the UI or telemetry (token counts, duplicates of items,
 * command progress): paged out. Every other event stays, known or not — `user_message`,
 * `task_started`/`turn_started`, `task_complete`/`turn_complete`, `turn_aborted` and
 * `thread_rolled_back` drive Codex's resume replay (user-turn segments, the previous model,
 * rollback), and the session listing requires a `user_message` event among the first lines.
 */
export const CODEX_DISPLAY_EVENT_TYPES: ReadonlySet<string> = new Set([
  'token_count',
  'agent_message',
  'agent_message_delta',
  'agent_reasoning',
  'agent_reasoning_delta',
  'agent_reasoning_raw_content',
  'agent_reasoning_raw_content_delta',
  'agent_reasoning_section_break',
  'exec_command_begin',
  'exec_command_output_delta',
  'exec_command_end',
  'patch_apply_begin',
  'patch_apply_end',
  'mcp_tool_call_begin',
  'mcp_tool_call_end',
  'web_search_begin',
  'web_search_end',
  'view_image_tool_call',
  'turn_diff',
  'background_event',
  'stream_error',
]);

export interface CodexCallFacts {
  /** Item type of the call. */
  type: string;
  name?: string;
  target?: string;
  /** A pure file read (`read_file`, or a lone cat/sed -n/head…): its output is a view of a file in the workspace. */
  fileRead?: boolean;
}

export interface CodexTrimPlan {
  /** Line numbers (1-based) removed entirely, with why. */
  removed: Map<number, CodexRemovalReason>;
  /** Lines at or after this 1-based number are the protected tail (the last K round trips). */
  protectedFromLine: number;
  /** First lines of the model round trips before the tail, in file order (how old a line is). */
  turnStarts: number[];
  /** call_id → the call's type, tool name and identifying argument. */
  calls: Map<string, CodexCallFacts>;
  /** call_ids of pure reads superseded by a later identical read. */
  supersededReads: Set<string>;
  /** Line of a call → the output Codex would add for it ("aborted"), written right after it. */
  unanswered: Map<number, { callId: string; type: 'function_call_output' | 'custom_tool_call_output' }>;
  /** Index in `lines` of the compaction whose earlier history was dropped, or -1. */
  boundary: number;
  /** `keepErrors` holds for failed outputs at or after this line: the current user turn, from the last user message on (see ClaudeTrimPlan). */
  errorsKeptFromLine: number;
}

/** One entry of the history shape: a file line's item, or an item a `compacted` line supplies. */
export interface ShapeEntry {
  type: string;
  role?: string;
  callId?: string;
  isUserTurn: boolean;
  /** Line of the item, or of the `compacted` line that supplied it. */
  line: number;
  meta?: CodexLineMeta;
}

/** The history's shape (reconstruction on the index, §2.5), ignoring `removed` lines. */
export function historyShape(index: CodexIndex, removed: ReadonlyMap<number, unknown> = new Map()): ShapeEntry[] {
  let h: ShapeEntry[] = [];
  for (const m of index.lines) {
    if (removed.has(m.line)) continue;
    if (m.kind === 'response_item' && m.payloadType !== 'ghost_snapshot') {
      h.push({ type: m.payloadType ?? '', ...(m.role ? { role: m.role } : {}), ...(m.callId ? { callId: m.callId } : {}), isUserTurn: m.isUserTurn, line: m.line, meta: m });
    } else if (m.kind === 'compacted') {
      h = m.replacement
        ? m.replacement.map((r) => ({ ...r, line: m.line }))
        : [...h.filter((e) => e.isUserTurn), { type: 'message', role: 'user', isUserTurn: true, line: m.line }];
    } else if (m.kind === 'event_msg' && m.payloadType === 'thread_rolled_back') {
      const turns: number[] = [];
      h.forEach((e, i) => {
        if (e.isUserTurn) turns.push(i);
      });
      const n = m.numTurns ?? 0;
      if (n > 0 && turns.length > 0) h = h.slice(0, turns[Math.max(0, turns.length - n)]);
    }
  }
  return h;
}

/** First line of the K-th last model round trip (a run of model output items) at or after `start`, and the starts before it. */
function protectedStart(lines: CodexLineMeta[], start: number, keepLastTurns: number): { from: number; turnStarts: number[] } {
  const runStarts: number[] = [];
  let prevWasOutput = false;
  for (let i = Math.max(0, start); i < lines.length; i++) {
    const m = lines[i]!;
    if (m.kind !== 'response_item' || m.payloadType === 'ghost_snapshot') continue;
    const out = isModelOutput(m.payloadType, m.role);
    if (out && !prevWasOutput) runStarts.push(m.line);
    prevWasOutput = out;
  }
  return splitTail(runStarts, keepLastTurns);
}

/** Round trips between a line and the protected tail: 0 for the last one before it, -1 inside it. */
export function codexAgeOfLine(plan: Pick<CodexTrimPlan, 'protectedFromLine' | 'turnStarts'>, line: number): number {
  return roundTripAge(plan, line);
}

export function planCodexTrim(index: CodexIndex, policy: TrimPolicy): CodexTrimPlan {
  const { lines } = index;
  const removed = new Map<number, CodexRemovalReason>();
  const calls = new Map<string, CodexCallFacts>();
  for (const m of lines) {
    if (m.kind === 'response_item' && isCallType(m.payloadType) && m.callId) {
      calls.set(m.callId, { type: m.payloadType!, ...(m.toolName ? { name: m.toolName } : {}), ...(m.target ? { target: m.target } : {}), ...(m.readKey ? { fileRead: true } : {}) });
    }
  }

  // 1. history a compaction replaced. With replacement_history nothing before it is history;
  // without, the user turns before it are rebuilt into history, so they stay. Rollback events
  // count user turns, so keeping every user turn keeps their effect. A rollback after a
  // replacement compaction may reach behind it in Codex's segment replay: then nothing is dropped.
  let boundary = policy.dropBeforeCompaction ? index.lastCompacted : -1;
  if (boundary >= 0 && lines[boundary]!.replacement && lines.slice(boundary + 1).some((m) => m.kind === 'event_msg' && m.payloadType === 'thread_rolled_back')) boundary = -1;
  if (boundary >= 0) {
    const keepUserTurns = !lines[boundary]!.replacement;
    for (let i = 0; i < boundary; i++) {
      const m = lines[i]!;
      if (m.kind === 'response_item' && !(keepUserTurns && m.isUserTurn)) removed.set(m.line, 'before-compaction');
    }
  }

  const { from: protectedFromLine, turnStarts } = protectedStart(lines, boundary, policy.keepLastTurns);

  // 2. per-line removals outside the protected round trips: nothing here is sent except reasoning,
  // which goes as whole items (never its encrypted_content alone, resume-model.md §4)
  for (const m of lines) {
    if (removed.has(m.line) || m.line >= protectedFromLine) continue;
    if (m.kind === 'response_item' && m.payloadType === 'reasoning' && policy.thinking) removed.set(m.line, 'reasoning');
    else if (m.kind === 'response_item' && m.payloadType === 'ghost_snapshot' && policy.metadataLines) removed.set(m.line, 'ghost-snapshot');
    else if (m.kind === 'event_msg' && m.payloadType && CODEX_DISPLAY_EVENT_TYPES.has(m.payloadType) && policy.metadataLines) removed.set(m.line, 'event');
  }

  // 3. outputs whose call is not in the history before them: Codex drops them, so can we
  let shape = historyShape(index, removed);
  const seenCalls = new Set<string>();
  for (const e of shape) {
    if (isCallType(e.type) && e.callId) seenCalls.add(e.callId);
    else if (isOutputType(e.type) && e.callId && !seenCalls.has(e.callId) && e.meta) removed.set(e.line, 'orphan-output');
  }
  shape = shape.filter((e) => !removed.has(e.line) || !e.meta);

  // 4. superseded reads: only the newest identical read keeps its output
  const supersededReads = new Set<string>();
  if (policy.keepNewestReadOnly) {
    const newest = new Map<string, string>();
    for (const e of shape) if (e.meta?.readKey && e.callId) newest.set(e.meta.readKey, e.callId);
    for (const e of shape) if (e.meta?.readKey && e.callId && newest.get(e.meta.readKey) !== e.callId) supersededReads.add(e.callId);
  }

  // 5. calls never answered although the conversation went on: Codex would add "aborted" right
  // after them on resume; writing that output makes the file say what Codex sends
  const unanswered = new Map<number, { callId: string; type: 'function_call_output' | 'custom_tool_call_output' }>();
  const lastOutput = new Map<string, number>();
  let lastMessage = -1;
  let lastRunStart = -1;
  shape.forEach((e, i) => {
    if (isOutputType(e.type) && e.callId) lastOutput.set(e.callId, i);
    if (e.type === 'message') lastMessage = i;
    const prev = shape[i - 1];
    if (isModelOutput(e.type, e.role) && !(prev && isModelOutput(prev.type, prev.role))) lastRunStart = i;
  });
  shape.forEach((e, i) => {
    if (!isCallType(e.type) || !e.callId || !e.meta || (lastOutput.get(e.callId) ?? -1) > i) return;
    if (i < lastRunStart || lastMessage > i) unanswered.set(e.line, { callId: e.callId, type: outputTypeFor(e.type) });
  });

  // 6. the current user turn, where a failure may still be worked on (keepErrors)
  let errorsKeptFromLine = Number.POSITIVE_INFINITY;
  if (policy.keepErrors) {
    const firstLine = lines[Math.max(0, boundary)]?.line ?? 1;
    const lastTurn = lines.findLast((m) => m.line >= firstLine && m.kind === 'response_item' && m.isUserTurn && !removed.has(m.line));
    errorsKeptFromLine = lastTurn?.line ?? firstLine;
  }

  return { removed, protectedFromLine, turnStarts, calls, supersededReads, unanswered, boundary, errorsKeptFromLine };
}
