/**
 * Pass 1 over a Claude Code transcript: one streaming read that keeps a small record per line
 * (ids, links, kinds, tool ids, sizes) and no content, so files of hundreds of MB index in a few
 * MB of memory. Reconstruction, validation and the trimmer's decisions all start from this index.
 */
import { badLineError, readLineBatches, type RawLine, type ReadJsonlOptions } from '../../core/jsonl.js';
import { skimmedLength, SkippedString } from '../../core/json-skim.js';
import { skimClaudeForTrim } from './line-skim.js';
import type { ParseError } from '../../errors.js';
import { contentBlocks, isKnownLineType, lineKind, preservedSpec, type PreservedSpec, type ClaudeLine, type ClaudeLineKind, type ContentBlock, type ToolResultBlock, type ToolUseBlock } from './types.js';

/** What pass 1 remembers about one line. */
export interface LineMeta {
  /** 1-based line number. */
  line: number;
  byteOffset: number;
  /** Bytes of the line without its terminator. */
  byteLength: number;
  kind: ClaudeLineKind;
  /** The line's `type` when its kind is `other` (titles, modes, types ctxvm does not know). */
  otherType?: string;
  subtype?: string;
  uuid?: string;
  parentUuid?: string | null;
  logicalParentUuid?: string | null;
  isSidechain: boolean;
  isMeta: boolean;
  isCompactSummary: boolean;
  /** An assistant line recording an API error (rate limit, overload): shown in the UI, never sent. */
  isApiError: boolean;
  /** API message id (assistant lines; split lines of one reply share it). */
  messageId?: string;
  /** `message.model` of an assistant line. */
  model?: string;
  role?: string;
  timestamp?: string;
  /** Block types in order, e.g. ['thinking'] or ['tool_result','tool_result']. */
  blockTypes: string[];
  /** tool_use blocks on this line: id, tool name and the input that identifies it (path, command...). */
  toolUses: { id: string; name: string; target?: string }[];
  /** tool_result blocks on this line. */
  toolResults: { toolUseId: string; isError: boolean }[];
  /** A user line typed by the person (text, not tool results, not meta, not a compact summary). */
  isPrompt: boolean;
  /** Present when the line carries a `toolUseResult` side channel. */
  hasToolUseResult: boolean;
  /** For summary lines. */
  leafUuid?: string;
  /** For compact boundaries: what survives it. */
  preserved?: PreservedSpec;
  /** Set when ctxvm already trimmed this line. */
  annotated: boolean;
  /** `message.content` is an empty array (Claude Code skips such a line). */
  emptyContent: boolean;
  /** A `system` line marked display-only (never sent). */
  isDisplayOnly: boolean;
  /** Longest tool payload on the line (tool_result content, tool_use input value), characters or bytes. */
  payloadChars: number;
  /** An image block anywhere in the message (also inside tool results). */
  hasImage: boolean;
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

function isUserPrompt(line: ClaudeLine, blockTypes: string[]): boolean {
  if (line.type !== 'user' || line.isMeta || line.isCompactSummary) return false;
  if (blockTypes.length === 0) return false;
  return !blockTypes.includes('tool_result');
}

const TEXT_ONLY: readonly ContentBlock[] = Object.freeze([{ type: 'text', text: '' }]);

/** Builds the metadata record for one parsed line. */
export function describeLine(value: ClaudeLine, line: number, byteOffset: number, byteLength: number): LineMeta {
  const kind = lineKind(value);
  // a skimmed line's long text content is a SkippedString: still one text block
  const message = value.message as { content?: unknown } | undefined;
  const blocks = value.type !== 'user' && value.type !== 'assistant' ? [] : message?.content instanceof SkippedString ? TEXT_ONLY : contentBlocks(value.message);
  const blockTypes = blocks.map((b) => (b && typeof b === 'object' ? String(b.type) : typeof b));
  const toolUses: LineMeta['toolUses'] = [];
  const toolResults: LineMeta['toolResults'] = [];
  let payloadChars = 0;
  let hasImage = false;
  for (const b of blocks) {
    if (b?.type === 'tool_use') {
      const u = b as ToolUseBlock;
      toolUses.push({ id: u.id, name: u.name, target: toolTarget(u.name, u.input) });
      if (u.input && typeof u.input === 'object') {
        for (const v of Object.values(u.input)) payloadChars = Math.max(payloadChars, typeof v === 'string' || v instanceof SkippedString ? skimmedLength(v) : v && typeof v === 'object' ? 1 << 30 : 0);
      }
    } else if (b?.type === 'tool_result') {
      const r = b as ToolResultBlock;
      toolResults.push({ toolUseId: r.tool_use_id, isError: r.is_error === true });
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
  const meta: LineMeta = {
    line,
    byteOffset,
    byteLength,
    kind,
    isSidechain: value.isSidechain === true,
    isMeta: value.isMeta === true,
    isCompactSummary: value.isCompactSummary === true,
    // a "<synthetic>" reply without the flag is sent (O: a branch of 354b2588 whose copied history lost the flags)
    isApiError: value.type === 'assistant' && value.isApiErrorMessage === true,
    emptyContent: Array.isArray(value.message?.content) && value.message.content.length === 0,
    isDisplayOnly: value.isDisplayOnly === true,
    payloadChars,
    hasImage,
    blockTypes,
    toolUses,
    toolResults,
    isPrompt: isUserPrompt(value, blockTypes),
    hasToolUseResult: value.toolUseResult !== undefined,
    annotated: value.ctxvm !== undefined,
  };
  if (kind === 'other' && typeof value.type === 'string') meta.otherType = value.type;
  if (typeof value.subtype === 'string') meta.subtype = value.subtype;
  if (typeof value.uuid === 'string') meta.uuid = value.uuid;
  if (value.parentUuid !== undefined) meta.parentUuid = value.parentUuid;
  if (value.logicalParentUuid !== undefined) meta.logicalParentUuid = value.logicalParentUuid;
  if (typeof value.message?.id === 'string') meta.messageId = value.message.id;
  if (kind === 'assistant' && typeof value.message?.model === 'string') meta.model = value.message.model;
  if (typeof value.message?.role === 'string') meta.role = value.message.role;
  if (typeof value.timestamp === 'string') meta.timestamp = value.timestamp;
  if (typeof value.leafUuid === 'string') meta.leafUuid = value.leafUuid;
  if (kind === 'system' && value.subtype === 'compact_boundary') {
    const spec = preservedSpec(value.compactMetadata);
    if (spec) meta.preserved = spec;
  }
  return meta;
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
function parseForIndex(raw: RawLine, identity: boolean): unknown {
  let skeleton: ClaudeLine | undefined;
  try {
    skeleton = skimClaudeForTrim(raw.bytes, identity);
  } catch {
    // broken structure: JSON.parse names the error, below
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
}

/** Streams a transcript once and returns its index. Bad lines are collected, not thrown. */
export async function scanClaudeSession(file: string, options: ScanOptions = {}): Promise<ClaudeIndex> {
  const unknownTypes = new Map<string, { count: number; firstLine: number }>();
  const index: ClaudeIndex = { file, lines: [], badLines: [], lastBoundary: -1, totalBytes: 0, unknownTypes };
  const handle = (raw: RawLine, isLast: boolean) => {
    if (raw.isBlank) return;
    index.totalBytes = raw.byteOffset + raw.bytes.length + raw.eol.length;
    let value: ClaudeLine;
    try {
      value = parseForIndex(raw, index.sessionId === undefined || index.cwd === undefined || index.version === undefined) as ClaudeLine;
    } catch (cause) {
      index.badLines.push(badLineError(file, raw, isLast, cause));
      return;
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) return;
    const meta = describeLine(value, raw.line, raw.byteOffset, raw.bytes.length);
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
  return index;
}
