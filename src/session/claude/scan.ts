/**
 * Pass 1 over a Claude Code transcript: one streaming read that keeps a small record per line
 * (ids, links, kinds, tool ids, sizes) and no content, so files of hundreds of MB index in a few
 * MB of memory. Reconstruction, validation and the trimmer's decisions all start from this index.
 */
import { badLineError, readLineBatches, type RawLine, type ReadJsonlOptions } from '../../core/jsonl.js';
import { skimmedLength, SkippedString } from '../../core/json-skim.js';
import { EDIT_SLOTS, EditFact, EditSlot, skimClaudeForTrim } from './line-skim.js';
import type { ParseError } from '../../errors.js';
import { LineFlag, LineRecord } from './line-record.js';
import { contentBlocks, isKnownLineType, lineKind, preservedSpec, type PreservedSpec, type ClaudeLine, type ClaudeLineKind, type ContentBlock, type ToolResultBlock, type ToolUseBlock } from './types.js';

/** What pass 1 remembers about one line. */
export interface LineMeta {
  /** 1-based line number. */
  readonly line: number;
  readonly byteOffset: number;
  /** Bytes of the line without its terminator. */
  readonly byteLength: number;
  readonly kind: ClaudeLineKind;
  /** The line's `type` when its kind is `other` (titles, modes, types ctxvm does not know). */
  readonly otherType?: string;
  readonly subtype?: string;
  readonly uuid?: string;
  readonly parentUuid?: string | null;
  readonly logicalParentUuid?: string | null;
  readonly isSidechain: boolean;
  readonly isMeta: boolean;
  readonly isCompactSummary: boolean;
  /** An assistant line recording an API error (rate limit, overload): shown in the UI, never sent. */
  readonly isApiError: boolean;
  /** API message id (assistant lines; split lines of one reply share it). */
  readonly messageId?: string;
  /** `message.model` of an assistant line. */
  readonly model?: string;
  readonly role?: string;
  readonly timestamp?: string;
  /** Block types in order, e.g. ['thinking'] or ['tool_result','tool_result']. */
  readonly blockTypes: readonly string[];
  /** tool_use blocks on this line: id, tool name and the input that identifies it (path, command...). */
  readonly toolUses: readonly { id: string; name: string; target?: string }[];
  /** tool_result blocks on this line. */
  readonly toolResults: readonly { toolUseId: string; isError: boolean }[];
  /** A user line typed by the person (text, not tool results, not meta, not a compact summary). */
  readonly isPrompt: boolean;
  /** Present when the line carries a `toolUseResult` side channel. */
  readonly hasToolUseResult: boolean;
  /** For summary lines. */
  readonly leafUuid?: string;
  /** For compact boundaries: what survives it. */
  readonly preserved?: PreservedSpec;
  /** Set when ctxvm already trimmed this line. */
  readonly annotated: boolean;
  /** `message.content` is an empty array (Claude Code skips such a line). */
  readonly emptyContent: boolean;
  /** A `system` line marked display-only (never sent). */
  readonly isDisplayOnly: boolean;
  /** Longest tool payload on the line (tool_result content, tool_use input value), characters or bytes. */
  readonly payloadChars: number;
  /** An image block anywhere in the message (also inside tool results). */
  readonly hasImage: boolean;
}

/** What a scan shares between the records it makes (see `describeLine`). */
export interface LinePool {
  previous?: LineMeta;
  /** The last model named: assistant lines repeat it, with user lines between. */
  model?: string;
  /** tool_use ids seen, each as the one string kept. */
  toolIds: Map<string, string>;
}

export interface ClaudeIndex {
  file: string;
  lines: LineMeta[];
  /** Lines that are not valid JSON (reported, never dropped). */
  badLines: ParseError[];
  sessionId?: string;
  cwd?: string;
  version?: string;
  /** Index in `lines` of the last compact_boundary, or -1. */
  lastBoundary: number;
  totalBytes: number;
  /** Line types ctxvm does not know (kept verbatim), by type: how many lines and the first one. */
  unknownTypes?: Map<string, { count: number; firstLine: number }>;
  /**
   * When the scan was asked for them: where in each line the members a trim edits lie,
   * `EDIT_SLOTS` numbers per entry of `lines`, in the same order (line-skim.ts `EditSlot`).
   */
  edits?: Int32Array;
}

