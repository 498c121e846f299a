/**
 * "uuid-lift": a lossless, streaming transform that moves every lowercase UUID out of a session
 * file into a side stream. A branch rewrites `sessionId` on every line and remaps every `uuid`,
 * `parentUuid`, `leafUuid`; once the UUIDs are lifted out, a branch's lines are byte-identical
 * to its source's, so the content-defined chunks of both are the same objects and a snapshot of a
 * branch costs its side stream (16 bytes per UUID) plus whatever the branch really changed.
 *
 * Text stream: the file's bytes with each UUID replaced by the byte 0x01; a literal 0x01 or 0x02
 * byte is written as 0x02 followed by that byte (valid JSON never holds raw control bytes, so this
 * is rare). Newlines are untouched, so line-boundary chunking works on the text stream.
 * Side stream: the UUIDs in order, 16 raw bytes each. Decoding re-formats them as lowercase
 * 8-4-4-4-12 hex, which is exactly what was matched, so decode(encode(x)) === x for any bytes.
 */

/** Name and version of the encoding, recorded in manifests. */
export const UUID_LIFT_ID = 'uuid-lift/1';
/** Bytes per UUID in the side stream. */
export const UUID_BYTES = 16;

const MARK = 0x01;
const ESC = 0x02;
const DASH = 0x2d;
const UUID_TEXT_LENGTH = 36;
/** The text-stream byte that stands for one lifted UUID. */
export const UUID_MARK = MARK;
/** The text-stream byte that escapes a literal 0x01 or 0x02 (written before it). */
export const UUID_ESCAPE = ESC;
const MARK_BYTE = Buffer.from([MARK]);

/** Lowercase hex digits. */
const HEX = (() => {
  const t = new Uint8Array(256);
  for (const c of '0123456789abcdef') t[c.charCodeAt(0)] = 1;
  return t;
})();

/** True when a lowercase 8-4-4-4-12 UUID starts at `s` (the caller checked it fits). */
export function isUuidAt(b: Buffer, s: number): boolean {
  if (b[s + 8] !== DASH || b[s + 13] !== DASH || b[s + 18] !== DASH || b[s + 23] !== DASH) return false;
  for (let i = s; i < s + UUID_TEXT_LENGTH; i++) {
    if (i === s + 8 || i === s + 13 || i === s + 18 || i === s + 23) continue;
    if (HEX[b[i]!] !== 1) return false;
  }
  return true;
}

/** Output of one encoder step. */
export interface LiftedBlock {
  /** Text-stream bytes. */
  text: Buffer;
  /** Side-stream bytes (a multiple of 16). */
  uuids: Buffer;
}

/** Streaming encoder. Feed blocks with `push`, then call `end` once. */
export class UuidLiftEncoder {
  #carry: Buffer | undefined;

  /** Encodes what can be decided so far; up to 35 trailing bytes wait for the next block. */
  push(block: Buffer): LiftedBlock {
    const input = this.#carry ? Buffer.concat([this.#carry, block]) : block;
    this.#carry = undefined;
    return this.#encode(input, false);
  }

  /** Encodes the remaining bytes. */
  end(): LiftedBlock {
    const input = this.#carry ?? Buffer.alloc(0);
    this.#carry = undefined;
    return this.#encode(input, true);
  }

  #encode(input: Buffer, final: boolean): LiftedBlock {
    const n = input.length;
    // A UUID starting in the last 35 bytes may continue in the next block.
    const safe = final ? n : Math.max(0, n - (UUID_TEXT_LENGTH - 1));
    const text: Buffer[] = [];
    const uuids: Buffer[] = [];
    let from = 0; // start of the bytes not yet emitted
    // Every UUID has a dash 8 bytes after its start, so candidates are found with memchr for '-';
    // scanning dashes in order tests starts in order, which gives the leftmost, non-overlapping
    // matches a regular expression would find. Control bytes to escape are found the same way.
    let nextMark = input.indexOf(MARK);
    let nextEsc = input.indexOf(ESC);
    let dash = input.indexOf(DASH, 8);
    for (;;) {
      let uuidAt = -1;
      while (dash !== -1) {
        const s = dash - 8;
        if (s + UUID_TEXT_LENGTH > n || s >= safe) {
          dash = -1;
          break;
        }
        if (s >= from && isUuidAt(input, s)) {
          uuidAt = s;
          break;
        }
        dash = input.indexOf(DASH, dash + 1);
      }
      const ctrl = nextMark === -1 ? nextEsc : nextEsc === -1 ? nextMark : Math.min(nextMark, nextEsc);
      const at = ctrl !== -1 && ctrl < safe && (uuidAt === -1 || ctrl < uuidAt) ? ctrl : uuidAt;
      if (at === -1) break;
      if (at > from) text.push(input.subarray(from, at));
      if (at === ctrl) {
        text.push(Buffer.from([ESC, input[at]!]));
        from = at + 1;
        if (at === nextMark) nextMark = input.indexOf(MARK, at + 1);
        else nextEsc = input.indexOf(ESC, at + 1);
        // a control byte inside a candidate UUID makes it no UUID; the dash search simply goes on
        continue;
      }
      text.push(MARK_BYTE);
      uuids.push(Buffer.from(input.toString('latin1', at, at + 8) + input.toString('latin1', at + 9, at + 13) + input.toString('latin1', at + 14, at + 18) + input.toString('latin1', at + 19, at + 23) + input.toString('latin1', at + 24, at + 36), 'hex'));
      from = at + UUID_TEXT_LENGTH;
      dash = input.indexOf(DASH, from + 8);
    }
    const end = Math.max(from, safe);
    if (end > from) text.push(input.subarray(from, end));
    if (end < n) this.#carry = Buffer.from(input.subarray(end));
    return { text: text.length === 1 ? text[0]! : Buffer.concat(text), uuids: Buffer.concat(uuids) };
  }
}

