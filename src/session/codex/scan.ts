/**
 * Pass 1 over a Codex CLI rollout: one streaming read that keeps a small record per line (kind,
 * item type, role, call id, tool and target, sizes) and no content, so large rollouts index in
 * little memory. Reconstruction, validation and the trimmer's decisions all start from this index.
 */
import { readJsonl, type ReadJsonlOptions } from '../../core/jsonl.js';
import { ParseError } from '../../errors.js';
import {
  CODEX_PASSTHROUGH_LINE_TYPES,
  codexLineKind,
  codexReadKey,
  codexToolTarget,
  commandText,
  isCallType,
  isOutputType,
  isUserTurnItem,
  outputExitCode,
  parseJsonObject,
  type CodexContentBlock,
  type CodexItem,
  type CodexLine,
  type CodexLineKind,
} from './types.js';

/** What pass 1 remembers about one item of a `compacted` line's replacement_history. */
export interface ReplacementItemMeta {
  type: string;
  role?: string;
  callId?: string;
  isUserTurn: boolean;
}

/** State of a reasoning item's `encrypted_content`. */
export type EncryptedState = 'present' | 'empty' | 'null' | 'missing';

/** What pass 1 remembers about one line. */
export interface CodexLineMeta {
  /** 1-based line number. */
  line: number;
  byteOffset: number;
  /** Bytes of the line without its terminator. */
  byteLength: number;
  kind: CodexLineKind;
  /** The top-level `type` when it is not one ctxvm knows (kind `other`). */
  type?: string;
  /** `payload.type`: the item type of a response_item, the event type of an event_msg. */
  payloadType?: string;
  /** `payload.role` of a message item. */
  role?: string;
  /** `payload.call_id` of a call or output item. */
  callId?: string;
  /** Tool name of a call item. */
  toolName?: string;
  /** The argument that identifies a call: command, path, patched files. */
  target?: string;
  /** Identity of a pure file read (see codexReadKey); a later identical read supersedes it. */
  readKey?: string;
  /** A user message that counts as a user turn (not injected context). */
  isUserTurn: boolean;
  /** Content blocks of a message item; -1 when `content` is missing or not a list. */
  contentBlocks?: number;
  /** A message with a text block whose text is empty. */
  emptyText: boolean;
  /** `input_image` blocks in a message or in a list-shaped output. */
  images: number;
  /** UTF-8 bytes of the item's bulky field: output, arguments, input, or encrypted_content. */
  payloadBytes: number;
  /** Exit status found in a call output. */
  exitCode?: number;
  /** Reasoning items: summary present and non-empty. */
  hasSummary?: boolean;
  /** Reasoning items: what `encrypted_content` holds. */
  encrypted?: EncryptedState;
  /** `thread_rolled_back` events: turns dropped. */
  numTurns?: number;
  /** `compacted` lines: the shape of `replacement_history`, when present (it replaces all history). */
  replacement?: ReplacementItemMeta[];
  /** `session_meta` lines: `payload.id`. */
  sessionId?: string;
  /** Set when ctxvm already trimmed this line. */
  annotated: boolean;
}

export interface CodexIndex {
  file: string;
  /** Parsed lines (JSON objects) in file order. */
  lines: CodexLineMeta[];
  /** Lines that are not valid JSON (reported, never dropped). */
  badLines: ParseError[];
  /** Line number of the first non-blank line, parsed or not (0 for an empty file). */
  firstLine: number;
  /** `payload.id` of the first session_meta line. */
  sessionId?: string;
  cwd?: string;
  cliVersion?: string;
  /** Model of the last turn_context line. */
  model?: string;
  /** `session_meta.payload.model_provider`: Codex resumes a rollout only with this provider (§2.6). */
  modelProvider?: string;
  /** `session_meta.payload.forked_from_id`: the thread this one was forked from. */
  forkedFromId?: string;
  /** Top-level line types ctxvm does not know (kept verbatim): how many lines and the first one. */
  unknownTypes?: Map<string, { count: number; firstLine: number }>;
  /** Index in `lines` of the last `compacted` line, or -1. */
  lastCompacted: number;
  totalBytes: number;
}

function byteLength(v: unknown): number {
  return typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : v === undefined || v === null ? 0 : Buffer.byteLength(JSON.stringify(v), 'utf8');
}

function describeItem(item: CodexItem, meta: CodexLineMeta): void {
  const type = item.type;
  if (typeof item.role === 'string') meta.role = item.role;
  if (typeof item.call_id === 'string') meta.callId = item.call_id;
  if (type === 'message') {
    const content = item.content;
    if (!Array.isArray(content)) meta.contentBlocks = -1;
    else {
      meta.contentBlocks = content.length;
      for (const b of content as CodexContentBlock[]) {
        if (b?.type === 'input_image') meta.images++;
        else if (b && 'text' in b && (typeof b.text !== 'string' || b.text.length === 0)) meta.emptyText = true;
      }
    }
    meta.isUserTurn = isUserTurnItem(item);
  } else if (isCallType(type)) {
    if (typeof item.name === 'string') meta.toolName = item.name;
    if (type === 'custom_tool_call') {
      meta.payloadBytes = byteLength(item.input);
      const target = codexToolTarget(meta.toolName, undefined, typeof item.input === 'string' ? item.input : '');
      if (target) meta.target = target;
    } else if (type === 'local_shell_call') {
      meta.toolName ??= 'local_shell';
      const action = item.action as Record<string, unknown> | undefined;
      const cmd = commandText(action?.command);
      if (cmd) meta.target = cmd;
      const readKey = action ? codexReadKey('local_shell', { command: action.command, workdir: action.working_directory }) : undefined;
      if (readKey) meta.readKey = readKey;
      meta.payloadBytes = byteLength(item.action);
    } else {
      meta.payloadBytes = byteLength(item.arguments);
      const args = parseJsonObject(item.arguments);
      const target = codexToolTarget(meta.toolName, args);
      if (target) meta.target = target;
      const readKey = codexReadKey(meta.toolName, args);
      if (readKey) meta.readKey = readKey;
    }
  } else if (isOutputType(type)) {
    meta.payloadBytes = byteLength(item.output);
    const exit = outputExitCode(item.output);
    if (exit !== undefined) meta.exitCode = exit;
    if (Array.isArray(item.output)) for (const b of item.output as CodexContentBlock[]) if (b?.type === 'input_image') meta.images++;
  } else if (type === 'reasoning') {
    meta.hasSummary = Array.isArray(item.summary) && item.summary.length > 0;
    const enc = item.encrypted_content;
    meta.encrypted = enc === undefined ? 'missing' : enc === null ? 'null' : typeof enc === 'string' && enc.length > 0 ? 'present' : 'empty';
    meta.payloadBytes = byteLength(enc);
  }
}

