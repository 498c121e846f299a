/**
 * One walk over the bytes of a Claude Code line for the trimmer's first pass, giving both things
 * that pass keeps of it: the skeleton `describeLine` reads (bookkeeping fields exact, message
 * blocks with long strings as `SkippedString`s, the inputs that identify a tool call decoded,
 * `toolUseResult` and `ctxvm` as mere presence) and, from it, the validation view of
 * lean-line.ts. Each byte is visited once — long strings jump from quote to quote (memchr) — and
 * nothing is built for the fields neither reads (the `toolUseResult` side channel, snapshots,
 * progress data, usage, and bookkeeping such as `cwd` or `gitBranch` beyond what the index keeps).
 *
 * Like the other skimmers it checks structure, not what JSON.parse checks inside long strings;
 * the trimmer parses every line it changes, which does.
 */
import { createKeyTable } from '../../core/json-keys.js';
import { decodeStringBody, MAX_SCAN_DEPTH, skipSpace, skipString } from '../../core/json-scan.js';
import { SkippedString } from '../../core/json-skim.js';
import type { ClaudeLine } from './types.js';

const QUOTE = 0x22;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** Strings of up to this many bytes (quotes excluded) are decoded; longer ones become `SkippedString`s. */
const DECODE_BYTES = 320;

/** Top-level fields kept in the skeleton (what `describeLine`, the index and the validation view read). */
const KEPT_TOP = new Set([
  'type',
  'subtype',
  'uuid',
  'parentUuid',
  'logicalParentUuid',
  'isSidechain',
  'isMeta',
  'isCompactSummary',
  'isApiErrorMessage',
  'isDisplayOnly',
  'leafUuid',
  'timestamp',
  'compactMetadata',
  'content',
  'attachment',
  'promptSource',
]);
/** Top-level fields that say which session a file is (read only while the caller still needs them). */
const IDENTITY_TOP = new Set(['sessionId', 'cwd', 'version']);
/** Top-level fields recorded as present (`true`) without being read. */
const PRESENCE_TOP = new Set(['toolUseResult', 'ctxvm']);
/** Message fields kept (usage, stop reasons and the like are never read). */
const KEPT_MESSAGE = new Set(['role', 'id', 'model', 'content']);
/** Tool inputs that identify a call (see `toolTarget`): always decoded. */
const IDENTIFYING = new Set(['command', 'pattern', 'path', 'url', 'query', 'description', 'subagent_type', 'file_path', 'notebook_path']);

/** Keys the walk meets most: matched on their bytes, never decoded (json-keys.ts). */
export const CLAUDE_KEYS: readonly string[] = [
  ...KEPT_TOP,
  ...IDENTITY_TOP,
  ...PRESENCE_TOP,
  ...KEPT_MESSAGE,
  ...IDENTIFYING,
  'message',
  'userType',
  'gitBranch',
  'requestId',
  'usage',
  'stop_reason',
  'stop_sequence',
  'snapshot',
  'data',
  'text',
  'id',
  'name',
  'input',
  'tool_use_id',
  'is_error',
  'thinking',
  'signature',
  'source',
  'media_type',
  'citations',
  'old_string',
  'new_string',
  'todos',
  'slug',
  'level',
  'toolUseID',
  'parentToolUseID',
  'messageId',
  'isSnapshotUpdate',
  'operation',
  'sourceToolAssistantUUID',
];
const KNOWN_KEY = createKeyTable(CLAUDE_KEYS);
/**
 * Values that recur on most lines (types, roles, flags' words): shared, not decoded each time,
 * so the records an index keeps of a large file hold one copy of each.
 */
