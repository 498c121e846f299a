/**
 * Context reconstruction for Claude Code: the message sequence the agent sends to the model when
 * the session is resumed. From the pass-1 index: pick the leaf, walk `parentUuid` back to the
 * root (a compact boundary is a root), bring back parallel tool-call siblings, drop sidechains
 * and non-message lines, then merge split assistant lines by `message.id` and consecutive user
 * lines into one message. Checked against the real CLI by the resume probe.
 */
import { readJsonl } from '../../core/jsonl.js';
import type { ClaudeIndex, LineMeta } from './scan.js';
import { contentBlocks, type ClaudeLine, type ContentBlock } from './types.js';

/** One message of the reconstructed context. */
export interface ContextMessage {
  role: 'user' | 'assistant';
  content: ContentBlock[];
  /** File lines (1-based) the message was built from. */
  lines: number[];
  /** True for the compaction summary that opens a compacted session. */
  isCompactSummary?: boolean;
  /** An API-error placeholder: part of the transcript, filtered out before sending. */
  isApiError?: boolean;
  /** Added by the agent on resume, not present in the file. */
  injected?: boolean;
}

export interface ClaudeContext {
  /** What the agent sends for the transcript (API errors filtered, same-role neighbours merged). */
  messages: ContextMessage[];
  /** The transcript's messages before that normalisation (API-error placeholders still in). */
  transcript: ContextMessage[];
  /** Line number of the leaf the agent resumes from, or undefined for an empty session. */
  leafLine?: number;
  /** Lines on the chain in order (before filtering to messages). */
  chainLines: number[];
  /** parentUuid values that point at no line in the file (a broken chain). */
  missingParents: { line: number; parentUuid: string }[];
}

function isMessageLine(m: LineMeta): boolean {
  return (m.kind === 'user' || m.kind === 'assistant') && !m.isSidechain;
}

/** Chooses the leaf and the chain of lines the agent would load, without reading content. */
export function selectChain(index: ClaudeIndex): Omit<ClaudeContext, 'messages'> {
  const byUuid = new Map<string, LineMeta>();
  for (const m of index.lines) if (m.uuid) byUuid.set(m.uuid, m);
  let leaf: LineMeta | undefined;
  for (let i = index.lines.length - 1; i >= 0; i--) {
    const m = index.lines[i]!;
    if (isMessageLine(m) && m.uuid) {
      leaf = m;
      break;
    }
  }
  const missingParents: ClaudeContext['missingParents'] = [];
  if (!leaf) return { chainLines: [], missingParents };

  const onChain = new Set<number>();
  const seen = new Set<string>();
  for (let cur: LineMeta | undefined = leaf; cur; ) {
    onChain.add(cur.line);
    if (cur.uuid) seen.add(cur.uuid);
    const parent = cur.parentUuid;
    if (parent === null || parent === undefined) break;
    if (seen.has(parent)) break; // a cycle: stop rather than loop
    const next = byUuid.get(parent);
    if (!next) {
      missingParents.push({ line: cur.line, parentUuid: parent });
      break;
    }
    cur = next;
  }

  // parallel tool calls: sibling lines of the same assistant message and the results that answer them
  const chainMessageIds = new Set<string>();
  const chainToolUses = new Set<string>();
  for (const m of index.lines) {
    if (!onChain.has(m.line)) continue;
    if (m.kind === 'assistant' && m.messageId) chainMessageIds.add(m.messageId);
    for (const u of m.toolUses) chainToolUses.add(u.id);
  }
  const firstChainLine = Math.min(...onChain);
  for (const m of index.lines) {
    if (onChain.has(m.line) || !isMessageLine(m) || m.line < firstChainLine) continue;
    if (m.kind === 'assistant' && m.messageId && chainMessageIds.has(m.messageId)) onChain.add(m.line);
    else if (m.kind === 'user' && m.toolResults.length > 0 && m.toolResults.every((r) => chainToolUses.has(r.toolUseId))) onChain.add(m.line);
  }
  const chainLines = [...onChain].sort((a, b) => a - b);
  return { leafLine: leaf.line, chainLines, missingParents };
}

