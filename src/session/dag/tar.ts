/**
 * Just enough POSIX ustar to write and read ctxvm export archives without a dependency: regular
 * files only, names up to 255 bytes (prefix + name), sizes up to 8 GiB. Archives open with any
 * `tar`. The reader is strict — header checksums, octal fields, member sizes — and reports each
 * member's type so the importer can refuse links, devices and the like; it never touches the
 * file system.
 */
import { IntegrityError } from '../../errors.js';

/** Tar block size, bytes. */
export const TAR_BLOCK = 512;
const MAX_OCTAL_SIZE = 0o77777777777; // 11 octal digits

/** Member types, from the typeflag byte. */
export type TarEntryType = 'file' | 'hardlink' | 'symlink' | 'char-device' | 'block-device' | 'directory' | 'fifo' | 'pax-header' | 'gnu-longname' | 'other';

function typeOf(flag: number): TarEntryType {
  switch (String.fromCharCode(flag)) {
    case '0':
    case '\0':
    case '7':
      return 'file';
    case '1':
      return 'hardlink';
    case '2':
      return 'symlink';
    case '3':
      return 'char-device';
    case '4':
      return 'block-device';
    case '5':
      return 'directory';
    case '6':
      return 'fifo';
    case 'x':
    case 'g':
      return 'pax-header';
    case 'L':
    case 'K':
      return 'gnu-longname';
    default:
      return 'other';
  }
}

function writeString(block: Buffer, offset: number, length: number, value: string): void {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length > length) throw new RangeError(`tar field too long: ${value}`);
  bytes.copy(block, offset);
}

function writeOctal(block: Buffer, offset: number, length: number, value: number): void {
  block.write(value.toString(8).padStart(length - 1, '0') + '\0', offset, length, 'latin1');
}

/** Splits a path into ustar prefix (≤ 155 bytes) and name (≤ 100 bytes) at a '/'. */
function splitName(path: string): { prefix: string; name: string } {
  if (Buffer.byteLength(path) <= 100) return { prefix: '', name: path };
  for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100) return { prefix, name };
  }
  throw new RangeError(`path too long for a tar member: ${path}`);
}

/** A ustar header for a regular file. */
export function tarFileHeader(path: string, size: number, mtimeMs: number, mode = 0o644): Buffer {
  if (!Number.isSafeInteger(size) || size < 0 || size > MAX_OCTAL_SIZE) throw new RangeError(`tar member ${path}: size ${size} out of range`);
  const block = Buffer.alloc(TAR_BLOCK);
  const { prefix, name } = splitName(path);
  writeString(block, 0, 100, name);
  writeOctal(block, 100, 8, mode);
  writeOctal(block, 108, 8, 0);
  writeOctal(block, 116, 8, 0);
  writeOctal(block, 124, 12, size);
  writeOctal(block, 136, 12, Math.max(0, Math.floor(mtimeMs / 1000)));
  block.fill(0x20, 148, 156); // checksum is computed with this field as spaces
  block[156] = 0x30; // '0': regular file
  writeString(block, 257, 6, 'ustar');
  writeString(block, 263, 2, '00');
  writeString(block, 345, 155, prefix);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'latin1');
  return block;
}

/** Zero bytes that pad a member of `size` bytes to a whole block. */
export function tarPadding(size: number): Buffer {
  const rest = size % TAR_BLOCK;
  return Buffer.alloc(rest === 0 ? 0 : TAR_BLOCK - rest);
}

/** The end-of-archive marker: two zero blocks. */
export const TAR_END: Buffer = Buffer.alloc(2 * TAR_BLOCK);

/** One member as read. Consume `body` fully (or not at all) before asking for the next member. */
export interface TarEntry {
  /** Member path exactly as stored (prefix + '/' + name when a prefix is set). */
  path: string;
  type: TarEntryType;
  size: number;
  /** Link target for link members (informational). */
  linkTarget: string;
  body: AsyncGenerator<Buffer>;
}

