/**
 * Context reconstruction for Codex CLI: the items Codex 0.169 sends for a rollout on
 * `codex resume`, per docs/resume-model.md §2 (checked against the real CLI by the resume probe).
 * Every `response_item` in file order except `ghost_snapshot`; a `compacted` line replaces what
 * came before (by its `replacement_history`, or by the user turns so far plus its summary);
 * `thread_rolled_back` drops the last N user turns; long call outputs are middle-truncated; then
 * Codex's own repairs: a call without output gets an "aborted" output, an output without call is
 * dropped.
 */
import { readLines } from '../../core/jsonl.js';
import type { AgentContext, ContextEntry, ContextPart, TokenCategory } from '../context-model.js';
import type { CodexIndex, CodexLineMeta } from './scan.js';
import { isCallType, isOutputType, isUserTurnItem, outputTypeFor, type CodexContentBlock, type CodexItem, type CodexLine } from './types.js';

/**
 * Output budget of Codex 0.169's default model: a 10 000-token policy plus a 20 % serialisation
 * allowance, counted as ⌈bytes / 4⌉. Longer `*_call_output` text is middle-truncated on load
 * (resume-model.md §2.2: 400 000 chars → 48 024).
 */
export const CODEX_OUTPUT_BUDGET_TOKENS = 12_000;
/** Bytes per token in Codex's own approximate count. */
export const CODEX_BYTES_PER_TOKEN = 4;
/** Output text Codex gives a call whose output is missing. */
export const CODEX_ABORTED_OUTPUT = 'aborted';

/**
 * Codex's middle truncation of a call output: above the budget, keep half the budget's bytes of
 * head and of tail (cut at UTF-8 character boundaries) around "…N tokens truncated…".
 */
export function truncateCodexOutput(text: string, budgetTokens: number = CODEX_OUTPUT_BUDGET_TOKENS): string {
  const buf = Buffer.from(text, 'utf8');
  const total = Math.ceil(buf.length / CODEX_BYTES_PER_TOKEN);
  if (total <= budgetTokens) return text;
  const half = (budgetTokens * CODEX_BYTES_PER_TOKEN) / 2;
  let a = half;
  while (a > 0 && (buf[a]! & 0xc0) === 0x80) a--;
  let b = buf.length - half;
  while (b < buf.length && (buf[b]! & 0xc0) === 0x80) b++;
  return `${buf.subarray(0, a).toString('utf8')}…${total - budgetTokens} tokens truncated…${buf.subarray(b).toString('utf8')}`;
}

/** One item of the reconstructed context. */
export interface CodexContextItem {
  /** The item (as the file holds it in `history`, as Codex sends it in `items`). */
  item: CodexItem;
  /** 1-based file line it came from (the `compacted` line for rebuilt items); 0 for a repair. */
  line: number;
  /** Added by Codex on resume: the output of a call that has none. */
  synthetic?: 'aborted';
  /** The summary message built from a `compacted` line without replacement history. */
  compactionSummary?: true;
  /** Came from a `compacted` line's replacement_history (sent as recorded: never truncated). */
  replacement?: true;
  /** Set when Codex middle-truncates this output: its original size in bytes. */
  truncatedFromBytes?: number;
}

export interface CodexContext {
  /** What Codex sends for the rollout: compaction and rollback applied, outputs truncated, repairs made. */
  items: CodexContextItem[];
  /** What the file says: compaction and rollback applied, items verbatim, no repairs. */
  history: CodexContextItem[];
  /** Line of the last `compacted` line, if any. */
  lastCompactedLine?: number;
  /** `thread_rolled_back` events applied. */
  rollbacks: number;
  /** Model of the last turn_context line. */
  model?: string;
}

/** Incremental history builder: feed rollout lines in file order, then `finish()`. */
export interface CodexHistoryBuilder {
  add(line: number, value: CodexLine): void;
  finish(): { history: CodexContextItem[]; lastCompactedLine?: number; rollbacks: number };
}