/** Merges chain lines into API messages. `values` holds the parsed lines of the chain. */
export function buildMessages(index: ClaudeIndex, chainLines: number[], values: Map<number, ClaudeLine>): ContextMessage[] {
  const metaByLine = new Map(index.lines.map((m) => [m.line, m] as const));
  const messages: ContextMessage[] = [];
  let lastAssistantId: string | undefined;
  for (const lineNo of chainLines) {
    const meta = metaByLine.get(lineNo);
    const value = values.get(lineNo);
    if (!meta || !value || !isMessageLine(meta)) continue;
    const role = meta.kind as 'user' | 'assistant';
    const blocks = contentBlocks(value.message);
    const prev = messages[messages.length - 1];
    const sameAssistant = role === 'assistant' && prev?.role === 'assistant' && meta.messageId !== undefined && meta.messageId === lastAssistantId;
    if (prev && prev.role === role && !prev.isApiError && !meta.isApiError && (role === 'user' || sameAssistant)) {
      prev.content.push(...blocks);
      prev.lines.push(lineNo);
    } else {
      messages.push({
        role,
        content: [...blocks],
        lines: [lineNo],
        ...(meta.isCompactSummary ? { isCompactSummary: true } : {}),
        ...(meta.isApiError ? { isApiError: true } : {}),
      });
    }
    if (role === 'assistant') lastAssistantId = meta.messageId;
  }
  return messages;
}

/** API normalisation: drop API-error placeholders, merge messages of the same role that end up adjacent. */
export function normalizeForApi(transcript: ContextMessage[]): ContextMessage[] {
  const out: ContextMessage[] = [];
  for (const m of transcript) {
    if (m.isApiError) continue;
    const prev = out[out.length - 1];
    if (prev && prev.role === m.role) {
      prev.content = [...prev.content, ...m.content];
      prev.lines = [...prev.lines, ...m.lines];
    } else out.push({ ...m, content: [...m.content], lines: [...m.lines] });
  }
  return out;
}

/** Text Claude Code puts in the result of a tool call left open when the session ended. */
export const INTERRUPTED_TOOL_RESULT = "[Tool call interrupted: the session ended before this call's result was recorded]";
/** Text of the assistant placeholder Claude Code adds after a trailing user message. */
export const NO_RESPONSE_REQUESTED = 'No response requested.';

/**
 * The messages Claude Code sends when the session is resumed with a new prompt, as observed with
 * the real CLI: a tool call left open at the end gets an "interrupted" result, a trailing user
 * message gets an assistant placeholder, the prompt is appended, then API normalisation runs.
 * (The CLI's own system-role items and reminders are not modelled.)
 */
export function simulateClaudeResume(transcript: ContextMessage[], prompt: string): ContextMessage[] {
  const msgs = transcript.map((m) => ({ ...m }));
  const last = msgs[msgs.length - 1];
  if (last?.role === 'assistant' && !last.isApiError) {
    const open = last.content.filter((b) => b.type === 'tool_use').map((b) => String((b as { id?: unknown }).id));
    if (open.length > 0) {
      msgs.push({ role: 'user', content: open.map((id) => ({ type: 'tool_result', tool_use_id: id, content: INTERRUPTED_TOOL_RESULT, is_error: true })), lines: [], injected: true });
    }
  }
  if (msgs[msgs.length - 1]?.role === 'user') msgs.push({ role: 'assistant', content: [{ type: 'text', text: NO_RESPONSE_REQUESTED }], lines: [], injected: true });
  msgs.push({ role: 'user', content: [{ type: 'text', text: prompt }], lines: [], injected: true });
  return normalizeForApi(msgs);
}

/** Reads the chain's lines from the file and reconstructs the context. */
export async function reconstructClaudeContext(index: ClaudeIndex): Promise<ClaudeContext> {
  const chain = selectChain(index);
  const wanted = new Set(chain.chainLines);
  const values = new Map<number, ClaudeLine>();
  if (wanted.size > 0) {
    for await (const rec of readJsonl<ClaudeLine>(index.file, { onBadLine: 'yield' })) {
      if (rec.value && wanted.has(rec.raw.line)) values.set(rec.raw.line, rec.value);
    }
  }
  const transcript = buildMessages(index, chain.chainLines, values);
  return { ...chain, transcript, messages: normalizeForApi(transcript) };
}
