/**
 * The form in which the trimmer stores original lines: "lifted". Every lowercase UUID outside the
 * line's content is moved out into a side list (the same encoding as a snapshot's uuid-lift
 * stream: the UUID becomes byte 0x01, a literal 0x01/0x02 is escaped by 0x02), while the content
 * — the values of the top-level `message`, `toolUseResult` and `payload` keys, which stubs point
 * into — is kept verbatim (escaped only).
 *
 * Why: a branch rewrites `sessionId`, `uuid`, `parentUuid`… on every line and nothing else, so
 * the lifted bytes of a branch's line equal its source's, and the page-out packs of a trimmed
 * branch are the same objects as its siblings'. Why not inside content: `pageIn` parses a lifted
 * line with the side list unknown (it lives with the trimmed file), and the payload it returns
 * must be exact; bookkeeping fields come back as the nil UUID there, which no stub points at.
 */
import type { ByteBuffer } from '../../core/byte-buffer.js';
import { keyIs, scanObject } from '../../core/json-scan.js';
import { UTF8_BOM } from '../../core/jsonl.js';
import { isUuidAt, UUID_BYTES, UUID_ESCAPE, UUID_MARK, UuidLiftError } from '../dag/uuid-lift.js';

/** Top-level keys whose values are content (kept verbatim, so page-in is exact). */
export const CONTENT_KEYS: readonly string[] = ['message', 'toolUseResult', 'payload'];

const DASH = 0x2d;
const UUID_TEXT = 36;
const HEX_VALUE = (() => {
  const t = new Int8Array(256).fill(-1);
  for (let i = 0; i < 16; i++) t['0123456789abcdef'.charCodeAt(i)] = i;
  return t;
})();
const HEX_DIGIT = Buffer.from('0123456789abcdef', 'latin1');

/** Moves every UUID of `b[start, end)` to `ids` (16 bytes each), writing the rest to `text`. */
export function liftUuidsInto(b: Buffer, start: number, end: number, text: ByteBuffer, ids: ByteBuffer): void {
  if (end <= start) return;
  const v = b.subarray(start, end);
  const n = v.length;
  let from = 0;
  let nextMark = v.indexOf(UUID_MARK);
  let nextEsc = v.indexOf(UUID_ESCAPE);
  let dash = n > 8 ? v.indexOf(DASH, 8) : -1;
  for (;;) {
    let uuidAt = -1;
    while (dash !== -1) {
      const s = dash - 8;
      if (s + UUID_TEXT > n) {
        dash = -1;
        break;
      }
      if (s >= from && isUuidAt(v, s)) {
        uuidAt = s;
        break;
      }
      dash = v.indexOf(DASH, dash + 1);
    }
    const ctrl = nextMark === -1 ? nextEsc : nextEsc === -1 ? nextMark : Math.min(nextMark, nextEsc);
    const at = ctrl !== -1 && (uuidAt === -1 || ctrl < uuidAt) ? ctrl : uuidAt;
    if (at === -1) break;
    text.append(v, from, at);
    if (at === ctrl) {
      text.appendByte(UUID_ESCAPE);
      text.appendByte(v[at]!);
      from = at + 1;
      if (at === nextMark) nextMark = v.indexOf(UUID_MARK, at + 1);
      else nextEsc = v.indexOf(UUID_ESCAPE, at + 1);
      continue;
    }
    text.appendByte(UUID_MARK);
    ids.ensure(UUID_BYTES);
    for (let k = at; k < at + UUID_TEXT; k += 2) {
      if (v[k] === DASH) k++;
      ids.appendByte((HEX_VALUE[v[k]!]! << 4) | HEX_VALUE[v[k + 1]!]!);
    }
    from = at + UUID_TEXT;
    dash = from + 8 < n ? v.indexOf(DASH, from + 8) : -1;
    // a control byte inside what turned out to be a UUID cannot exist (UUIDs are hex and dashes)
  }
  text.append(v, from, n);
}

