/**
 * How Claude Code 2.1.328 joins loaded lines into API messages (docs/resume-model.md §1.7):
 * attachment reminders bubble up and join the message before them, consecutive user messages
 * merge, and a last pass pairs every tool_result with the call right before it.
 */
import type { ContentBlock } from './types.js';

/** The part of a reconstructed message these steps read and write. */
export interface JoinableMessage {
  role: 'user' | 'assistant';
  content: ContentBlock[];
  lines: number[];
  /** The attachment type when the message is a rendered attachment reminder. */
  attachment?: string;
  isApiError?: boolean;
  injected?: boolean;
}

export const ORPHANED_TOOL_RESULT = '[Orphaned tool result removed due to conversation resume]';
export const TOOL_USE_INTERRUPTED = '[Tool use interrupted]';

/**
 * Attachments bubble up to just after the nearest assistant message (API-error placeholders
 * included) or user message that starts with a tool_result (E: W-A-skill-listing-after-prompt;
 * O: 512f6c74 lines 27-31).
 */
export function bubbleAttachments<M extends JoinableMessage>(messages: M[]): M[] {
  const out: M[] = [];
  let pending: M[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.attachment) {
      pending.push(m);
      continue;
    }
    const stop = m.role === 'assistant' || (m.role === 'user' && m.content[0]?.type === 'tool_result');
    if (stop && pending.length > 0) {
      out.push(...pending);
      pending = [];
    }
    out.push(m);
  }
  out.push(...pending);
  return out.reverse();
}

/** Claude Code's user merge (NU): a "\n" between two texts, then tool results first. */
export function mergeUser<M extends JoinableMessage>(a: M, b: M, onJoin?: (from: ContentBlock, to: ContentBlock) => void): M {
  const x = [...a.content];
  const last = x[x.length - 1];
  if (last?.type === 'text' && b.content[0]?.type === 'text') {
    const joined = { ...last, text: `${String(last.text)}\n` };
    onJoin?.(last, joined);
    x[x.length - 1] = joined;
  }
  const all = [...x, ...b.content];
  return {
    ...a,
    content: [...all.filter((k) => k.type === 'tool_result'), ...all.filter((k) => k.type !== 'tool_result')],
    lines: [...a.lines, ...b.lines],
    injected: a.injected && b.injected,
    attachment: undefined,
  };
}

/**
 * An attachment reminder joins the user message before it (Claude Code mXo): after a tool_result
 * it is folded into the result (string content: both trimmed and joined by a blank line; block
 * content: a "\n" on its last text, then the reminder block); otherwise it is appended, without a
 * "\n" on the text before it (E: W-A-hook-context-after-result, W-A-hook-context-after-array-result).
 */
export function appendAttachment<M extends JoinableMessage>(a: M, b: M): M {
  const x = [...a.content];
  const add = b.content;
  const last = x[x.length - 1];
  let content: ContentBlock[] | undefined;
  if (last?.type === 'tool_result' && add.every((k) => k.type === 'text')) {
    const c = last.content;
    if (typeof c === 'string' || c == null) {
      const folded = [String(c ?? '').trim(), ...add.map((k) => String(k.text).trim())].filter(Boolean).join('\n\n');
      content = [...x.slice(0, -1), { ...last, content: folded }];
    } else if (Array.isArray(c) && !c.some((k) => k.type === 'search_result')) {
      const lt = c[c.length - 1];
      const head = lt?.type === 'text' ? [...c.slice(0, -1), { ...lt, text: `${String(lt.text)}\n` }] : c;
      content = [...x.slice(0, -1), { ...last, content: [...head, ...add] as ContentBlock[] }];
    }
  }
  return { ...a, content: content ?? [...x, ...add], lines: [...a.lines, ...b.lines] };
}

const NO_CONTENT = '(no content)';

/**
 * Claude Code's last pass (ensureToolResultPairing): tool_result blocks answer the calls of the
 * assistant message right before them. Results after no assistant message are dropped (a first
 * message left empty becomes the "orphaned" text, a later one goes); results naming no call of
 * the reply before are removed (a message left empty: "(no content)"); a tool_use id used again
 * is removed from the later reply (E: W-A-orphan-first-result, A-drop-tool-use-relinked).
 */
export function ensureToolResultPairing<M extends JoinableMessage>(messages: M[]): M[] {
  const out: M[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== 'assistant') {
      if (out[out.length - 1]?.role !== 'assistant' && m.content.some((b) => b.type === 'tool_result')) {
        const rest = m.content.filter((b) => b.type !== 'tool_result');
        if (rest.length > 0) out.push({ ...m, content: rest });
        else if (out.length === 0) out.push({ ...m, content: [{ type: 'text', text: ORPHANED_TOOL_RESULT }] });
        continue;
      }
      out.push(m);
      continue;
    }
    const uses: string[] = [];
    const kept = m.content.filter((b) => {
      if (b.type !== 'tool_use') return b.type !== 'tool_result';
      const id = String(b.id);
      if (seen.has(id)) return false;
      seen.add(id);
      uses.push(id);
      return true;
    });
    out.push(kept.length === m.content.length ? m : { ...m, content: kept.length > 0 ? kept : [{ type: 'text', text: TOOL_USE_INTERRUPTED, citations: [] }] });
    const next = messages[i + 1];
    if (next?.role !== 'user') continue;
    const want = new Set(uses);
    const got = new Set<string>();
    const content = next.content.filter((b) => {
      if (b.type !== 'tool_result') return true;
      const id = String(b.tool_use_id);
      if (!want.has(id) || got.has(id)) return false;
      got.add(id);
      return true;
    });
    if (content.length !== next.content.length) {
      out.push({ ...next, content: content.length > 0 ? content : [{ type: 'text', text: NO_CONTENT }] });
      i++;
    }
  }
  return out;
}
