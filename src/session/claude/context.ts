/**
 * Context reconstruction for Claude Code: the messages the agent sends to the model when the
 * session is resumed (resume-model.md §1.6–1.8). The chain comes from chain.ts; this file maps its
 * lines to messages, adds the repairs Claude Code makes at the end of a conversation, and applies
 * the API normalisation (merges and silent repairs). Checked against the real CLI by the probe.
 */
import { readLineBatches } from '../../core/jsonl.js';
import { appendAttachment, bubbleAttachments, ensureToolResultPairing, mergeUser as joinUsers } from './api-messages.js';
import { renderAttachment } from './attachments.js';
import { selectClaudeChain } from './chain.js';
import { leanClaudeLine } from './lean-line.js';
import { endsWithLocalCommandRecord } from './local-command.js';
import { claudeResumeModel, usesSystemEntries } from './resume-model.js';
import type { ClaudeIndex, LineMeta } from './scan.js';
import { contentBlocks, type ClaudeLine, type ContentBlock } from './types.js';

/** One message of the reconstructed context. */
export interface ContextMessage {
  role: 'user' | 'assistant';
  content: ContentBlock[];
  /** File lines (1-based) the message was built from (none for messages the agent adds). */
  lines: number[];
  /** API message id of an assistant reply (split lines share it). */
  messageId?: string;
  /** True for the compaction summary that opens a compacted session. */
  isCompactSummary?: boolean;
  /** An API-error placeholder: part of the transcript, dropped before sending. */
  isApiError?: boolean;
  /** Added by the agent on resume ("interrupted" tool results, "No response requested."). */
  injected?: boolean;
  /** A rendered `attachment` line (its type); its text is Claude Code's reminder for the payload. */
  attachment?: string;
}

/** An attachment rendered as a `role:"system"` entry (models that take those, §1.9.1). */
export interface SystemEntry {
  line: number;
  type: string;
  text: string;
}

export interface ClaudeContext {
  /** What the agent sends for the file (its repairs applied): the file-derived context. */
  messages: ContextMessage[];
  /** The same, merged but without the agent's silent repairs: what the file itself says. */
  strict: ContextMessage[];
  /** Loaded lines mapped to messages, before normalisation. */
  transcript: ContextMessage[];
  /** Line the agent resumes from. */
  leafLine?: number;
  /** Lines loaded, in the order they are sent (see ClaudeChain.lines). */
  chainLines: number[];
  /** parentUuid links naming no loaded line (bridged by timestamp or where the chain ends). */
  missingParents: { line: number; parentUuid: string; bridgedTo?: number }[];
  /** Model of the last real assistant reply. */
  model?: string;
  /** The model Claude Code 2.1.328 resumes with (the recorded one, or its default when retired or unknown). */
  resumeModel: string;
  /** Attachments sent as `role:"system"` entries rather than in user messages (newer models). */
  systemEntries: SystemEntry[];
  /** Attachment lines on the chain whose rendering ctxvm does not reproduce. */
  unmodelledAttachments: { line: number; type: string }[];
}

export const INTERRUPTED_TOOL_RESULT =
  "[Tool call interrupted: the session ended before this call's result was recorded, so its outcome is unknown. Check whether it took effect before relying on it or running it again.]";
export const NO_RESPONSE_REQUESTED = 'No response requested.';
export const NO_CONTENT = '(no content)';
/** Tool names Claude Code renames when it sends an older transcript. */
const TOOL_RENAMES: Readonly<Record<string, string>> = { Task: 'Agent' };

/** Blocks that hold a compaction summary or an attachment reminder (tagged without touching the block, which is sent as is). */
const summaryBlocks = new WeakSet<object>();

/** True for a block of the compaction summary or of an attachment reminder (counted as system text, not user text). */
export function isSummaryBlock(block: ContentBlock): boolean {
  return summaryBlocks.has(block);
}

/** Claude Code appends this text to a user line whose tool_result loads deferred tools (`tool_reference` blocks). */
export const TOOL_LOADED = 'Tool loaded.';
const loadsTools = (content: ContentBlock[]) =>
  content.some((b) => b.type === 'tool_result' && Array.isArray(b.content) && (b.content as ContentBlock[]).some((k) => k?.type === 'tool_reference'));

const isThinking = (b: ContentBlock) => b.type === 'thinking' || b.type === 'redacted_thinking';
const toolUseIds = (m: ContextMessage | undefined) => (m ? m.content.filter((b) => b.type === 'tool_use').map((b) => String(b.id)) : []);
const toolResultIds = (m: ContextMessage | undefined) => (m ? m.content.filter((b) => b.type === 'tool_result').map((b) => String(b.tool_use_id)) : []);