export function createCodexHistoryBuilder(): CodexHistoryBuilder {
  let history: CodexContextItem[] = [];
  let lastCompactedLine: number | undefined;
  let rollbacks = 0;
  return {
    add(line, value) {
      const payload = value.payload;
      if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return;
      const p = payload as Record<string, unknown>;
      if (value.type === 'response_item') {
        if (p.type !== 'ghost_snapshot') history.push({ item: p as CodexItem, line });
      } else if (value.type === 'compacted') {
        lastCompactedLine = line;
        if (Array.isArray(p.replacement_history)) {
          history = (p.replacement_history as CodexItem[]).filter((it) => it && typeof it === 'object').map((item) => ({ item, line, replacement: true as const }));
        } else {
          const summary: CodexItem = { type: 'message', role: 'user', content: [{ type: 'input_text', text: typeof p.message === 'string' ? p.message : '' }] };
          history = [...history.filter((x) => isUserTurnItem(x.item)), { item: summary, line, compactionSummary: true }];
        }
      } else if (value.type === 'event_msg' && p.type === 'thread_rolled_back') {
        rollbacks++;
        const n = typeof p.num_turns === 'number' ? p.num_turns : 0;
        const turns: number[] = [];
        history.forEach((x, i) => {
          if (isUserTurnItem(x.item)) turns.push(i);
        });
        if (n > 0 && turns.length > 0) history = history.slice(0, turns[Math.max(0, turns.length - n)]);
      }
    },
    finish: () => ({ history, ...(lastCompactedLine !== undefined ? { lastCompactedLine } : {}), rollbacks }),
  };
}

/** The item as Codex sends it: outputs truncated to the budget, reasoning fields never absent. */
export function asSent(x: CodexContextItem): CodexContextItem {
  let item = x.item;
  let truncatedFromBytes: number | undefined;
  if (isOutputType(item.type) && typeof item.output === 'string' && !x.replacement) {
    const out = truncateCodexOutput(item.output);
    if (out !== item.output) {
      truncatedFromBytes = Buffer.byteLength(item.output, 'utf8');
      item = { ...item, output: out };
    }
  }
  if (item.type === 'reasoning' && (item.content === undefined || item.encrypted_content === undefined)) {
    item = { ...item, content: item.content ?? null, encrypted_content: item.encrypted_content ?? null };
  }
  return { ...x, item, ...(truncatedFromBytes !== undefined ? { truncatedFromBytes } : {}) };
}

/** Codex's repairs on load: orphan outputs dropped, missing outputs answered "aborted" right after the call. */
export function repairCodexHistory(history: CodexContextItem[]): CodexContextItem[] {
  const outputs = new Set<string>();
  const calls = new Set<string>();
  for (const x of history) {
    if (typeof x.item.call_id !== 'string') continue;
    if (isOutputType(x.item.type)) outputs.add(x.item.call_id);
    else if (isCallType(x.item.type)) calls.add(x.item.call_id);
  }
  const out: CodexContextItem[] = [];
  for (const x of history) {
    if (isOutputType(x.item.type) && !calls.has(String(x.item.call_id))) continue;
    out.push(x);
    if (isCallType(x.item.type) && !outputs.has(String(x.item.call_id))) {
      out.push({ item: { type: outputTypeFor(x.item.type), call_id: String(x.item.call_id), output: CODEX_ABORTED_OUTPUT }, line: 0, synthetic: 'aborted' });
    }
  }
  return out;
}

/** Lines whose content reconstruction needs. */
function isHistoryLine(m: CodexLineMeta): boolean {
  return (m.kind === 'response_item' && m.payloadType !== 'ghost_snapshot') || m.kind === 'compacted' || (m.kind === 'event_msg' && m.payloadType === 'thread_rolled_back');
}

/** Builds the context from lines already in memory (tests, small inputs). */
export function reconstructFromLines(lines: Iterable<{ line: number; value: CodexLine }>, model?: string): CodexContext {
  const builder = createCodexHistoryBuilder();
  for (const { line, value } of lines) builder.add(line, value);
  const { history, lastCompactedLine, rollbacks } = builder.finish();
  return {
    history,
    items: repairCodexHistory(history).map(asSent),
    ...(lastCompactedLine !== undefined ? { lastCompactedLine } : {}),
    rollbacks,
    ...(model ? { model } : {}),
  };
}

/** Reads the lines that make history (and only those) and reconstructs the context. */
export async function reconstructCodexContext(index: CodexIndex, options: { signal?: AbortSignal } = {}): Promise<CodexContext> {
  const wanted = new Set<number>();
  for (const m of index.lines) if (isHistoryLine(m)) wanted.add(m.line);
  const values: { line: number; value: CodexLine }[] = [];
  if (wanted.size > 0) {
    for await (const raw of readLines(index.file, { signal: options.signal })) {
      if (wanted.has(raw.line)) values.push({ line: raw.line, value: JSON.parse(raw.text) as CodexLine });
    }
  }
  return reconstructFromLines(values, index.model);
}

// ───────────── agent-neutral view ─────────────

function messageCategory(role: string | undefined): TokenCategory {
  if (role === 'user') return 'userText';
  if (role === 'assistant') return 'assistantText';
  return 'system';
}