/** The input field that identifies a tool call to a person (kept verbatim in stubs). */
export function toolTarget(name: string, input: Record<string, unknown> | undefined): string | undefined {
  if (!input || typeof input !== 'object') return undefined;
  const pick = (...keys: string[]) => {
    for (const k of keys) {
      const v = input[k];
      if (typeof v === 'string' && v) return v;
    }
    return undefined;
  };
  switch (name) {
    case 'Bash':
      return pick('command');
    case 'Grep':
    case 'Glob':
      return [pick('pattern'), pick('path')].filter(Boolean).join(' in ') || undefined;
    case 'WebFetch':
      return pick('url');
    case 'WebSearch':
      return pick('query');
    case 'Task':
    case 'Agent':
      return pick('description', 'subagent_type');
    default:
      return pick('file_path', 'notebook_path', 'path', 'command', 'url', 'pattern', 'query');
  }
}

function isUserPrompt(line: ClaudeLine, blockTypes: readonly string[]): boolean {
  if (line.type !== 'user' || line.isMeta || line.isCompactSummary) return false;
  if (blockTypes.length === 0) return false;
  return !blockTypes.includes('tool_result');
}

const TEXT_ONLY: readonly ContentBlock[] = Object.freeze([{ type: 'text', text: '' }]);
const NONE: readonly never[] = Object.freeze([]);
/**
 * The block types lines have, each with the one-type list most lines carry: an index of a large
 * file then holds one copy of each rather than one per line (it is most of a line's record).
 */