/** Builds the metadata record for one parsed line. */
export function describeCodexLine(value: CodexLine, line: number, byteOffset: number, byteLength: number): CodexLineMeta {
  const kind = codexLineKind(value);
  const meta: CodexLineMeta = { line, byteOffset, byteLength, kind, isUserTurn: false, emptyText: false, images: 0, payloadBytes: 0, annotated: value.ctxvm !== undefined };
  if (kind === 'other' && typeof value.type === 'string') meta.type = value.type;
  const payload = value.payload && typeof value.payload === 'object' && !Array.isArray(value.payload) ? (value.payload as Record<string, unknown>) : undefined;
  if (!payload) return meta;
  if (typeof payload.type === 'string') meta.payloadType = payload.type;
  if (kind === 'response_item' && meta.payloadType) describeItem(payload as CodexItem, meta);
  else if (kind === 'session_meta' && typeof payload.id === 'string') meta.sessionId = payload.id;
  else if (kind === 'event_msg' && meta.payloadType === 'thread_rolled_back') meta.numTurns = typeof payload.num_turns === 'number' ? payload.num_turns : 0;
  else if (kind === 'compacted' && Array.isArray(payload.replacement_history)) {
    meta.replacement = (payload.replacement_history as unknown[])
      .filter((it): it is CodexItem => !!it && typeof it === 'object' && !Array.isArray(it))
      .map((it) => ({
        type: String(it.type),
        ...(typeof it.role === 'string' ? { role: it.role } : {}),
        ...(typeof it.call_id === 'string' ? { callId: it.call_id } : {}),
        isUserTurn: isUserTurnItem(it),
      }));
  }
  return meta;
}

export interface CodexScanOptions extends Pick<ReadJsonlOptions, 'signal'> {
  /** Called with bytes read so far (for progress bars). */
  onProgress?: (bytes: number) => void;
}

/** Streams a rollout once and returns its index. Bad lines are collected, not thrown. */
export async function scanCodexSession(file: string, options: CodexScanOptions = {}): Promise<CodexIndex> {
  const unknownTypes = new Map<string, { count: number; firstLine: number }>();
  const index: CodexIndex = { file, lines: [], badLines: [], firstLine: 0, lastCompacted: -1, totalBytes: 0, unknownTypes };
  for await (const rec of readJsonl<CodexLine>(file, { onBadLine: 'yield', signal: options.signal })) {
    const raw = rec.raw;
    index.totalBytes = raw.byteOffset + raw.bytes.length + raw.eol.length;
    if (index.firstLine === 0) index.firstLine = raw.line;
    if (rec.error) {
      index.badLines.push(rec.error);
      continue;
    }
    const value = rec.value;
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      // valid JSON but not an object: as unusable as a torn line
      index.badLines.push(notAnObject(file, raw.line, raw.byteOffset));
      continue;
    }
    const meta = describeCodexLine(value, raw.line, raw.byteOffset, raw.bytes.length);
    if (meta.kind === 'compacted') index.lastCompacted = index.lines.length;
    if (meta.kind === 'other' && !CODEX_PASSTHROUGH_LINE_TYPES.has(String(value.type))) {
      const key = typeof value.type === 'string' ? value.type : '(no type)';
      const seen = unknownTypes.get(key);
      if (seen) seen.count++;
      else unknownTypes.set(key, { count: 1, firstLine: raw.line });
    }
    if (meta.kind === 'session_meta' && index.sessionId === undefined && meta.sessionId) {
      index.sessionId = meta.sessionId;
      const p = value.payload as Record<string, unknown>;
      if (typeof p.cwd === 'string') index.cwd = p.cwd;
      if (typeof p.cli_version === 'string') index.cliVersion = p.cli_version;
      if (typeof p.model_provider === 'string') index.modelProvider = p.model_provider;
      if (typeof p.forked_from_id === 'string') index.forkedFromId = p.forked_from_id;
    }
    if (meta.kind === 'turn_context') {
      const model = (value.payload as Record<string, unknown> | undefined)?.model;
      if (typeof model === 'string') index.model = model;
    }
    index.lines.push(meta);
    if (options.onProgress && raw.line % 256 === 0) options.onProgress(index.totalBytes);
  }
  return index;
}

function notAnObject(file: string, line: number, byteOffset: number): ParseError {
  return new ParseError({ file, line, byteOffset }, 'not a JSON object: a rollout line is {timestamp, type, payload}', {
    hint: 'each line must hold one JSON object; fix or remove that line',
  });
}