export interface LineMapping {
  messages: ContextMessage[];
  systemEntries: SystemEntry[];
  unmodelledAttachments: { line: number; type: string }[];
}

/**
 * Maps loaded lines to messages (§1.6). `model` is the model the session resumes with: thinking
 * written by another model is not sent (§1.7.0), and with a model that takes `role:"system"`
 * entries, attachment reminders go there instead of into user messages (§1.9.1).
 */
export function mapLines(metas: LineMeta[], values: Map<number, ClaudeLine>, model: string): LineMapping {
  const out: ContextMessage[] = [];
  const systemEntries: SystemEntry[] = [];
  const unmodelledAttachments: LineMapping['unmodelledAttachments'] = [];
  const toSystem = usesSystemEntries(model);
  for (const meta of metas) {
    const value = values.get(meta.line);
    if (!value || meta.isSidechain) continue;
    if (meta.kind === 'system') {
      if (meta.subtype !== 'local_command' || meta.isDisplayOnly || typeof value.content !== 'string') continue;
      out.push({ role: 'user', content: [{ type: 'text', text: value.content }], lines: [meta.line] });
      continue;
    }
    if (meta.kind === 'attachment') {
      const att = value.attachment as { type?: unknown } | undefined;
      const type = typeof att?.type === 'string' ? att.type : 'unknown';
      const r = renderAttachment(att);
      if (r.unmodelled) unmodelledAttachments.push({ line: meta.line, type });
      if (r.text === undefined) continue;
      if (toSystem) {
        systemEntries.push({ line: meta.line, type, text: r.text });
        continue;
      }
      const block: ContentBlock = { type: 'text', text: r.text };
      summaryBlocks.add(block);
      out.push({ role: 'user', content: [block], lines: [meta.line], attachment: type });
      continue;
    }
    if ((meta.kind !== 'user' && meta.kind !== 'assistant') || !value.message) continue;
    if (meta.isApiError) {
      out.push({ role: 'assistant', content: [], lines: [meta.line], isApiError: true });
      continue;
    }
    if (meta.kind === 'user' && meta.emptyContent) continue;
    let content = contentBlocks(value.message);
    if (meta.isCompactSummary) {
      content = content.map((b) => ({ ...b }));
      content.forEach((b) => summaryBlocks.add(b));
    }
    if (meta.kind === 'assistant') {
      content = content.map((b) => (b.type === 'tool_use' && TOOL_RENAMES[String(b.name)] ? { ...b, name: TOOL_RENAMES[String(b.name)] } : b));
      // a signature is bound to the model that wrote the thinking (E: W-B-mid-model-sonnet45)
      if (value.message.model !== model) content = content.filter((b) => !isThinking(b));
    } else if (loadsTools(content) && !content.some((b) => b.type === 'text' && String(b.text).startsWith(TOOL_LOADED))) {
      content = [...content, { type: 'text', text: TOOL_LOADED }];
    }
    out.push({
      role: meta.kind,
      content,
      lines: [meta.line],
      ...(meta.messageId ? { messageId: meta.messageId } : {}),
      ...(meta.isCompactSummary ? { isCompactSummary: true } : {}),
    });
  }
  return { messages: out, systemEntries, unmodelledAttachments };
}

/** Maps loaded lines to messages (§1.6) for a session resumed with the model its last reply names. */
export function linesToMessages(metas: LineMeta[], values: Map<number, ClaudeLine>, model = claudeResumeModel(recordedModel(metas, values))): ContextMessage[] {
  return mapLines(metas, values, model).messages;
}

/** Model of the last real assistant reply among the loaded lines. */
function recordedModel(metas: LineMeta[], values: Map<number, ClaudeLine>): string | undefined {
  let model: string | undefined;
  for (const m of metas) {
    const v = values.get(m.line);
    if (m.kind === 'assistant' && !m.isApiError && typeof v?.message?.model === 'string' && v.message.model !== '<synthetic>') model = v.message.model;
  }
  return model;
}

/**
 * What Claude Code appends when the loaded conversation ends mid-turn (§1.8). `endsWithRecord`:
 * the chain ends with a local-command record (§1.8.2), after which nothing is appended.
 */
