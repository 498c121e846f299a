/**
 * A fast pass-1 reader for Claude Code lines: it builds only the skeleton `describeLine` looks at
 * — bookkeeping fields parsed exactly, message blocks with their types, ids, tool names and the
 * inputs that identify a call, long strings as `SkippedString` lengths, `toolUseResult` as a mere
 * presence — straight from the bytes, using the structural scanner (../../core/json-scan.ts).
 * Nothing is decoded that the index does not keep, so a file of hundreds of MB is indexed without
 * allocating its content, several times faster than JSON.parse.
 *
 * Differences from `describeLine(JSON.parse(line))`: `payloadChars` counts bytes of the JSON
 * text for non-identifying strings (never fewer than the characters, so decisions based on it are
 * only more cautious), and a line is checked for structure, not for what JSON.parse checks inside
 * long strings.
 */
import { keyIs, keyText, parseSlice, scanArray, scanObject, skipSpace, stringSlice, valueSlice, type ScannedMember } from '../../core/json-scan.js';
import { SkippedString } from '../../core/json-skim.js';
import type { ClaudeLine } from './types.js';

/** Strings up to this many bytes are decoded; longer ones become `SkippedString`. */
const DECODE_BYTES = 64;
/** Values up to this many bytes are parsed whole with JSON.parse (exact, and fast in C++). */
const PARSE_BYTES = 2048;

/** Top-level fields `describeLine` and the index read, parsed exactly. */
const BOOKKEEPING = new Set(['type', 'subtype', 'uuid', 'parentUuid', 'logicalParentUuid', 'isSidechain', 'isMeta', 'isCompactSummary', 'isApiErrorMessage', 'isDisplayOnly', 'leafUuid', 'sessionId', 'cwd', 'version', 'timestamp', 'compactMetadata']);
/** Tool inputs that identify a call (see `toolTarget`): always decoded. */
const IDENTIFYING = new Set(['command', 'pattern', 'path', 'url', 'query', 'description', 'subagent_type', 'file_path', 'notebook_path']);

function malformed(): never {
  throw new SyntaxError('malformed JSON structure');
}

/** A string value: decoded when short (or `always`), else its byte range. */
function skimString(b: Buffer, s: number, e: number, always = false): string | SkippedString {
  return always || e - s - 2 <= DECODE_BYTES ? stringSlice(b, s, e) : new SkippedString(s + 1, e - 1);
}

/** Any value the skeleton does not look inside: parsed when small, else a stand-in of its kind. */
function opaque(b: Buffer, s: number, e: number): unknown {
  if (e - s <= PARSE_BYTES) return parseSlice(b, s, e);
  const c = b[s];
  if (c === 0x22) return new SkippedString(s + 1, e - 1);
  return c === 0x5b ? [] : {};
}

function isString(b: Buffer, m: ScannedMember): boolean {
  return b[m.valueStart] === 0x22;
}

function skimInput(b: Buffer, s: number, e: number): unknown {
  if (b[s] !== 0x7b) return opaque(b, s, e);
  const input: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  const end = scanObject(b, s, e, (m) => {
    const key = keyText(b, m);
    const c = b[m.valueStart];
    if (c === 0x22) input[key] = skimString(b, m.valueStart, m.valueEnd, IDENTIFYING.has(key));
    else if (c === 0x7b || c === 0x5b) input[key] = c === 0x5b ? [] : {};
    else input[key] = parseSlice(b, m.valueStart, m.valueEnd);
  });
  if (end < 0) malformed();
  return input;
}

/** An inner block of a tool result's content: its type and text length. */
function skimInner(b: Buffer, s: number, e: number): unknown {
  if (b[s] !== 0x7b) return opaque(b, s, e);
  const block: Record<string, unknown> = {};
  const end = scanObject(b, s, e, (m) => {
    const key = keyText(b, m);
    if (key === 'type') block.type = isString(b, m) ? stringSlice(b, m.valueStart, m.valueEnd) : parseSlice(b, m.valueStart, m.valueEnd);
    else if (key === 'text') block.text = isString(b, m) ? skimString(b, m.valueStart, m.valueEnd) : opaque(b, m.valueStart, m.valueEnd);
  });
  if (end < 0) malformed();
  return block;
}

function skimBlock(b: Buffer, s: number, e: number): unknown {
  if (b[s] !== 0x7b) return b[s] === 0x22 ? '' : opaque(b, s, e);
  const block: Record<string, unknown> = {};
  const end = scanObject(b, s, e, (m) => {
    const key = keyText(b, m);
    const { valueStart: vs, valueEnd: ve } = m;
    switch (key) {
      case 'type':
      case 'id':
      case 'name':
      case 'tool_use_id':
      case 'is_error':
        block[key] = isString(b, m) ? stringSlice(b, vs, ve) : opaque(b, vs, ve);
        break;
      case 'input':
        block.input = skimInput(b, vs, ve);
        break;
      case 'content':
        if (b[vs] === 0x22) block.content = skimString(b, vs, ve);
        else if (b[vs] === 0x5b) {
          const inner: unknown[] = [];
          if (scanArray(b, vs, ve, (is, ie) => inner.push(skimInner(b, is, ie))) < 0) malformed();
          block.content = inner;
        } else block.content = opaque(b, vs, ve);
        break;
      default:
    }
  });
  if (end < 0) malformed();
  return block;
}

