/**
 * The one streaming JSONL reader and writer. Everything in ctxvm that reads or writes a JSON-lines
 * file goes through here, so CRLF, a UTF-8 BOM, blank lines, a truncated last line, huge lines
 * and bad lines are handled once, the same way, with file/line/byte positions in every error.
 */
import { constants as bufferConstants } from 'node:buffer';
import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { ParseError, ioError, CtxvmError } from '../errors.js';
import { createAtomicWriter, type AtomicWriter, type AtomicWriteOptions } from './atomic-file.js';

const LF = 0x0a;
const CR = 0x0d;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
/** Read size for files (bytes). Larger blocks mean fewer syscalls and fewer cross-chunk lines. */
export const READ_BLOCK_BYTES = 1 << 20;
/**
 * Longest line read (bytes): the longest string this runtime can hold, so every line read can be
 * decoded and parsed. A longer line is refused by number and size, before it is all in memory.
 */
export const MAX_LINE_BYTES: number = bufferConstants.MAX_STRING_LENGTH;

/** Line terminator as found in the file; '' for a last line that has none. */
export type LineEnding = '\n' | '\r\n' | '';

/** One physical line of a file, with its exact position and bytes. */
export class RawLine {
  #text: string | undefined;
  constructor(
    /** 1-based line number. */
    readonly line: number,
    /** Byte offset of the first content byte of this line in the file (after a BOM on line 1). */
    readonly byteOffset: number,
    /** The line's bytes without the terminator (a view; copy it to keep it past the chunk). */
    readonly bytes: Buffer,
    /** The terminator that followed the line. */
    readonly eol: LineEnding,
    /** True on line 1 when the file started with a UTF-8 byte order mark (stripped from `bytes`). */
    readonly bom: boolean,
  ) {}