export function resumeRepairs(transcript: ContextMessage[], endsWithRecord = false): ContextMessage[] {
  const added: ContextMessage[] = [];
  const real = transcript.filter((m) => !m.attachment);
  const last = real[real.length - 1];
  if (last?.role === 'assistant' && !last.isApiError) {
    const group = real.filter((m) => m.role === 'assistant' && m.messageId !== undefined && m.messageId === last.messageId);
    const open = [...new Set([...group.flatMap((m) => toolUseIds(m)), ...toolUseIds(last)])];
    if (open.length > 0) {
      added.push({ role: 'user', content: open.map((id) => ({ type: 'tool_result', tool_use_id: id, content: INTERRUPTED_TOOL_RESULT, is_error: true })), lines: [], injected: true });
    }
  }
  const end = added[added.length - 1] ?? last;
  if (end?.role === 'user' && (added.length > 0 || !endsWithRecord)) added.push({ role: 'assistant', content: [{ type: 'text', text: NO_RESPONSE_REQUESTED }], lines: [], injected: true });
  return added;
}

/** Merges two user messages the way Claude Code does: tool results first, a "\n" between texts. */
function mergeUser(a: ContextMessage, b: ContextMessage): ContextMessage {
  return joinUsers(a, b, (from, to) => {
    if (summaryBlocks.has(from)) summaryBlocks.add(to);
  });
}

export interface NormalizeOptions {
  /** Apply Claude Code's silent repairs (default true); the validator turns them off. */
  repair?: boolean;
}

/** API normalisation (§1.7): drop API-error placeholders, merge, and (optionally) repair. */
export function normalizeForApi(messages: ContextMessage[], options: NormalizeOptions = {}): ContextMessage[] {
  const repair = options.repair !== false;
  const out: ContextMessage[] = [];
  for (const m of bubbleAttachments(messages)) {
    if (m.isApiError) continue;
    const prev = out[out.length - 1];
    if (m.role === 'assistant' && prev?.role === 'assistant' && m.messageId && prev.messageId === m.messageId) {
      out[out.length - 1] = { ...prev, content: [...prev.content, ...m.content], lines: [...prev.lines, ...m.lines] };
      continue;
    }
    // a split line written after some of its results joins its reply (streaming tool execution)
    const before = out[out.length - 2];
    if (m.role === 'assistant' && m.messageId && prev?.role === 'user' && before?.role === 'assistant' && before.messageId === m.messageId && prev.content.every((b) => b.type === 'tool_result')) {
      out[out.length - 2] = { ...before, content: [...before.content, ...m.content], lines: [...before.lines, ...m.lines] };
      continue;
    }
    if (m.role === 'user' && prev?.role === 'user') {
      out[out.length - 1] = m.attachment ? { ...appendAttachment(prev, m), attachment: prev.attachment } : mergeUser(prev, m);
      continue;
    }
    out.push({ ...m, content: [...m.content], lines: [...m.lines] });
  }
  if (!repair) return out;

  for (const m of out) {
    if (m.role !== 'assistant') continue;
    const c = m.content.filter((b) => !(b.type === 'text' && b.text === ''));
    const firstTool = c.findIndex((b) => b.type === 'tool_use');
    m.content = firstTool >= 0 && c.slice(firstTool).some((b) => b.type !== 'tool_use') ? [...c.filter((b) => b.type !== 'tool_use'), ...c.filter((b) => b.type === 'tool_use')] : c;
  }
  // unanswered tool uses disappear from their reply
  out.forEach((m, i) => {
    if (m.role !== 'assistant') return;
    const answered = new Set(out[i + 1]?.role === 'user' ? toolResultIds(out[i + 1]) : []);
    if (m.content.some((b) => b.type === 'tool_use' && !answered.has(String(b.id)))) m.content = m.content.filter((b) => b.type !== 'tool_use' || answered.has(String(b.id)));
  });
  // thinking-only and whitespace-only replies are dropped; users around them merge
  const kept = out.filter(
    (m) => !(m.role === 'assistant' && m.content.length > 0 && m.content.every((b) => isThinking(b) || (b.type === 'text' && ['', NO_CONTENT].includes(String(b.text).trim())))),
  );
  const merged: ContextMessage[] = [];
  for (const m of kept) {
    const prev = merged[merged.length - 1];
    if (m.role === 'user' && prev?.role === 'user') merged[merged.length - 1] = mergeUser(prev, m);
    else merged.push(m);
  }
  const lastA = merged[merged.length - 1];
  if (lastA?.role === 'assistant' && lastA.content.length > 0 && isThinking(lastA.content[lastA.content.length - 1]!)) {
    let k = lastA.content.length;
    while (k > 0 && isThinking(lastA.content[k - 1]!)) k--;
    lastA.content = k ? lastA.content.slice(0, k) : [{ type: 'text', text: '[No message content]', citations: [] }];
  }
  for (const m of merged) if (m.role === 'assistant' && m.content.length === 0) m.content = [{ type: 'text', text: NO_CONTENT, citations: [] }];
  // orphan tool results go (a message left empty: "(no content)"), repeated tool ids too
  return ensureToolResultPairing(merged);
}