const BLOCK_TYPES: ReadonlyMap<string, { type: string; only: readonly string[] }> = new Map(
  ['text', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking', 'image', 'document', 'server_tool_use', 'web_search_tool_result', 'tool_reference'].map((t) => [t, { type: t, only: Object.freeze([t]) }]),
);
/** Values of a few fields that repeat on every line, shared the same way. */
const SHARED_VALUES: ReadonlyMap<string, string> = new Map(['user', 'assistant', 'system', 'compact_boundary', 'local_command', 'api_error', 'informational', 'turn_duration', 'stop_hook_summary'].map((v) => [v, v]));

function blockTypesOf(blocks: readonly ContentBlock[]): readonly string[] {
  if (blocks.length === 0) return NONE;
  const types = blocks.map((b) => (b && typeof b === 'object' ? String(b.type) : typeof b));
  if (types.length === 1) return BLOCK_TYPES.get(types[0]!)?.only ?? types;
  return types.map((t) => BLOCK_TYPES.get(t)?.type ?? t);
}

const shared = (v: string) => SHARED_VALUES.get(v) ?? v;

/**
 * Builds the metadata record for one parsed line. `pool`: what a scan shares between records —
 * the line before (strings it repeats are kept once) and the tool_use ids seen (a result names
 * its call's id: the same string).
 */
export function describeLine(value: ClaudeLine, line: number, byteOffset: number, byteLength: number, pool?: LinePool): LineMeta {
  const kind = lineKind(value);
  // a skimmed line's long text content is a SkippedString: still one text block
  const message = value.message as { content?: unknown } | undefined;
  const blocks = value.type !== 'user' && value.type !== 'assistant' ? [] : message?.content instanceof SkippedString ? TEXT_ONLY : contentBlocks(value.message);
  const blockTypes = blockTypesOf(blocks);
  const toolUses: { id: string; name: string; target?: string }[] = [];
  const toolResults: { toolUseId: string; isError: boolean }[] = [];
  let payloadChars = 0;
  let hasImage = false;
  for (const b of blocks) {
    if (b?.type === 'tool_use') {
      const u = b as ToolUseBlock;
      toolUses.push({ id: u.id, name: u.name, target: toolTarget(u.name, u.input) });
      if (typeof u.id === 'string') pool?.toolIds.set(u.id, u.id);
      if (u.input && typeof u.input === 'object') {
        for (const v of Object.values(u.input)) payloadChars = Math.max(payloadChars, typeof v === 'string' || v instanceof SkippedString ? skimmedLength(v) : v && typeof v === 'object' ? 1 << 30 : 0);
      }
    } else if (b?.type === 'tool_result') {
      const r = b as ToolResultBlock;
      toolResults.push({ toolUseId: pool?.toolIds.get(r.tool_use_id) ?? r.tool_use_id, isError: r.is_error === true });
      const c = r.content as unknown;
      if (Array.isArray(c)) {
        let sum = 0;
        for (const inner of c as { type?: unknown; text?: unknown }[]) {
          if (inner?.type === 'image') hasImage = true;
          sum += skimmedLength(inner?.text);
        }
        payloadChars = Math.max(payloadChars, sum);
      } else payloadChars = Math.max(payloadChars, skimmedLength(c));
    } else if (b?.type === 'image') hasImage = true;
  }
  const messageId = typeof value.message?.id === 'string' ? value.message.id : undefined;
  let model = kind === 'assistant' && typeof value.message?.model === 'string' ? value.message.model : undefined;
  if (model !== undefined && pool) {
    if (model === pool.model) model = pool.model;
    else pool.model = model;
  }
  const previous = pool?.previous;
  const flags =
    (value.isSidechain === true ? LineFlag.Sidechain : 0) |
    (value.isMeta === true ? LineFlag.Meta : 0) |
    (value.isCompactSummary === true ? LineFlag.CompactSummary : 0) |
    // a "<synthetic>" reply without the flag is sent (O: a branch of 354b2588 whose copied history lost the flags)
    (value.type === 'assistant' && value.isApiErrorMessage === true ? LineFlag.ApiError : 0) |
    (Array.isArray(value.message?.content) && value.message.content.length === 0 ? LineFlag.EmptyContent : 0) |
    (value.isDisplayOnly === true ? LineFlag.DisplayOnly : 0) |
    (hasImage ? LineFlag.Image : 0) |
    (isUserPrompt(value, blockTypes) ? LineFlag.Prompt : 0) |
    (value.toolUseResult !== undefined ? LineFlag.ToolUseResult : 0) |
    (value.ctxvm !== undefined ? LineFlag.Annotated : 0);
  const spec = kind === 'system' && value.subtype === 'compact_boundary' ? preservedSpec(value.compactMetadata) : undefined;
  return new LineRecord({
    line,
    byteOffset,
    byteLength,
    kind,
    flags,
    payloadChars,
    blockTypes,
    // copies of the lists pushed to: a pushed-to array keeps room for 17 entries
    toolUses: toolUses.length > 0 ? toolUses.slice() : NONE,
    toolResults: toolResults.length > 0 ? toolResults.slice() : NONE,
    otherType: kind === 'other' && typeof value.type === 'string' ? value.type : undefined,
    subtype: typeof value.subtype === 'string' ? shared(value.subtype) : undefined,
    uuid: typeof value.uuid === 'string' ? value.uuid : undefined,
    // strings the line before holds already (its uuid as this one's parent, a split reply's id,
    // the model) are kept once: on a large file they are much of what the index holds
    parentUuid: previous?.uuid !== undefined && value.parentUuid === previous.uuid ? previous.uuid : value.parentUuid,
    logicalParentUuid: value.logicalParentUuid,
    messageId: messageId !== undefined && messageId === previous?.messageId ? previous.messageId : messageId,
    model,
    role: typeof value.message?.role === 'string' ? shared(value.message.role) : undefined,
    timestamp: typeof value.timestamp === 'string' ? value.timestamp : undefined,
    leafUuid: typeof value.leafUuid === 'string' ? value.leafUuid : undefined,
    preserved: spec,
  });
}

/** Counts `meta`'s line type in `unknownTypes` when ctxvm does not know it (see `ClaudeIndex.unknownTypes`). */
export function countUnknownType(unknownTypes: Map<string, { count: number; firstLine: number }>, meta: LineMeta): void {
  if (meta.kind !== 'other' || isKnownLineType(meta.otherType)) return;
  const key = meta.otherType ?? '(no type)';
  const seen = unknownTypes.get(key);
  if (seen) seen.count++;
  else unknownTypes.set(key, { count: 1, firstLine: meta.line });
}

/**
 * A line as the index reads it: skimmed (line-skim.ts), with the session's identity fields while
 * `identity` says they are still wanted; JSON.parse says why a line is not JSON, or what a
 * non-object is.
 */
function parseForIndex(raw: RawLine, identity: boolean, edits?: Int32Array, at?: number): unknown {
  let skeleton: ClaudeLine | undefined;
  try {
    skeleton = skimClaudeForTrim(raw.bytes, identity, edits, at);
  } catch {
    // broken structure: JSON.parse names the error, below. A line JSON.parse takes (nested past
    // the skimmer's depth) may have its edit notes half written: it is to be parsed whole
    if (edits && at !== undefined) edits[at + EditSlot.Facts]! |= EditFact.Whole;
  }
  return skeleton ?? JSON.parse(raw.text);
}

export interface ScanOptions extends Pick<ReadJsonlOptions, 'signal'> {
  /** Called with bytes read so far (for progress bars). */
  onProgress?: (bytes: number) => void;
  /**
   * Called with each JSON object line as parsed for the index: long lines are skimmed, their
   * long strings `SkippedString`s into `raw.bytes`, which stay valid during the call only.
   */
  onLine?: (value: Record<string, unknown>, raw: RawLine, meta: LineMeta) => void;
  /** Note where the members a trim edits lie (`ClaudeIndex.edits`). */
  edits?: boolean;
}

/** Streams a transcript once and returns its index. Bad lines are collected, not thrown. */
export async function scanClaudeSession(file: string, options: ScanOptions = {}): Promise<ClaudeIndex> {
  const unknownTypes = new Map<string, { count: number; firstLine: number }>();
  const index: ClaudeIndex = { file, lines: [], badLines: [], lastBoundary: -1, totalBytes: 0, unknownTypes };
  const pool: LinePool = { toolIds: new Map() };
  let edits = options.edits ? new Int32Array(EDIT_SLOTS * 4096) : undefined;
  const handle = (raw: RawLine, isLast: boolean) => {
    if (raw.isBlank) return;
    index.totalBytes = raw.byteOffset + raw.bytes.length + raw.eol.length;
    let value: ClaudeLine;
    const at = index.lines.length * EDIT_SLOTS;
    if (edits && at + EDIT_SLOTS > edits.length) {
      const grown = new Int32Array(edits.length * 2);
      grown.set(edits);
      edits = grown;
    }
    try {
      value = parseForIndex(raw, index.sessionId === undefined || index.cwd === undefined || index.version === undefined, edits, at) as ClaudeLine;
    } catch (cause) {
      index.badLines.push(badLineError(file, raw, isLast, cause));
      return;
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) return;
    const meta = describeLine(value, raw.line, raw.byteOffset, raw.bytes.length, pool);
    pool.previous = meta;
    countUnknownType(unknownTypes, meta);
    if (meta.kind === 'system' && meta.subtype === 'compact_boundary') index.lastBoundary = index.lines.length;
    index.sessionId ??= typeof value.sessionId === 'string' ? value.sessionId : undefined;
    index.cwd ??= typeof value.cwd === 'string' ? value.cwd : undefined;
    index.version ??= typeof value.version === 'string' ? value.version : undefined;
    index.lines.push(meta);
    options.onLine?.(value as unknown as Record<string, unknown>, raw, meta);
  };
  // one line of look-ahead, so a bad last line without a terminator can be called truncated
  let pending: RawLine | undefined;
  for await (const batch of readLineBatches(file, { reuseBuffers: true, ...(options.signal ? { signal: options.signal } : {}) })) {
    for (const raw of batch) {
      if (pending) handle(pending, false);
      pending = raw;
    }
    options.onProgress?.(index.totalBytes);
  }
  if (pending) handle(pending, true);
  if (edits) index.edits = edits.subarray(0, index.lines.length * EDIT_SLOTS);
  return index;
}
