/**
 * Loose shapes of Claude Code transcript lines (2.0 and 2.1 layouts). Only the fields ctxvm reads
 * are typed; everything else is carried through untouched (see ../../../shared/formats.md).
 */

export interface TextBlock {
  type: 'text';
  text: string;
  [key: string]: unknown;
}
export interface ImageBlock {
  type: 'image';
  source?: { type?: string; media_type?: string; data?: string; [key: string]: unknown };
  [key: string]: unknown;
}
export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  [key: string]: unknown;
}
export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | ContentBlock[];
  is_error?: boolean;
  [key: string]: unknown;
}
export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature?: string;
  [key: string]: unknown;
}
export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
  [key: string]: unknown;
}
export interface OtherBlock {
  type: string;
  [key: string]: unknown;
}
export type ContentBlock = TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock | OtherBlock;

export interface ApiMessage {
  role: 'user' | 'assistant' | string;
  content: string | ContentBlock[];
  id?: string;
  model?: string;
  usage?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Compaction metadata; `preservedMessages` appears in 2.1 as `{uuids, allUuids}` or as a uuid array. */
export interface CompactMetadata {
  trigger?: string;
  preTokens?: number;
  preservedMessages?: string[] | { anchorUuid?: string; uuids?: string[]; allUuids?: string[] };
  preservedSegment?: { headUuid?: string; anchorUuid?: string; tailUuid?: string };
  [key: string]: unknown;
}

/** One transcript line as parsed JSON. */
export interface ClaudeLine {
  type?: string;
  subtype?: string;
  uuid?: string;
  parentUuid?: string | null;
  logicalParentUuid?: string | null;
  sessionId?: string;
  cwd?: string;
  timestamp?: string;
  isSidechain?: boolean;
  isMeta?: boolean;
  isCompactSummary?: boolean;
  isVisibleInTranscriptOnly?: boolean;
  isApiErrorMessage?: boolean;
  isDisplayOnly?: boolean;
  agentId?: string;
  message?: ApiMessage;
  toolUseResult?: unknown;
  compactMetadata?: CompactMetadata;
  summary?: string;
  leafUuid?: string;
  /** ctxvm's own restore annotation on lines it changed (see trim/annotation.ts). */
  ctxvm?: unknown;
  [key: string]: unknown;
}

/** Line kinds ctxvm distinguishes. Anything else is `other` and passes through. */
export type ClaudeLineKind =
  | 'user'
  | 'assistant'
  | 'system'
  | 'summary'
  | 'file-history-snapshot'
  | 'queue-operation'
  | 'progress'
  | 'attachment'
  | 'last-prompt'
  | 'other';

const KNOWN_KINDS = new Set<string>(['user', 'assistant', 'system', 'summary', 'file-history-snapshot', 'queue-operation', 'progress', 'attachment', 'last-prompt']);

/**
 * Line types Claude Code writes that carry no message (titles, modes, snapshots, bridges, links…;
 * ../shared/formats.md "Seen in the wild"). They are never sent and pass through a trim
 * untouched; any type outside this list and the kinds above is reported (`unknown-line-type`).
 */
export const PASSTHROUGH_LINE_TYPES: ReadonlySet<string> = new Set([
  'permission-mode',
  'mode',
  'ai-title',
  'custom-title',
  'agent-name',
  'bridge-session',
  'file-history-delta',
  'pr-link',
  'fork-context-ref',
  'tag',
]);

/** True for a line type ctxvm knows: a kind above or a pass-through type. */
export function isKnownLineType(type: unknown): boolean {
  return typeof type === 'string' && (KNOWN_KINDS.has(type) || PASSTHROUGH_LINE_TYPES.has(type));
}

export function lineKind(line: ClaudeLine): ClaudeLineKind {
  const t = line.type;
  return typeof t === 'string' && KNOWN_KINDS.has(t) ? (t as ClaudeLineKind) : 'other';
}

/** Content as a block array (a string content becomes one text block). */
export function contentBlocks(message: ApiMessage | undefined): ContentBlock[] {
  if (!message) return [];
  const c = message.content;
  if (typeof c === 'string') return [{ type: 'text', text: c }];
  return Array.isArray(c) ? c : [];
}

/** What a compact boundary says survives it: listed uuids, or a segment walked from tail to head. */
export interface PreservedSpec {
  anchor?: string;
  uuids?: string[];
  segment?: { head: string; tail: string };
}

export function preservedSpec(meta: CompactMetadata | undefined): PreservedSpec | undefined {
  const p = meta?.preservedMessages;
  const strings = (xs: unknown) => (Array.isArray(xs) ? xs.filter((x): x is string => typeof x === 'string') : []);
  if (Array.isArray(p)) return { uuids: strings(p) };
  if (p && Array.isArray(p.uuids)) return { ...(p.anchorUuid ? { anchor: p.anchorUuid } : {}), uuids: strings(p.uuids) };
  const seg = meta?.preservedSegment;
  if (seg?.headUuid && seg.tailUuid) return { ...(seg.anchorUuid ? { anchor: seg.anchorUuid } : {}), segment: { head: seg.headUuid, tail: seg.tailUuid } };
  return undefined;
}