/** The request's messages once the user sends `prompt` (the agent's system reminders not modelled). */
export function withPrompt(messages: ContextMessage[], prompt: string): ContextMessage[] {
  const next: ContextMessage = { role: 'user', content: [{ type: 'text', text: prompt }], lines: [], injected: true };
  const last = messages[messages.length - 1];
  if (last?.role === 'user') return [...messages.slice(0, -1), { ...last, content: [...last.content, ...next.content] }];
  return [...messages, next];
}

export interface ReconstructOptions {
  /**
   * Keep lean lines (lean-line.ts): the context then answers validation exactly but holds
   * stand-ins for long texts and no `messages` (validation reads `strict`), so it must not be
   * counted or shown. Memory stays small on a transcript of any size.
   */
  lean?: boolean;
  /** Lean lines already at hand, by line number (see `LeanLines`); the chain's other lines are read. */
  leanValues?: Pick<ReadonlyMap<number, Record<string, unknown>>, 'get'>;
  /** Called as the file is read for the chain's lines, with the bytes read so far. */
  onProgress?: (bytesRead: number) => void;
  signal?: AbortSignal;
}

/** Reconstructs the context from the index (reads, and parses, only the loaded lines). */
export async function reconstructClaudeContext(index: ClaudeIndex, options: ReconstructOptions = {}): Promise<ClaudeContext> {
  const chain = selectClaudeChain(index);
  const wanted = new Set(chain.lines);
  const values = new Map<number, ClaudeLine>();
  if (options.leanValues) {
    for (const line of chain.lines) {
      const v = options.leanValues.get(line);
      if (v) {
        values.set(line, v as ClaudeLine);
        wanted.delete(line);
      }
    }
  }
  if (wanted.size > 0) {
    for await (const batch of readLineBatches(index.file, { reuseBuffers: true, ...(options.signal ? { signal: options.signal } : {}) })) {
      const last = batch[batch.length - 1];
      if (last) options.onProgress?.(last.byteOffset + last.bytes.length + last.eol.length);
      for (const raw of batch) {
        if (!wanted.has(raw.line)) continue;
        let value: unknown;
        try {
          value = JSON.parse(raw.text);
        } catch {
          continue; // a bad line is the scan's finding
        }
        if (!value) continue;
        if (typeof value === 'object' && !Array.isArray(value)) {
          if (options.lean) value = leanClaudeLine(value as Record<string, unknown>);
          // the side channel repeats a tool's output for the UI, and nothing here reads it: on a
          // tool-heavy session it is near half the bytes a full load would otherwise hold
          else delete (value as ClaudeLine).toolUseResult;
        }
        values.set(raw.line, value as ClaudeLine);
      }
    }
  }
  const metaByLine = new Map(index.lines.map((m) => [m.line, m] as const));
  const metas = chain.lines.map((l) => metaByLine.get(l)!).filter(Boolean);
  const model = recordedModel(metas, values);
  const resumeModel = claudeResumeModel(model);
  const mapped = mapLines(metas, values, resumeModel);
  const transcript = mapped.messages;
  // a lean context is for validation, which reads what the file says (`strict`), not the repaired messages
  let messages: ContextMessage[] = [];
  if (!options.lean) {
    const loaded = metas.filter((m) => !m.isSidechain).map((m) => values.get(m.line)).filter((v): v is ClaudeLine => v !== undefined);
    messages = normalizeForApi([...transcript, ...resumeRepairs(transcript, endsWithLocalCommandRecord(loaded))]);
  }
  return {
    messages,
    strict: normalizeForApi(transcript, { repair: false }),
    transcript,
    ...(chain.leafLine !== undefined ? { leafLine: chain.leafLine } : {}),
    chainLines: chain.lines,
    missingParents: chain.missingParents,
    ...(model ? { model } : {}),
    resumeModel,
    systemEntries: mapped.systemEntries,
    unmodelledAttachments: mapped.unmodelledAttachments,
  };
}
