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
import { SkippedString } from '../../core/json-skim.js';
import type { RawLine } from '../../core/jsonl.js';
import type { LineMeta } from './scan.js';

/** Strings up to this many characters are kept as they are. */
const KEEP_CHARS = 256;
/** Characters of the trimmed start kept when the first KEEP_CHARS are blank. */
const TRIMMED_HEAD_CHARS = 64;
const NOT_BLANK = /\S/;

/**
 * A short string that is empty, blank (trims to ''), starts and trims-starts the way `s` does:
 * the questions context.ts, api-messages.ts and local-command.ts ask of a text.
 */
export function standIn(s: string): string {
  if (s.length <= KEEP_CHARS) return s;
  const head = s.slice(0, KEEP_CHARS);
  if (NOT_BLANK.test(head)) return detached(`${head}…`);
  if (!NOT_BLANK.test(s)) return ' ';
  return detached(`${head}${s.trimStart().slice(0, TRIMMED_HEAD_CHARS)}…`);
}

/** A copy that does not keep `s`'s parent alive (a slice of a string points into it). */
function detached(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}

/** Bytes that hold the first KEEP_CHARS characters of a JSON string whatever they are (\uXXXX: 6 bytes). */
const HEAD_BYTES = KEEP_CHARS * 6 + 8;
/** Bytes tried first: enough for KEEP_CHARS characters of plain ASCII, the usual case. */
const SHORT_HEAD_BYTES = KEEP_CHARS + 8;

/** The decoded JSON string in `bytes[start, end)` (no quotes); throws on a bad escape. */
function decode(bytes: Buffer, start: number, end: number): string {
  for (let k = start; k < end; k++) {
    const c = bytes[k]!;
    if (c < 0x20 || c === 0x5c) return JSON.parse(`"${bytes.toString('utf8', start, end)}"`) as string;
  }
  return bytes.toString('utf8', start, end);
}

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
    const head = decode(bytes, start, headEnd(bytes, start, span));
    // the head is short: a slice of it keeps nothing large alive
    if (head.length > KEEP_CHARS && NOT_BLANK.test(head.slice(0, KEEP_CHARS))) return `${head.slice(0, KEEP_CHARS)}…`;
  }
  return standIn(decode(bytes, start, end));
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
 * The top-level fields reconstruction and validation read of a line's value (context.ts,
 * local-command.ts, attachments.ts); everything else they need is in the line's `LineMeta`.
 */
const VIEW_KEYS = ['type', 'message', 'content', 'attachment', 'promptSource', 'isMeta', 'timestamp'] as const;
/** The message fields they read (never `usage`, stop reasons and the like). */
const MESSAGE_KEYS = ['role', 'id', 'model', 'content'] as const;

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
    if (key === 'message' && value && typeof value === 'object' && !Array.isArray(value)) {
      const message = value as Record<string, unknown>;
      const lean: Record<string, unknown> = {};
      for (const k of MESSAGE_KEYS) if (Object.prototype.hasOwnProperty.call(message, k)) lean[k] = leanValue(message[k], bytes);
      out[key] = lean;
    } else out[key] = leanValue(value, bytes);
  }
  return out as T;
}

/** Lean lines kept while scanning: those after the last compaction boundary seen so far. */
export class LeanLines {
  readonly values = new Map<number, Record<string, unknown>>();

  /** Takes one scanned line (its bytes are read now, not kept). */
  add(value: Record<string, unknown>, raw: RawLine, meta: LineMeta): void {
    // the chain starts at the last boundary; a line it needs from before is read again
    if (meta.kind === 'system' && meta.subtype === 'compact_boundary') this.values.clear();
    try {
      this.values.set(raw.line, leanClaudeLine(value, raw.bytes));
    } catch {
      // a skipped string that does not decode: reconstruction reads the line and decides
    }
  }
}