function blockParts(blocks: CodexContentBlock[], textCategory: TokenCategory): ContextPart[] {
  const parts: ContextPart[] = [];
  for (const b of blocks) {
    if (!b || typeof b !== 'object') continue;
    if (b.type === 'input_image') parts.push({ category: 'image', text: imageData(b.image_url) });
    else if (typeof b.text === 'string') parts.push({ category: textCategory, text: b.text });
    else if (typeof b.refusal === 'string') parts.push({ category: textCategory, text: b.refusal });
  }
  return parts;
}

/** What an image part counts on: the base64 data of a data URL (token-breakdown reads its header), else the URL. */
function imageData(url: unknown): string {
  if (typeof url !== 'string') return '';
  const comma = url.startsWith('data:') ? url.indexOf(',') : -1;
  return comma === -1 ? url : url.slice(comma + 1);
}

function textOf(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);
}

/** Parts of one item, each with the token category it counts under. */
export function codexItemParts(item: CodexItem, options: { compactionSummary?: boolean } = {}): ContextPart[] {
  const tool = typeof item.name === 'string' ? item.name : item.type === 'local_shell_call' ? 'local_shell' : item.type;
  switch (item.type) {
    case 'message':
      // like Claude's compaction summary, the rebuilt summary counts as system text
      return Array.isArray(item.content) ? blockParts(item.content as CodexContentBlock[], options.compactionSummary ? 'system' : messageCategory(item.role)) : [];
    case 'function_call':
      return [{ category: 'toolInput', text: `${tool} ${textOf(item.arguments)}` }];
    case 'custom_tool_call':
      return [{ category: 'toolInput', text: `${tool} ${textOf(item.input)}` }];
    case 'local_shell_call':
    case 'web_search_call':
      return [{ category: 'toolInput', text: `${tool} ${textOf(item.action)}` }];
    case 'function_call_output':
    case 'custom_tool_call_output':
      return Array.isArray(item.output) ? blockParts(item.output as CodexContentBlock[], 'toolResult') : [{ category: 'toolResult', text: textOf(item.output) }];
    case 'reasoning': {
      const parts: ContextPart[] = [];
      for (const list of [item.summary, item.content]) {
        if (Array.isArray(list)) for (const s of list as CodexContentBlock[]) if (typeof s?.text === 'string') parts.push({ category: 'thinking', text: s.text });
      }
      // the encrypted reasoning is sent back; what it costs is the turn's reasoning tokens, not its base64
      if (typeof item.encrypted_content === 'string' && item.encrypted_content) parts.push({ category: 'thinking', text: item.encrypted_content, encryptedChars: item.encrypted_content.length });
      return parts;
    }
    default:
      return [{ category: 'system', text: JSON.stringify(item) }];
  }
}

/**
 * The agent-neutral view of what Codex sends on resume (for token accounting and reports).
 * Reasoning items are sent but not billed: the API drops the reasoning of every turn before the
 * current one, and a resumed session starts a new turn (the logs' token_count input falls by the
 * turn's reasoning tokens at each new prompt; docs/token-accounting.md).
 */
export function toAgentContext(ctx: CodexContext): AgentContext {
  const entries: ContextEntry[] = ctx.items.map((x) => {
    const parts = codexItemParts(x.item, { compactionSummary: x.compactionSummary === true });
    return {
      role: x.item.type === 'message' ? String(x.item.role ?? 'message') : x.item.type,
      line: x.line,
      parts: x.item.type === 'reasoning' ? parts.map((p) => ({ ...p, billedTokens: 0 })) : parts,
      ...(x.synthetic ? { injected: true } : {}),
      ...(x.item.type === 'reasoning' ? { notBilled: true } : {}),
    };
  });
  return { agent: 'codex', entries, ...(ctx.model ? { model: ctx.model } : {}) };
}

/** Item key as the resume probe prints it: `message:user`, `reasoning`, `function_call`, ... */
export function codexItemKey(item: CodexItem): string {
  return item.type + (typeof item.role === 'string' ? `:${item.role}` : '');
}

/** Structure of a context, comparable with the probe's history part. */
export interface CodexContextSummary {
  /** Items sent. */
  items: number;
  /** Item keys in order. */
  types: string[];
  /** Item keys counted. */
  counts: Record<string, number>;
  /** Repairs Codex adds ("aborted" outputs). */
  synthetic: number;
  /** Outputs Codex truncates. */
  truncated: number;
}

export function summarizeCodexContext(ctx: CodexContext): CodexContextSummary {
  const types = ctx.items.map((x) => codexItemKey(x.item));
  const counts: Record<string, number> = {};
  for (const t of types) counts[t] = (counts[t] ?? 0) + 1;
  return {
    items: types.length,
    types,
    counts,
    synthetic: ctx.items.filter((x) => x.synthetic).length,
    truncated: ctx.items.filter((x) => x.truncatedFromBytes !== undefined).length,
  };
}