/** Pulls exact byte counts from a chunk stream. */
class ByteReader {
  #iterator: AsyncIterator<Uint8Array>;
  #buffer: Buffer = Buffer.alloc(0);
  #done = false;
  constructor(source: AsyncIterable<Uint8Array>) {
    this.#iterator = source[Symbol.asyncIterator]();
  }
  async #fill(): Promise<boolean> {
    if (this.#done) return false;
    const next = await this.#iterator.next();
    if (next.done) {
      this.#done = true;
      return false;
    }
    const chunk = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value);
    this.#buffer = this.#buffer.length ? Buffer.concat([this.#buffer, chunk]) : chunk;
    return true;
  }
  /** Exactly `n` bytes, or fewer at the end of the stream. */
  async read(n: number): Promise<Buffer> {
    while (this.#buffer.length < n && (await this.#fill()));
    const out = this.#buffer.subarray(0, Math.min(n, this.#buffer.length));
    this.#buffer = this.#buffer.subarray(out.length);
    return out;
  }
  /** Up to `max` bytes (at least one unless the stream ended). */
  async some(max: number): Promise<Buffer> {
    if (this.#buffer.length === 0) await this.#fill();
    const out = this.#buffer.subarray(0, Math.min(max, this.#buffer.length));
    this.#buffer = this.#buffer.subarray(out.length);
    return out;
  }
}

function readString(block: Buffer, offset: number, length: number): string {
  const field = block.subarray(offset, offset + length);
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? length : end).toString('utf8');
}

function readOctal(block: Buffer, offset: number, length: number, what: string, where: string): number {
  const text = block.toString('latin1', offset, offset + length).replace(/[\0 ]+$/, '').replace(/^ +/, '');
  if (!/^[0-7]*$/.test(text)) throw new IntegrityError(`${where}: bad ${what} field in a tar header (binary or non-octal numbers are not accepted)`);
  return text === '' ? 0 : parseInt(text, 8);
}

/** Reads the members of a tar stream; `name` labels errors (the archive's path). */
export async function* readTar(source: AsyncIterable<Uint8Array>, name: string): AsyncGenerator<TarEntry> {
  const reader = new ByteReader(source);
  let index = 0;
  for (;;) {
    const header = await reader.read(TAR_BLOCK);
    const where = `${name}: member ${index + 1}`;
    if (header.length === 0) throw new IntegrityError(`${name}: archive ends without the end-of-archive marker (truncated?)`);
    if (header.length < TAR_BLOCK) throw new IntegrityError(`${where}: truncated header`);
    if (header.every((b) => b === 0)) return; // end marker (the second zero block is not required)
    let sum = 0;
    for (let i = 0; i < TAR_BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : header[i]!;
    const recorded = readOctal(header, 148, 8, 'checksum', where);
    if (recorded !== sum) throw new IntegrityError(`${where}: header checksum mismatch (not a tar archive, or damaged)`);
    const prefix = header.toString('latin1', 257, 262) === 'ustar' ? readString(header, 345, 155) : '';
    const base = readString(header, 0, 100);
    const path = prefix ? `${prefix}/${base}` : base;
    const size = readOctal(header, 124, 12, 'size', where);
    const type = typeOf(header[156]!);
    const linkTarget = readString(header, 157, 100);
    const padded = size + tarPadding(size).length;
    let remaining = size;
    let consumed = false;
    async function* body(): AsyncGenerator<Buffer> {
      consumed = true;
      while (remaining > 0) {
        const piece = await reader.some(Math.min(remaining, 1 << 20));
        if (piece.length === 0) throw new IntegrityError(`${name}: member ${path} is truncated`);
        remaining -= piece.length;
        yield piece;
      }
    }
    const entry: TarEntry = { path, type, size, linkTarget, body: body() };
    yield entry;
    if (!consumed) {
      // skip an unread body
      for await (const _ of entry.body);
    }
    if (remaining > 0) throw new IntegrityError(`${name}: member ${path} was not read to its end`);
    const pad = await reader.read(padded - size);
    if (pad.length < padded - size) throw new IntegrityError(`${name}: member ${path} is truncated`);
    index++;
  }
}