const KNOWN_VALUES = ['user', 'assistant', 'system', 'text', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking', 'image', 'base64', 'image/png', 'image/jpeg', 'external', 'summary', 'progress', 'attachment', 'message', 'compact_boundary', 'local_command', 'tool_reference', 'file-history-snapshot', 'queue-operation'];
const KNOWN_VALUE = createKeyTable(KNOWN_VALUES);
const LONGEST_VALUE = Math.max(...KNOWN_VALUES.map((v) => v.length));

/**
 * Where the members a trim edits lie in a line (see `skimClaudeForTrim`'s `edits`): byte offsets
 * into the line, -1 when absent, `EDIT_SLOTS` numbers a line.
 */
export const EditSlot = {
  /** `message`'s value. */
  MessageStart: 0,
  MessageEnd: 1,
  /** `parentUuid`'s value. */
  ParentStart: 2,
  ParentEnd: 3,
  /**
   * `toolUseResult`: where its key's opening quote is, where its value starts and ends, and where
   * the member before it ends (-1 when it is the first).
   */
  ResultKey: 4,
  ResultStart: 5,
  ResultEnd: 6,
  ResultAfter: 7,
  /** `toolUseResult.exitCode` when `EditFact.ExitCode` is set. */
  ExitCode: 8,
  /** `EditFact` bits. */
  Facts: 9,
} as const;
export const EDIT_SLOTS = 10;

/** Bits of `EditSlot.Facts`. */
export const EditFact = {
  /** `toolUseResult.exitCode` is an integer (in `EditSlot.ExitCode`). */
  ExitCode: 1,
  /** `toolUseResult.interrupted` is there; `Interrupted` says whether it is `true`. */
  HasInterrupted: 2,
  Interrupted: 4,
  /** `toolUseResult` holds something these slots cannot say (a repeated field, or one of an odd kind). */
  ResultUnread: 8,
  /**
   * The line must be parsed whole: a member the trim edits (or `ctxvm`) comes twice, or there is a
   * `payload` member (content the slots do not locate).
   */
  Whole: 16,
} as const;

function malformed(at: number): never {
  throw new SyntaxError(`malformed JSON structure at byte ${at}`);
}

/** A cursor over one line's bytes. */
class Walk {
  i = 0;
  constructor(
    readonly b: Buffer,
    readonly n: number,
  ) {}

  ws(): void {
    this.i = skipSpace(this.b, this.i, this.n);
  }

  /** With `i` at an opening quote: moves past the string; returns the index of its closing quote. */
  stringEnd(): number {
    const next = skipString(this.b, this.i, this.n);
    if (next < 0) malformed(this.i);
    this.i = next;
    return next - 1;
  }

  /** A string: decoded when short (or `always`), else its byte range. */
  str(always: boolean): string | SkippedString {
    const start = this.i + 1;
    const end = this.stringEnd();
    if (!always && end - start > DECODE_BYTES) return new SkippedString(start, end);
    return (end - start <= LONGEST_VALUE && KNOWN_VALUE(this.b, start, end)) || decodeStringBody(this.b, start, end);
  }


  /** A key: a known one matched on its bytes, any other decoded. */
  key(): string {
    const b = this.b;
    if (b[this.i] !== QUOTE) malformed(this.i);
    const start = this.i + 1;
    const end = this.stringEnd();
    return KNOWN_KEY(b, start, end) ?? decodeStringBody(b, start, end);
  }

  /** Moves past `:` after a key. */
  colon(): void {
    this.ws();
    if (this.b[this.i] !== COLON) malformed(this.i);
    this.i++;
    this.ws();
  }

  /** After a member or element: true when another follows (`,` consumed), false at `close` (consumed). */
  more(close: number): boolean {
    this.ws();
    const c = this.b[this.i];
    this.i++;
    if (c === COMMA) {
      this.ws();
      return true;
    }
    if (c === close) return false;
    return malformed(this.i - 1);
  }

  /** True (and `i` past it) when the container just opened is empty. */
  empty(close: number): boolean {
    this.ws();
    if (this.b[this.i] !== close) return false;
    this.i++;
    return true;
  }

  scalar(): unknown {
    const b = this.b;
    const c = b[this.i];
    const lit = (word: string, value: unknown) => {
      for (let k = 0; k < word.length; k++) if (b[this.i + k] !== word.charCodeAt(k)) malformed(this.i);
      this.i += word.length;
      return value;
    };
    if (c === 0x74) return lit('true', true);
    if (c === 0x66) return lit('false', false);
    if (c === 0x6e) return lit('null', null);
    if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) {
      const start = this.i;
      const i = this.numberEnd();
      const text = b.toString('latin1', start, i);
      if (!/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text)) malformed(start);
      this.i = i;
      return Number(text);
    }
    return malformed(this.i);
  }

  /** Moves past any value without building it. */
  skip(depth: number): void {
    if (depth > MAX_SCAN_DEPTH) malformed(this.i);
    const c = this.b[this.i];
    if (c === QUOTE) {
      this.stringEnd();
      return;
    }
    if (c === OPEN_OBJECT) {
      this.i++;
      if (this.empty(CLOSE_OBJECT)) return;
      do {
        if (this.b[this.i] !== QUOTE) malformed(this.i);
        this.stringEnd();
        this.colon();
        this.skip(depth + 1);
      } while (this.more(CLOSE_OBJECT));
      return;
    }
    if (c === OPEN_ARRAY) {
      this.i++;
      if (this.empty(CLOSE_ARRAY)) return;
      do {
        this.ws();
        this.skip(depth + 1);
      } while (this.more(CLOSE_ARRAY));
      return;
    }
    this.skipScalar();
  }

  /** Moves past a literal or number, checking its characters (the number's grammar loosely, as json-scan.ts). */
  skipScalar(): void {
    const b = this.b;
    const c = b[this.i];
    if (c === 0x74 || c === 0x66 || c === 0x6e) {
      this.scalar();
      return;
    }
    if (c !== 0x2d && (c === undefined || c < 0x30 || c > 0x39)) malformed(this.i);
    this.i = this.numberEnd();
  }

  /** With `i` at a number's first character: the index past the characters a number may have. */
  numberEnd(): number {
    const b = this.b;
    let i = this.i + 1;
    while (i < this.n) {
      const d = b[i]!;
      if ((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d) i++;
      else break;
    }
    return i;
  }

  /** Any value: objects and arrays built, long strings skipped. */
  value(depth: number): unknown {
    if (depth > MAX_SCAN_DEPTH) malformed(this.i);
    const c = this.b[this.i];
    if (c === QUOTE) return this.str(false);
    if (c === OPEN_OBJECT) {
      this.i++;
      const obj: Record<string, unknown> = {};
      if (this.empty(CLOSE_OBJECT)) return obj;
      do {
        const key = this.key();
        this.colon();
        setOwn(obj, key, this.value(depth + 1));
      } while (this.more(CLOSE_OBJECT));
      return obj;
    }
    if (c === OPEN_ARRAY) {
      this.i++;
      const arr: unknown[] = [];
      if (this.empty(CLOSE_ARRAY)) return arr;
      do {
        this.ws();
        arr.push(this.value(depth + 1));
      } while (this.more(CLOSE_ARRAY));
      return arr;
    }
    return this.scalar();
  }

  /**
   * A tool call's input: identifying fields decoded, other strings by length, nested objects as an
   * empty stand-in of their kind (`describeLine` counts any of them as a large payload).
   */
  input(depth: number): unknown {
    if (this.b[this.i] !== OPEN_OBJECT) return this.value(depth);
    this.i++;
    const input: Record<string, unknown> = {};
    if (this.empty(CLOSE_OBJECT)) return input;
    do {
      const key = this.key();
      this.colon();
      const c = this.b[this.i];
      if (c === QUOTE) setOwn(input, key, this.str(IDENTIFYING.has(key)));
      else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        this.skip(depth + 1);
        setOwn(input, key, c === OPEN_ARRAY ? [] : {});
      } else setOwn(input, key, this.scalar());
    } while (this.more(CLOSE_OBJECT));
    return input;
  }

  /** A message's content block: as any value, but a tool call's `input` read as one (see `input`). */
  block(depth: number): unknown {
    if (this.b[this.i] !== OPEN_OBJECT) return this.value(depth);
    this.i++;
    const block: Record<string, unknown> = {};
    if (this.empty(CLOSE_OBJECT)) return block;
    do {
      const key = this.key();
      this.colon();
      setOwn(block, key, key === 'input' ? this.input(depth + 1) : this.value(depth + 1));
    } while (this.more(CLOSE_OBJECT));
    return block;
  }

  content(depth: number): unknown {
    if (this.b[this.i] !== OPEN_ARRAY) return this.value(depth);
    this.i++;
    const blocks: unknown[] = [];
    if (this.empty(CLOSE_ARRAY)) return blocks;
    do {
      this.ws();
      blocks.push(this.block(depth + 1));
    } while (this.more(CLOSE_ARRAY));
    return blocks;
  }

  message(depth: number): unknown {
    if (this.b[this.i] !== OPEN_OBJECT) return this.value(depth);
    this.i++;
    const message: Record<string, unknown> = {};
    if (this.empty(CLOSE_OBJECT)) return message;
    do {
      const key = this.key();
      this.colon();
      if (key === 'content') setOwn(message, key, this.content(depth + 1));
      else if (KEPT_MESSAGE.has(key)) setOwn(message, key, this.value(depth + 1));
      else this.skip(depth + 1);
    } while (this.more(CLOSE_OBJECT));
    return message;
  }

  line(identity: boolean, edits: Int32Array | undefined, at: number): ClaudeLine {
    this.i++;
    const line: Record<string, unknown> = {};
    if (edits) edits.fill(-1, at, at + EDIT_SLOTS - 1).fill(0, at + EditSlot.Facts, at + EDIT_SLOTS);
    if (this.empty(CLOSE_OBJECT)) return line;
    let previousEnd = -1;
    let annotations = 0;
    do {
      const keyStart = this.i;
      const key = this.key();
      this.colon();
      const valueStart = this.i;
      if (key === 'message') setOwn(line, key, this.message(1));
      else if (KEPT_TOP.has(key) || (identity && IDENTITY_TOP.has(key))) setOwn(line, key, this.value(1));
      else if (key === 'toolUseResult' && edits) {
        this.toolUseResult(edits, at);
        line[key] = true;
      } else {
        this.skip(1);
        if (PRESENCE_TOP.has(key)) line[key] = true;
      }
      if (edits) {
        const slot = key === 'message' ? EditSlot.MessageStart : key === 'parentUuid' ? EditSlot.ParentStart : key === 'toolUseResult' ? EditSlot.ResultKey : -1;
        if ((key === 'ctxvm' && ++annotations > 1) || key === 'payload') edits[at + EditSlot.Facts]! |= EditFact.Whole;
        if (slot >= 0) {
          if (edits[at + slot]! >= 0) edits[at + EditSlot.Facts]! |= EditFact.Whole;
          if (slot === EditSlot.ResultKey) {
            edits[at + EditSlot.ResultKey] = keyStart;
            edits[at + EditSlot.ResultStart] = valueStart;
            edits[at + EditSlot.ResultEnd] = this.i;
            edits[at + EditSlot.ResultAfter] = previousEnd;
          } else {
            edits[at + slot] = valueStart;
            edits[at + slot + 1] = this.i;
          }
        }
      }
      previousEnd = this.i;
    } while (this.more(CLOSE_OBJECT));
    return line as ClaudeLine;
  }

  /**
   * Moves past a `toolUseResult` value, noting the two facts a stub reports of it (exit code,
   * interrupted) in `edits`, or that it holds what the slots cannot say.
   */
  toolUseResult(edits: Int32Array, at: number): void {
    const b = this.b;
    if (b[this.i] !== OPEN_OBJECT) {
      // a string or a list of blocks: it has neither fact (a stub reads them off an object only)
      this.skip(1);
      return;
    }
    this.i++;
    if (this.empty(CLOSE_OBJECT)) return;
    let facts = 0;
    do {
      const start = this.i;
      if (b[start] !== QUOTE) malformed(start);
      const end = this.stringEnd();
      const name = end - start - 1 === 8 && b.toString('latin1', start + 1, end) === 'exitCode' ? 'exitCode' : end - start - 1 === 11 && b.toString('latin1', start + 1, end) === 'interrupted' ? 'interrupted' : undefined;
      this.colon();
      if (name === undefined) {
        this.skip(2);
        continue;
      }
      const c = b[this.i];
      const value = c === OPEN_OBJECT || c === OPEN_ARRAY || c === QUOTE ? (this.skip(2), undefined) : this.scalar();
      if (name === 'exitCode') {
        if (facts & EditFact.ExitCode || typeof value !== 'number' || (value | 0) !== value) facts |= EditFact.ResultUnread;
        else {
          facts |= EditFact.ExitCode;
          edits[at + EditSlot.ExitCode] = value;
        }
      } else if (facts & EditFact.HasInterrupted || typeof value !== 'boolean') facts |= EditFact.ResultUnread;
      else facts |= EditFact.HasInterrupted | (value ? EditFact.Interrupted : 0);
    } while (this.more(CLOSE_OBJECT));
    edits[at + EditSlot.Facts]! |= facts;
  }
}

/** As JSON.parse does: "__proto__" is an own property, never the prototype. */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/**
 * The skeleton of one line, or undefined when the line is not a JSON object (the caller parses it
 * the ordinary way). Long strings are `SkippedString`s into `bytes`. `identity`: also read
 * `sessionId`, `cwd` and `version`. `edits`: where to note, from `at` on, where the members a trim
 * edits are (`EditSlot`). Throws SyntaxError on broken structure.
 */
export function skimClaudeForTrim(bytes: Buffer, identity = false, edits?: Int32Array, at = 0): ClaudeLine | undefined {
  const walk = new Walk(bytes, bytes.length);
  walk.ws();
  if (bytes[walk.i] !== OPEN_OBJECT) return undefined;
  const line = walk.line(identity, edits, at);
  walk.ws();
  if (walk.i !== bytes.length) malformed(walk.i);
  return line;
}