function skimMessage(b: Buffer, s: number, e: number): unknown {
  if (b[s] !== 0x7b) return opaque(b, s, e);
  const message: Record<string, unknown> = {};
  const end = scanObject(b, s, e, (m) => {
    const key = keyText(b, m);
    const { valueStart: vs, valueEnd: ve } = m;
    if (key === 'role' || key === 'id' || key === 'model') message[key] = opaque(b, vs, ve);
    else if (key === 'content') {
      if (b[vs] === 0x22) {
        // a plain-text message: only its being text matters to the index
        message.content = ve - vs <= PARSE_BYTES ? stringSlice(b, vs, ve) : '';
      } else if (b[vs] === 0x5b) {
        const blocks: unknown[] = [];
        if (scanArray(b, vs, ve, (bs, be) => blocks.push(skimBlock(b, bs, be))) < 0) malformed();
        message.content = blocks;
      } else message.content = opaque(b, vs, ve);
    }
  });
  if (end < 0) malformed();
  return message;
}

/**
 * The skeleton of one Claude Code line for `describeLine`, or undefined when the line is not a
 * JSON object (the caller parses it the ordinary way). Throws SyntaxError on broken structure.
 */
export function skimClaudeLine(b: Buffer): ClaudeLine | undefined {
  const start = skipSpace(b, 0, b.length);
  if (b[start] !== 0x7b) return undefined;
  const line: Record<string, unknown> = {};
  const end = scanObject(b, start, b.length, (m) => {
    const key = keyText(b, m);
    const { valueStart: vs, valueEnd: ve } = m;
    if (key === 'message') line.message = skimMessage(b, vs, ve);
    else if (key === 'toolUseResult' || key === 'ctxvm') line[key] = true;
    else if (BOOKKEEPING.has(key)) line[key] = valueSlice(b, vs, ve);
  });
  if (end < 0 || skipSpace(b, end, b.length) !== b.length) malformed();
  return line as ClaudeLine;
}

/** What folding needs of a line (see ../trim/claude-index.ts), read without building the line. */
export interface LineBookkeeping {
  type?: unknown;
  uuid?: unknown;
  parentUuid?: unknown;
  sessionId?: unknown;
  cwd?: unknown;
  version?: unknown;
  /** ids of the tool_use blocks of a user or assistant message. */
  toolUseIds: unknown[];
  /** Byte ranges of the content values, for lifting (see ../trim/lift.ts `contentRegions`). */
  regions: number[];
}

const TOOL_USE = Buffer.from('"tool_use"');
const BOOKKEEPING_KEYS = ['type', 'uuid', 'parentUuid', 'sessionId', 'cwd', 'version'] as const;
const CONTENT = ['message', 'toolUseResult', 'payload'] as const;

/**
 * The bookkeeping of one line — type, ids, tool_use ids — and where its content is, or undefined
 * when the line is not a JSON object. Message content is looked into only when it holds a
 * `"tool_use"` token (which cannot occur inside a string). Throws SyntaxError on broken structure.
 */
export function skimClaudeBookkeeping(b: Buffer): LineBookkeeping | undefined {
  const start = skipSpace(b, 0, b.length);
  if (b[start] !== 0x7b) return undefined;
  const out: LineBookkeeping = { toolUseIds: [], regions: [] };
  let messageStart = -1;
  let messageEnd = -1;
  const end = scanObject(b, start, b.length, (m) => {
    for (const key of CONTENT) {
      if (!keyIs(b, m, key)) continue;
      out.regions.push(m.valueStart, m.valueEnd);
      if (key === 'message') {
        messageStart = m.valueStart;
        messageEnd = m.valueEnd;
      }
      return;
    }
    for (const key of BOOKKEEPING_KEYS) {
      if (keyIs(b, m, key)) {
        out[key] = valueSlice(b, m.valueStart, m.valueEnd);
        return;
      }
    }
  });
  if (end < 0 || skipSpace(b, end, b.length) !== b.length) malformed();
  if ((out.type === 'user' || out.type === 'assistant') && messageStart >= 0 && b.subarray(messageStart, messageEnd).indexOf(TOOL_USE) !== -1) {
    const message = skimMessage(b, messageStart, messageEnd) as { content?: unknown };
    if (Array.isArray(message.content)) {
      for (const block of message.content as { type?: unknown; id?: unknown }[]) if (block && typeof block === 'object' && block.type === 'tool_use') out.toolUseIds.push(block.id);
    }
  }
  return out;
}