/** Copies `b[start, end)` to `text`, escaping 0x01 and 0x02 (UUIDs stay). */
export function escapeInto(b: Buffer, start: number, end: number, text: ByteBuffer): void {
  if (end <= start) return;
  const v = b.subarray(start, end);
  let from = 0;
  let nextMark = v.indexOf(UUID_MARK);
  let nextEsc = v.indexOf(UUID_ESCAPE);
  while (nextMark !== -1 || nextEsc !== -1) {
    const at = nextMark === -1 ? nextEsc : nextEsc === -1 ? nextMark : Math.min(nextMark, nextEsc);
    text.append(v, from, at);
    text.appendByte(UUID_ESCAPE);
    text.appendByte(v[at]!);
    from = at + 1;
    if (at === nextMark) nextMark = v.indexOf(UUID_MARK, at + 1);
    else nextEsc = v.indexOf(UUID_ESCAPE, at + 1);
  }
  text.append(v, from, v.length);
}

/**
 * The byte ranges of a line's content values (top-level `message`, `toolUseResult`, `payload`) as
 * `[start, end, start, end, …]` in order, or undefined when the line is not a JSON object.
 */
export function contentRegions(bytes: Buffer): number[] | undefined {
  const regions: number[] = [];
  const end = scanObject(bytes, 0, bytes.length, (m) => {
    for (const key of CONTENT_KEYS) {
      if (keyIs(bytes, m, key)) {
        regions.push(m.valueStart, m.valueEnd);
        return;
      }
    }
  });
  return end < 0 ? undefined : regions;
}

/**
 * Writes the lifted form of one physical line (`bytes` without terminator, plus its BOM and
 * terminator) to `text`, and the UUIDs lifted out of it to `ids`. `regions` are the line's
 * content ranges when the caller has them (see `contentRegions`); null means "not an object".
 */
export function liftLineInto(bytes: Buffer, bom: boolean, eol: string, text: ByteBuffer, ids: ByteBuffer, regions?: readonly number[] | null): void {
  if (bom) text.append(UTF8_BOM);
  // not an object (null/undefined regions): lift it all — nothing in it is a payload a stub points to
  const content = regions === undefined ? contentRegions(bytes) : regions;
  let at = 0;
  if (content) {
    for (let k = 0; k < content.length; k += 2) {
      liftUuidsInto(bytes, at, content[k]!, text, ids);
      escapeInto(bytes, content[k]!, content[k + 1]!, text);
      at = content[k + 1]!;
    }
  }
  liftUuidsInto(bytes, at, bytes.length, text, ids);
  if (eol === '\n') text.appendByte(0x0a);
  else if (eol === '\r\n') {
    text.appendByte(0x0d);
    text.appendByte(0x0a);
  }
}

/**
 * Decodes lifted bytes. `ids` supplies the UUIDs in order; without it (page-in, where only
 * content is wanted) every lifted UUID comes back as the nil UUID. Throws `UuidLiftError` when
 * `ids` does not match the marks.
 */
export function unlift(text: Buffer, ids: Buffer | undefined, out: ByteBuffer): void {
  let from = 0;
  let idAt = 0;
  let nextMark = text.indexOf(UUID_MARK);
  let nextEsc = text.indexOf(UUID_ESCAPE);
  while (nextMark !== -1 || nextEsc !== -1) {
    const at = nextMark === -1 ? nextEsc : nextEsc === -1 ? nextMark : Math.min(nextMark, nextEsc);
    out.append(text, from, at);
    if (at === nextEsc) {
      if (at + 1 >= text.length) throw new UuidLiftError('the lifted text ends inside an escape');
      out.appendByte(text[at + 1]!);
      from = at + 2;
      nextEsc = text.indexOf(UUID_ESCAPE, from);
      if (nextMark !== -1 && nextMark < from) nextMark = text.indexOf(UUID_MARK, from);
      continue;
    }
    out.ensure(UUID_TEXT);
    if (ids) {
      if (idAt + UUID_BYTES > ids.length) throw new UuidLiftError('the UUID list ended early');
      for (let k = 0; k < UUID_BYTES; k++) {
        if (k === 4 || k === 6 || k === 8 || k === 10) out.appendByte(DASH);
        const byte = ids[idAt + k]!;
        out.appendByte(HEX_DIGIT[byte >> 4]!);
        out.appendByte(HEX_DIGIT[byte & 15]!);
      }
      idAt += UUID_BYTES;
    } else {
      for (let k = 0; k < UUID_TEXT; k++) out.appendByte(k === 8 || k === 13 || k === 18 || k === 23 ? DASH : 0x30);
    }
    from = at + 1;
    nextMark = text.indexOf(UUID_MARK, from);
  }
  out.append(text, from, text.length);
  if (ids && idAt !== ids.length) throw new UuidLiftError('the UUID list has unused bytes');
}