/** Formats 16 bytes as a lowercase 8-4-4-4-12 UUID. */
function formatUuid(bytes: Buffer, at: number): string {
  const hex = bytes.toString('hex', at, at + UUID_BYTES);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Thrown when a text stream and its side stream do not fit together. */
export class UuidLiftError extends Error {}

/**
 * Streaming decoder. `pull` supplies side-stream bytes on demand (resolving to undefined at the
 * end), so neither stream is ever held whole in memory.
 */
export class UuidLiftDecoder {
  #uuids: Buffer = Buffer.alloc(0);
  #uuidPos = 0;
  #pendingEscape = false;
  #exhausted = false;

  constructor(private readonly pull: () => Promise<Buffer | undefined>) {}

  async #ensure(bytes: number): Promise<void> {
    while (this.#uuids.length - this.#uuidPos < bytes) {
      if (this.#exhausted) throw new UuidLiftError('the UUID side stream ended early');
      const next = await this.pull();
      if (next === undefined) {
        this.#exhausted = true;
        continue;
      }
      this.#uuids = Buffer.concat([this.#uuids.subarray(this.#uuidPos), next]);
      this.#uuidPos = 0;
    }
  }

  /** Decodes one block of the text stream. */
  async push(block: Buffer): Promise<Buffer> {
    let marks = 0;
    for (let i = block.indexOf(MARK); i !== -1; i = block.indexOf(MARK, i + 1)) marks++;
    // Counting may include escaped 0x01 bytes; fetching a little too much is harmless.
    await this.#ensure(marks * UUID_BYTES).catch((error: unknown) => {
      if (!(error instanceof UuidLiftError)) throw error;
    });
    const out: Buffer[] = [];
    let from = 0;
    let i = 0;
    if (this.#pendingEscape && block.length > 0) {
      out.push(block.subarray(0, 1));
      from = i = 1;
      this.#pendingEscape = false;
    }
    while (i < block.length) {
      const c = block[i]!;
      if (c !== MARK && c !== ESC) {
        // Jump to the next special byte.
        const nextMark = block.indexOf(MARK, i);
        const nextEsc = block.indexOf(ESC, i);
        const next = nextMark === -1 ? nextEsc : nextEsc === -1 ? nextMark : Math.min(nextMark, nextEsc);
        if (next === -1) break;
        i = next;
        continue;
      }
      if (i > from) out.push(block.subarray(from, i));
      if (c === ESC) {
        if (i + 1 >= block.length) {
          this.#pendingEscape = true;
          from = i = block.length;
          break;
        }
        out.push(block.subarray(i + 1, i + 2));
        from = i = i + 2;
        continue;
      }
      if (this.#uuids.length - this.#uuidPos < UUID_BYTES) throw new UuidLiftError('the UUID side stream ended early');
      out.push(Buffer.from(formatUuid(this.#uuids, this.#uuidPos), 'latin1'));
      this.#uuidPos += UUID_BYTES;
      from = i = i + 1;
    }
    if (from < block.length) out.push(block.subarray(from));
    return Buffer.concat(out);
  }

  /** Checks that both streams ended together. */
  async end(): Promise<void> {
    if (this.#pendingEscape) throw new UuidLiftError('the text stream ends inside an escape');
    if (this.#uuids.length - this.#uuidPos > 0) throw new UuidLiftError('the UUID side stream has unused bytes');
    if (!this.#exhausted) {
      const next = await this.pull();
      if (next !== undefined && next.length > 0) throw new UuidLiftError('the UUID side stream has unused bytes');
    }
  }
}