  /** The line decoded as UTF-8 (decoded once, on first access). */
  get text(): string {
    return (this.#text ??= this.bytes.toString('utf8'));
  }

  /** The same line with its own copy of the bytes (for keeping it past its read block). */
  detach(): RawLine {
    const copy = new RawLine(this.line, this.byteOffset, Buffer.from(this.bytes), this.eol, this.bom);
    if (this.#text !== undefined) copy.#text = this.#text;
    return copy;
  }

  /** True for an empty or whitespace-only line. */
  get isBlank(): boolean {
    const b = this.bytes;
    for (let i = 0; i < b.length; i++) {
      const c = b[i]!;
      if (c !== 0x20 && c !== 0x09 && c !== CR) return false;
    }
    return true;
  }
}

export interface LineSourceOptions {
  /** Name used in error messages (defaults to the path, or "<input>"). */
  name?: string;
  /** Abort reading. */
  signal?: AbortSignal;
  /**
   * Start mid-file, at the beginning of a line: its byte offset and 1-based number (default the
   * start of the file). No byte order mark is looked for there.
   */
  from?: { byteOffset: number; line: number };
  /** Longest line accepted, bytes (default and at most `MAX_LINE_BYTES`). */
  maxLineBytes?: number;
  /** Read block size in bytes for files (default `READ_BLOCK_BYTES`); small values exercise block boundaries in tests. */
  blockBytes?: number;
}

/**
 * Splits byte chunks into lines, synchronously: `push` each chunk in order and take the lines it
 * completed, then `end`. Lines are views into the chunks (a line spanning chunks is copied).
 */
export class LineSplitter {
  #carry: Buffer[] = [];
  #carryBytes = 0;
  #lineStart: number; // byte offset of the current line's first byte
  #lineNo: number;
  #sawFirstBytes: boolean;
  #bom = false;
  #head: Buffer | undefined; // first bytes kept until we know whether they start with a BOM

  readonly #copyCarry: boolean;
  readonly #name: string;
  readonly #maxLineBytes: number;

  /**
   * `copyCarry`: copy the unfinished end of each chunk (when the caller reuses chunk buffers).
   * `limits`: the name used in errors and the longest line accepted (see `MAX_LINE_BYTES`).
   */
  constructor(from?: { byteOffset: number; line: number }, copyCarry = false, limits: { name?: string; maxLineBytes?: number } = {}) {
    this.#copyCarry = copyCarry;
    this.#name = limits.name ?? '<input>';
    this.#maxLineBytes = Math.min(limits.maxLineBytes ?? MAX_LINE_BYTES, MAX_LINE_BYTES);
    this.#lineStart = from?.byteOffset ?? 0;
    this.#lineNo = (from?.line ?? 1) - 1;
    this.#sawFirstBytes = from !== undefined && from.byteOffset > 0;
  }

  /** The lines `raw` completes (with what earlier chunks left over). */
  push(raw: Uint8Array): RawLine[] {
    const out: RawLine[] = [];
    let chunk = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    if (!this.#sawFirstBytes) {
      this.#head = this.#head ? Buffer.concat([this.#head, chunk]) : chunk;
      if (this.#head.length < BOM.length) {
        // kept past this chunk: a reused chunk buffer would change under it
        if (this.#copyCarry) this.#head = Buffer.from(this.#head);
        return out;
      }
      this.#sawFirstBytes = true;
      chunk = this.#head;
      this.#head = undefined;
      if (chunk[0] === BOM[0] && chunk[1] === BOM[1] && chunk[2] === BOM[2]) {
        this.#bom = true;
        chunk = chunk.subarray(BOM.length);
        this.#lineStart = BOM.length;
      }
    }
    let pos = 0;
    for (;;) {
      const nl = chunk.indexOf(LF, pos);
      if (nl === -1) {
        if (pos < chunk.length) {
          this.#checkLength(this.#carryBytes + chunk.length - pos);
          this.#carry.push(this.#copyCarry ? Buffer.from(chunk.subarray(pos)) : chunk.subarray(pos));
          this.#carryBytes += chunk.length - pos;
        }
        break;
      }
      this.#checkLength(this.#carryBytes + nl - pos);
      let lineBytes: Buffer;
      if (this.#carryBytes > 0) {
        this.#carry.push(chunk.subarray(pos, nl));
        lineBytes = Buffer.concat(this.#carry, this.#carryBytes + (nl - pos));
        this.#carry = [];
        this.#carryBytes = 0;
      } else {
        lineBytes = chunk.subarray(pos, nl);
      }
      const physical = lineBytes.length + 1;
      let eol: LineEnding = '\n';
      if (lineBytes.length > 0 && lineBytes[lineBytes.length - 1] === CR) {
        lineBytes = lineBytes.subarray(0, lineBytes.length - 1);
        eol = '\r\n';
      }
      this.#lineNo++;
      out.push(new RawLine(this.#lineNo, this.#lineStart, lineBytes, eol, this.#lineNo === 1 && this.#bom));
      this.#lineStart += physical;
      pos = nl + 1;
    }
    return out;
  }

  /** Refuses the line being read once it is longer than the limit (it is never all kept). */
  #checkLength(bytes: number): void {
    if (bytes <= this.#maxLineBytes) return;
    const mib = (n: number) => (n < 1048576 ? `${n} bytes` : `${(n / 1048576).toFixed(1)} MiB`);
    throw new ParseError(
      { file: this.#name, line: this.#lineNo + 1, byteOffset: this.#lineStart },
      `line longer than ${mib(this.#maxLineBytes)} (at least ${mib(bytes)} without a newline): too long to read as one JSON value`,
      { hint: this.#lineNo === 0 && this.#lineStart <= BOM.length ? 'is this a JSONL file? it has no newline in its first bytes' : 'split or remove that line; nothing was written' },
    );
  }

  /** The last line, when the input did not end with a terminator. */
  end(): RawLine[] {
    let out: RawLine[] = [];
    if (this.#head) {
      // input shorter than a BOM: it has none, so split it like any chunk
      const head = this.#head;
      this.#head = undefined;
      this.#sawFirstBytes = true;
      out = this.push(head);
    }
    if (this.#carryBytes === 0) return out;
    const lineBytes = this.#carry.length === 1 ? this.#carry[0]! : Buffer.concat(this.#carry, this.#carryBytes);
    this.#carry = [];
    this.#carryBytes = 0;
    this.#lineNo++;
    out.push(new RawLine(this.#lineNo, this.#lineStart, lineBytes, '', this.#lineNo === 1 && this.#bom));
    return out;
  }
}

function limitsOf(options: LineSourceOptions): { name?: string; maxLineBytes?: number } {
  return { ...(options.name !== undefined ? { name: options.name } : {}), ...(options.maxLineBytes !== undefined ? { maxLineBytes: options.maxLineBytes } : {}) };
}

/** Splits a stream of byte chunks into lines. Works for files, sockets, or in-memory buffers. */
export async function* linesFromChunks(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options: LineSourceOptions = {}): AsyncGenerator<RawLine> {
  const splitter = new LineSplitter(options.from, false, limitsOf(options));
  for await (const raw of chunks) {
    if (options.signal?.aborted) throw options.signal.reason ?? new Error('aborted');
    yield* splitter.push(raw);
  }
  yield* splitter.end();
}

/** Reads a file's bytes in blocks. Errors name the file: missing, a directory, unreadable. */
async function* readChunks(path: string, options: LineSourceOptions): AsyncGenerator<Buffer> {
  const blockBytes = options.blockBytes ?? READ_BLOCK_BYTES;
  let info;
  try {
    info = await stat(path);
  } catch (cause) {
    throw ioError('read', path, cause);
  }
  if (info.isDirectory()) {
    throw new CtxvmError('E_USAGE', `${path}: is a directory, expected a JSONL file`, { hint: 'pass the path of a .jsonl file' });
  }
  const stream = createReadStream(path, { highWaterMark: blockBytes, signal: options.signal, ...(options.from ? { start: options.from.byteOffset } : {}) });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (options.signal?.aborted) throw options.signal.reason ?? new Error('aborted');
      yield chunk;
    }
  } catch (cause) {
    if (CtxvmError.is(cause)) throw cause;
    if ((cause as Error)?.name === 'AbortError') throw cause;
    throw ioError('read', path, cause);
  } finally {
    stream.destroy();
  }
}

/** Reads a file's lines as a stream. Errors name the file: missing, a directory, unreadable. */
export async function* readLines(path: string, options: LineSourceOptions = {}): AsyncGenerator<RawLine> {
  yield* linesFromChunks(readChunks(path, options), { ...options, name: options.name ?? path });
}

/** Options of `readLineBatches`. */
export interface LineBatchOptions extends LineSourceOptions {
  /**
   * Read into a few buffers used in turn instead of a new one per block, so reading a file of any
   * size allocates almost nothing (and read on the calling thread). A line's bytes then stay valid
   * only while its own batch and the two batches after it are worked on — however many blocks a
   * long line in between takes: keep a line longer with `RawLine.detach()`.
   */
  reuseBuffers?: boolean;
}

/** Buffers a reusing reader cycles through (a batch's lines stay valid while the next two are worked on). */
const REUSED_BLOCKS = 3;

/** Opens a file for the reusing reader; errors name the file. */
async function openForReading(path: string): Promise<number> {
  try {
    if ((await stat(path)).isDirectory()) {
      throw new CtxvmError('E_USAGE', `${path}: is a directory, expected a JSONL file`, { hint: 'pass the path of a .jsonl file' });
    }
    return openSync(path, 'r');
  } catch (cause) {
    if (CtxvmError.is(cause)) throw cause;
    throw ioError('read', path, cause);
  }
}

/**
 * Reads a file's lines in batches, one per read block: for hot loops that would otherwise pay an
 * await per line. Errors as `readLines`.
 *
 * With `reuseBuffers`, blocks are read on the calling thread (a read from the page cache is a
 * memory copy, and doing it here instead of handing it to the thread pool saves, on a busy
 * machine, waiting for a pool thread per block) into buffers used in turn. A buffer moves to the
 * back of the rotation only when a batch holding views into it was handed out: a block that ends
 * no line (the middle of a long line) was copied into the splitter's carry, so its buffer is read
 * into again at once. That is what keeps a batch's lines valid for two more *batches*, not two
 * more blocks.
 */
export async function* readLineBatches(path: string, options: LineBatchOptions = {}): AsyncGenerator<RawLine[]> {
  const blockBytes = options.blockBytes ?? READ_BLOCK_BYTES;
  const splitter = new LineSplitter(options.from, options.reuseBuffers === true, limitsOf({ ...options, name: options.name ?? path }));
  if (!options.reuseBuffers) {
    for await (const chunk of readChunks(path, options)) {
      const lines = splitter.push(chunk);
      if (lines.length > 0) yield lines;
    }
  } else {
    const fd = await openForReading(path);
    try {
      const pool = Array.from({ length: REUSED_BLOCKS }, () => Buffer.allocUnsafeSlow(blockBytes));
      let position = options.from?.byteOffset ?? 0;
      for (let k = 0; ; ) {
        if (options.signal?.aborted) throw options.signal.reason ?? new Error('aborted');
        const buffer = pool[k % REUSED_BLOCKS]!;
        let bytesRead: number;
        try {
          bytesRead = readSync(fd, buffer, 0, blockBytes, position);
        } catch (cause) {
          throw ioError('read', path, cause);
        }
        if (bytesRead === 0) break;
        position += bytesRead;
        const lines = splitter.push(buffer.subarray(0, bytesRead));
        if (lines.length === 0) continue;
        k++;
        yield lines;
      }
    } finally {
      closeSync(fd);
    }
  }
  const last = splitter.end();
  if (last.length > 0) yield last;
}

/** One parsed JSONL record. Exactly one of `value` / `error` is set. */
export interface JsonlRecord<T = unknown> {
  /** The physical line (bytes, position, terminator). */
  raw: RawLine;
  /** The parsed value, when the line is valid JSON. */
  value?: T;
  /** Why the line could not be parsed, with file, line and byte offset. */
  error?: ParseError;
}

export interface ReadJsonlOptions extends LineSourceOptions {
  /**
   * What to do with a line that is not valid JSON:
   * - `throw` (default): throw a ParseError naming file, line and byte offset;
   * - `yield`: yield the record with `error` set so the caller can report every bad line.
   */
  onBadLine?: 'throw' | 'yield';
  /** Yield blank lines too (as records without value or error); default false (they are skipped). */
  includeBlank?: boolean;
  /** Parser for one line (default `JSON.parse` of its text); e.g. a skimming parser for indexes. */
  parse?: (raw: RawLine) => unknown;
}

/** Describes a JSON.parse failure in words a user can act on. */
function describeBadLine(raw: RawLine, isLast: boolean, cause: unknown): string {
  const reason = cause instanceof Error ? cause.message : String(cause);
  if (raw.bytes.includes(0)) return 'not valid JSON: the line contains NUL bytes (is this a binary file?)';
  if (isLast && raw.eol === '') {
    return `truncated last line (${raw.bytes.length} bytes, no newline): the file may still be being written or was cut off (${reason})`;
  }
  const preview = raw.text.slice(0, 60).replace(/\s+/g, ' ');
  return `not valid JSON (${reason}); line starts with: ${JSON.stringify(preview)}`;
}

/** Builds the ParseError for a bad line. */
export function badLineError(name: string, raw: RawLine, isLast: boolean, cause: unknown): ParseError {
  return new ParseError({ file: name, line: raw.line, byteOffset: raw.byteOffset }, describeBadLine(raw, isLast, cause), {
    cause,
    hint: 'each line must hold one JSON value; fix or remove that line',
  });
}

/** Parses raw lines as JSON. A bad line is never silently dropped. */
export async function* parseJsonlLines<T = unknown>(lines: AsyncIterable<RawLine>, name: string, options: ReadJsonlOptions = {}): AsyncGenerator<JsonlRecord<T>> {
  // Look one line ahead so a parse failure on the final unterminated line can be called "truncated".
  let pending: RawLine | undefined;
  const parse = options.parse ?? ((raw: RawLine) => JSON.parse(raw.text) as unknown);
  const emit = (raw: RawLine, isLast: boolean): JsonlRecord<T> | undefined => {
    if (raw.isBlank) return options.includeBlank ? { raw } : undefined;
    try {
      return { raw, value: parse(raw) as T };
    } catch (cause) {
      const error = badLineError(name, raw, isLast, cause);
      if (options.onBadLine === 'yield') return { raw, error };
      throw error;
    }
  };
  for await (const raw of lines) {
    if (pending) {
      const rec = emit(pending, false);
      if (rec) yield rec;
    }
    pending = raw;
  }
  if (pending) {
    const rec = emit(pending, true);
    if (rec) yield rec;
  }
}

/** Reads and parses a JSONL file as a stream of records. */
export function readJsonl<T = unknown>(path: string, options: ReadJsonlOptions = {}): AsyncGenerator<JsonlRecord<T>> {
  return parseJsonlLines<T>(readLines(path, options), options.name ?? path, options);
}

/** Parses JSONL held in memory (a string or bytes). */
export function parseJsonlText<T = unknown>(input: string | Uint8Array, options: ReadJsonlOptions = {}): AsyncGenerator<JsonlRecord<T>> {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  const name = options.name ?? '<input>';
  return parseJsonlLines<T>(linesFromChunks([bytes], { ...options, name }), name, options);
}

/** Writes JSON lines atomically: nothing appears at `path` until `close()` commits. */
export class JsonlWriter {
  #lines = 0;
  private constructor(private readonly writer: AtomicWriter) {}

  static async open(path: string, options: AtomicWriteOptions = {}): Promise<JsonlWriter> {
    return new JsonlWriter(await createAtomicWriter(path, options));
  }

  /** Lines written so far. */
  get lines(): number {
    return this.#lines;
  }

  /** Bytes written so far. */
  get bytes(): number {
    return this.writer.bytesWritten;
  }

  /** Where the data is until `close()` (for checking the finished file before committing it). */
  get tempPath(): string {
    return this.writer.tempPath;
  }

  /** Writes one value as a JSON line terminated by `eol` (default "\n"). */
  async writeValue(value: unknown, eol: LineEnding = '\n'): Promise<void> {
    await this.writeRaw(JSON.stringify(value) + eol);
  }

  /** Writes raw bytes/text exactly as given (caller supplies terminators); used for passthrough. */
  async writeRaw(chunk: string | Uint8Array): Promise<void> {
    this.#lines++;
    await this.writer.write(chunk);
  }

  /** Writes a line exactly as it was read: BOM, bytes and terminator. */
  async writeLine(line: RawLine): Promise<void> {
    if (line.bom) await this.writer.write(BOM);
    await this.writer.write(line.bytes);
    if (line.eol) await this.writer.write(line.eol);
    this.#lines++;
  }

  /** Writes buffered lines to the temp file so it can be checked before `close()`. */
  async flush(): Promise<void> {
    await this.writer.flush();
  }

  /** Commits the file atomically. */
  async close(): Promise<void> {
    await this.writer.commit();
  }

  /** Discards everything written; the target is untouched. */
  async abort(): Promise<void> {
    await this.writer.abort();
  }
}

/** The UTF-8 byte order mark, for writers that must reproduce one. */
export const UTF8_BOM: Buffer = BOM;
