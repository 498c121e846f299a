/**
 * Lean lines: what validation reads of a transcript line, without its bulk. Validating a session
 * (validate.ts) walks the reconstructed context, which holds every line of the resumed chain; on
 * a long live tail that is most of the file, hundreds of MB of tool output and images. The
 * findings depend on no payload beyond whether a string is empty, blank, or how it starts (tags,
 * a leading "/"), so a lean line keeps the fields validation reads, with long strings shortened
 * to a stand-in that answers those questions the same way, and drops what nothing in validation
 * reads (tool inputs, the `toolUseResult` side channel, usage, bookkeeping the line's `LineMeta`
 * holds). `lean-line.test.ts` compares findings of both loads over the corpus.
 *
 * A lean load reads the file once: the scan hands each line it parsed (skimmed, for long lines:
 * see json-skim.ts) to `LeanLines`, which keeps the lean form of the lines after the last
 * compaction boundary — what the resumed chain is made of — and reconstruction reads again only
 * a chain line it did not keep (a preserved message before the boundary, say). One difference
 * with a full load is left: a long line whose skipped strings hide an invalid escape is taken as
 * the scan takes it, where a full load would leave the line out of the context.
 */
import { decodeStringBody } from '../../core/json-scan.js';
import { SkippedString } from '../../core/json-skim.js';
import type { RawLine } from '../../core/jsonl.js';
import type { LineMeta } from './scan.js';

/**
 * Strings up to this many characters are kept as they are; longer ones keep this many. The
 * longest start anything asks about is a tag such as "<local-command-stdout>" (22 characters), and
 * a lean load holds one stand-in per text of the resumed chain, so they are kept short.
 */
const KEEP_CHARS = 32;
const NOT_BLANK = /\S/;
/** Marks a stand-in as cut short: ASCII, so a stand-in of ASCII text stays a one-byte string. */
const CUT = '...';

/**
 * A short string that is empty, blank (trims to ''), starts and trims-starts the way `s` does:
 * the questions context.ts, api-messages.ts and local-command.ts ask of a text.
 */
export function standIn(s: string): string {
  if (s.length <= KEEP_CHARS) return s;
  const head = s.slice(0, KEEP_CHARS);
  if (NOT_BLANK.test(head)) return detached(`${head}${CUT}`);
  if (!NOT_BLANK.test(s)) return ' ';
  // a blank start: one character of it, then how the text starts once trimmed
  return detached(`${s[0]}${s.trimStart().slice(0, KEEP_CHARS)}${CUT}`);
}

/** A copy that does not keep `s`'s parent alive (a slice of a string points into it). */
function detached(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}

/** Bytes that hold the first KEEP_CHARS characters of a JSON string whatever they are (\uXXXX: 6 bytes). */
const HEAD_BYTES = KEEP_CHARS * 6 + 8;
/** Bytes tried first: enough for KEEP_CHARS characters of plain ASCII, the usual case. */
const SHORT_HEAD_BYTES = KEEP_CHARS + 8;

/** The end of a head of at most `span` bytes from `start` that cuts neither an escape nor a UTF-8 sequence. */
function headEnd(bytes: Buffer, start: number, span: number): number {
  let cut = start + span;
  for (let i = start; i < cut; ) {
    if (bytes[i] !== 0x5c) {
      i++;
      continue;
    }
    const length = bytes[i + 1] === 0x75 ? 6 : 2;
    if (i + length > cut) {
      cut = i;
      break;
    }
    i += length;
  }
  while (cut > start && (bytes[cut]! & 0xc0) === 0x80) cut--;
  return cut;
}

/** `standIn` of a string the skimmer did not decode, decoding only its head when that says enough. */
function standInOfSkipped(bytes: Buffer, skipped: SkippedString): string {
  const { start, end } = skipped;
  for (const span of [SHORT_HEAD_BYTES, HEAD_BYTES]) {
    if (start + span >= end) break;
    const head = decodeStringBody(bytes, start, headEnd(bytes, start, span));
    // the head is short: a slice of it keeps nothing large alive
    if (head.length > KEEP_CHARS && NOT_BLANK.test(head.slice(0, KEEP_CHARS))) return `${head.slice(0, KEEP_CHARS)}${CUT}`;
  }
  return standIn(decodeStringBody(bytes, start, end));
}

function leanValue(v: unknown, bytes?: Buffer): unknown {
  if (typeof v === 'string') return standIn(v);
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof SkippedString) return standInOfSkipped(bytes!, v);
  if (Array.isArray(v)) return v.map((x) => leanValue(x, bytes));
  const out: Record<string, unknown> = {};
  const block = v as Record<string, unknown>;
  for (const key of Object.keys(block)) {
    // a tool call's input is only counted (tokens), never judged
    const lean = key === 'input' && block.type === 'tool_use' ? {} : leanValue(block[key], bytes);
    // as JSON.parse does: "__proto__" is an own property, never the prototype
    if (key === '__proto__') Object.defineProperty(out, key, { value: lean, enumerable: true, writable: true, configurable: true });
    else out[key] = lean;
  }
  return out;
}

/**
 * The top-level fields validation reads of a line's value (context.ts, attachments.ts);
 * everything else it needs is in the line's `LineMeta`.
 */
const VIEW_KEYS = ['message', 'content', 'attachment'] as const;
/** The message fields it reads (never `usage`, stop reasons, ids the `LineMeta` holds…). */
const MESSAGE_KEYS = ['model', 'content'] as const;

/** A text validation judges only by its being there and empty or not: '' or 'x'. */
function presence(v: unknown): unknown {
  if (v instanceof SkippedString) return 'x'; // skipped strings are long
  return typeof v === 'string' ? (v.length === 0 ? '' : 'x') : v;
}

/**
 * The lean form of a message content block: of the blocks whose text nothing judges beyond its
 * presence (thinking and its signature, tool results' text, images, tool inputs) only what
 * validation reads is kept; other blocks as any value.
 */
function leanBlock(v: unknown, bytes: Buffer | undefined): unknown {
  if (!v || typeof v !== 'object' || Array.isArray(v) || v instanceof SkippedString) return leanValue(v, bytes);
  const block = v as Record<string, unknown>;
  const own = (key: string) => Object.prototype.hasOwnProperty.call(block, key);
  switch (block.type) {
    case 'thinking':
    case 'redacted_thinking':
      return { type: block.type, ...(own('signature') ? { signature: presence(block.signature) } : {}) };
    case 'tool_use':
      return { type: block.type, id: leanValue(block.id, bytes), name: leanValue(block.name, bytes), input: {} };
    case 'tool_result': {
      const c = block.content;
      return {
        type: block.type,
        tool_use_id: leanValue(block.tool_use_id, bytes),
        ...(own('is_error') ? { is_error: block.is_error } : {}),
        ...(own('content') ? { content: Array.isArray(c) ? leanValue(c, bytes) : presence(c) } : {}),
      };
    }
    case 'image':
      return { type: block.type };
    default:
      return leanValue(block, bytes);
  }
}

/** The lean form of a message: the fields validation reads, its content block by block. */
function leanMessage(message: Record<string, unknown>, bytes: Buffer | undefined): Record<string, unknown> {
  const lean: Record<string, unknown> = {};
  for (const k of MESSAGE_KEYS) {
    if (!Object.prototype.hasOwnProperty.call(message, k)) continue;
    const v = message[k];
    lean[k] = k === 'content' && Array.isArray(v) ? v.map((b) => leanBlock(b, bytes)) : leanValue(v, bytes);
  }
  return lean;
}

/**
 * The lean form of a parsed transcript line (a new object; `line` is left alone): the fields
 * validation reads, long strings as stand-ins. A skimmed line (json-skim.ts, line-skim.ts) needs
 * its `bytes` for the strings that were skipped; it throws where the skipped bytes do not decode.
 */
export function leanClaudeLine<T extends Record<string, unknown>>(line: T, bytes?: Buffer): T {
  const out: Record<string, unknown> = {};
  for (const key of VIEW_KEYS) {
    if (!Object.prototype.hasOwnProperty.call(line, key)) continue;
    const value = line[key];
    if (key === 'message' && value && typeof value === 'object' && !Array.isArray(value) && !(value instanceof SkippedString)) out[key] = leanMessage(value as Record<string, unknown>, bytes);
    else out[key] = leanValue(value, bytes);
  }
  return out as T;
}

/**
 * Lean lines kept while scanning: those after the last compaction boundary seen so far, each as
 * its JSON text (a third of the memory the objects take; reconstruction parses the few it reads).
 */
export class LeanLines {
  readonly #texts = new Map<number, string>();

  /** Takes one scanned line (its bytes are read now, not kept). */
  add(value: Record<string, unknown>, raw: RawLine, meta: LineMeta): void {
    // the chain starts at the last boundary; a line it needs from before is read again
    if (meta.kind === 'system' && meta.subtype === 'compact_boundary') this.#texts.clear();
    this.set(raw.line, value, raw.bytes);
  }

  /** Keeps the lean form of `value` (a line read or skimmed from `bytes`) as line `line`. */
  set(line: number, value: Record<string, unknown>, bytes?: Buffer): void {
    try {
      const text = JSON.stringify(leanClaudeLine(value, bytes));
      // JSON.stringify's result is a tree of parts; reading a character makes it one string,
      // about a third smaller, for as long as it is kept
      text.charCodeAt(0);
      this.#texts.set(line, text);
    } catch {
      // a skipped string that does not decode: reconstruction reads the line and decides
    }
  }

  /** The lean form of line `line`, or undefined when it is not kept. */
  get(line: number): Record<string, unknown> | undefined {
    const text = this.#texts.get(line);
    return text === undefined ? undefined : (JSON.parse(text) as Record<string, unknown>);
  }
}
