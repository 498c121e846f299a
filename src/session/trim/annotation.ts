/**
 * The restore annotation ctxvm adds to every line it changes, inserts or follows a removal with.
 * It is a top-level `ctxvm` field — agents ignore unknown top-level fields and never send them
 * to the model — holding what is needed to rebuild the original file byte for byte.
 *
 * Version 3 (written now) is version 2 with digests: every part ends with the first 16 hex digits
 * of the SHA-256 of the original bytes it restores, and an `a: 1` line carries `h`, the same digest
 * of its original line (terminator included), so restore and page-in verify what they rebuild.
 * A re-trim composes annotations instead of nesting them: parts always restore the first
 * original, so one restore undoes any number of trims.
 *
 * Version 2. Originals live in page-out packs (see page-out.ts) in lifted form (see lift.ts); a
 * `PackPart` names a byte range of one pack and, when UUIDs were lifted out of it, the byte range
 * of the per-trim id object holding them:
 *
 * - `o`: part holding this line's original (with its terminator) — the line was changed;
 * - `d`: parts holding the run of original lines removed just before this line, in order;
 * - `t`: the same for the run removed after this line (end of file);
 * - `s`: true for a line ctxvm inserted (a synthetic tool result); restore drops it;
 * - `a`: 1 when the line is otherwise unchanged and the annotation was appended to its original
 *   bytes as the last field: restore cuts it off again (no stored original needed).
 *
 * Version 1 (still restored): `o` is the address of an object holding the original line, `d`/`t`
 * an address or a list of them holding the removed runs, whole and not lifted.
 */
import { isSha256Hex } from '../../core/hash.js';
import { ParseError } from '../../errors.js';

export const ANNOTATION_KEY = 'ctxvm';
/** Version of the annotations this build writes. */
export const ANNOTATION_VERSION = 3;

/** Hex digits of SHA-256 a digest keeps (64 bits: an accidental match is out of reach). */
export const DIGEST_HEX = 16;

/**
 * A stored piece of original bytes: `[pack, offset, length]` of lifted text in a pack object
 * (offsets in uncompressed bytes), followed by `[ids, idOffset, idLength]` when UUIDs were lifted,
 * and (version 3) by the digest of the bytes it restores.
 */
export type PackPart =
  | [pack: string, offset: number, length: number]
  | [pack: string, offset: number, length: number, ids: string, idOffset: number, idLength: number]
  | [pack: string, offset: number, length: number, digest: string]
  | [pack: string, offset: number, length: number, ids: string, idOffset: number, idLength: number, digest: string];

/** A version 2 or 3 annotation (3 is written by this build). */
export interface TrimAnnotation {
  v: 2 | 3;
  a?: 1;
  /** Digest of the original line of an `a: 1` line (version 3). */
  h?: string;
  o?: PackPart;
  d?: PackPart[];
  t?: PackPart[];
  s?: true;
  /**
   * Where the original of a line holding stubs is, for page-in only (version 3): a branch of a
   * trimmed session keeps this instead of the restore fields, which belong to its source.
   */
  p?: PackPart;
}

/** True for an annotation that only says where stubs page in from (nothing to restore). */
export function isPageInOnly(a: AnyTrimAnnotation): boolean {
  return a.v !== 1 && a.p !== undefined && a.o === undefined && a.d === undefined && a.t === undefined && !a.a && !a.s;
}

/** The part a line's stubs page in from: its stored original, or a branch's page-in pointer. */
export function pageInPart(a: unknown): PackPart | undefined {
  if (!a || typeof a !== 'object' || Array.isArray(a)) return undefined;
  const ann = a as { v?: unknown; o?: unknown; p?: unknown };
  if (ann.v === 1) return undefined;
  if (isPackPart(ann.p)) return ann.p;
  return isPackPart(ann.o) ? ann.o : undefined;
}

/** The digest of a part, when it has one. */
export function partDigest(p: PackPart): string | undefined {
  return p.length === 4 ? p[3] : p.length === 7 ? p[6] : undefined;
}

/** The id-object range of a part, when UUIDs were lifted out of it. */
export function partIds(p: PackPart): { hash: string; offset: number; length: number } | undefined {
  return p.length >= 6 ? { hash: p[3] as string, offset: p[4] as number, length: p[5] as number } : undefined;
}

/** A version 1 annotation (written by earlier builds; restored, never written). */
export interface TrimAnnotationV1 {
  v: 1;
  a?: 1;
  o?: string;
  d?: string | string[];
  t?: string | string[];
  s?: true;
}

/** Any annotation restore understands. */
export type AnyTrimAnnotation = TrimAnnotation | TrimAnnotationV1;

/** The object addresses of a version 1 `d`/`t` field, in order. */
export function runHashes(field: string | string[] | undefined): string[] {
  return field === undefined ? [] : Array.isArray(field) ? field : [field];
}

const SUFFIX_START = `,"${'ctxvm'}":`;

/**
 * Appends `annotation` (with `a: 1`) as the last field of an unchanged line's own bytes, so the
 * line stays byte-identical up to it and restore needs no stored copy. Undefined when the line
 * does not end exactly in `}` (trailing spaces, not an object) or starts with a BOM.
 * `serialize` turns the annotation into its JSON text (default `JSON.stringify`).
 */
export function spliceAnnotation(bytes: Buffer, bom: boolean, annotation: { a?: 1 }, serialize: (a: object) => string = JSON.stringify): string | undefined {
  if (bom || bytes.length < 2 || bytes[bytes.length - 1] !== 0x7d) return undefined;
  const text = bytes.toString('utf8');
  if (Buffer.byteLength(text) !== bytes.length) return undefined; // invalid UTF-8 would not round-trip
  const body = text.slice(0, -1);
  if (body.trimEnd() !== body || body.endsWith('{')) return undefined;
  annotation.a = 1;
  return `${body}${SUFFIX_START}${serialize(annotation)}}`;
}

/** The original line text of a line written by `spliceAnnotation`, or undefined if it was edited. */
export function unspliceAnnotation(text: string, annotation: AnyTrimAnnotation): string | undefined {
  const suffix = `${SUFFIX_START}${JSON.stringify(annotation)}}`;
  if (!text.endsWith(suffix)) return undefined;
  return `${text.slice(0, -suffix.length)}}`;
}

/** Quick byte test before parsing: can this line carry an annotation at all? */
export function mayCarryAnnotation(bytes: Buffer): boolean {
  return bytes.includes('"ctxvm":{');
}

const isCount = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
const isDigest = (x: unknown): x is string => typeof x === 'string' && x.length === DIGEST_HEX && /^[0-9a-f]+$/.test(x);

/** True when `x` is a well-formed `PackPart` (of version 2, or with a digest of version 3). */
export function isPackPart(x: unknown, withDigest?: boolean): x is PackPart {
  if (!Array.isArray(x) || ![3, 4, 6, 7].includes(x.length)) return false;
  if (!isSha256Hex(x[0]) || !isCount(x[1]) || !isCount(x[2])) return false;
  const digested = x.length === 4 || x.length === 7;
  if (withDigest !== undefined && digested !== withDigest) return false;
  if (digested && !isDigest(x[x.length - 1])) return false;
  return x.length < 6 || (isSha256Hex(x[3]) && isCount(x[4]) && isCount(x[5]));
}

/** Reads and checks the annotation of a parsed line; undefined when there is none. */
export function readAnnotation(value: unknown, where: { file: string; line: number; byteOffset: number }): AnyTrimAnnotation | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const a = (value as Record<string, unknown>)[ANNOTATION_KEY];
  if (a === undefined) return undefined;
  const bad = (why: string) => new ParseError(where, `invalid ctxvm restore annotation: ${why}`, { hint: 'the trimmed file was edited by hand; restore cannot trust this line' });
  if (!a || typeof a !== 'object' || Array.isArray(a)) throw bad('not an object');
  const ann = a as Record<string, unknown>;
  if (ann.a !== undefined && ann.a !== 1) throw bad('field a must be 1');
  if (ann.v === 1) {
    if (ann.o !== undefined && !isSha256Hex(ann.o)) throw bad('field o is not a sha256 hex digest');
    for (const k of ['d', 't'] as const) {
      const v = ann[k];
      if (v === undefined) continue;
      const list = Array.isArray(v) ? v : [v];
      if (list.length === 0 || !list.every(isSha256Hex)) throw bad(`field ${k} is not a sha256 hex digest or a list of them`);
    }
    return ann as unknown as TrimAnnotationV1;
  }
  if (ann.v !== 2 && ann.v !== 3) throw bad(`unsupported version ${String(ann.v)}`);
  // version 3 parts carry digests; composed annotations may also hold version 2 parts of older trims
  const digested = ann.v === 3 ? undefined : false;
  if (ann.o !== undefined && !isPackPart(ann.o, digested)) throw bad('field o is not a pack part');
  for (const k of ['d', 't'] as const) {
    const v = ann[k];
    if (v !== undefined && (!Array.isArray(v) || v.length === 0 || !v.every((p) => isPackPart(p, digested)))) throw bad(`field ${k} is not a list of pack parts`);
  }
  if (ann.h !== undefined && (ann.v !== 3 || !isDigest(ann.h))) throw bad('field h is not a digest');
  if (ann.p !== undefined && (ann.v !== 3 || !isPackPart(ann.p))) throw bad('field p is not a pack part');
  return ann as unknown as TrimAnnotation;
}

/**
 * Every object address a (possibly hand-edited) annotation names, either version; malformed
 * entries are skipped. Used to hold the objects of a trimmed file (gc) and of its branches.
 */
export function annotationObjects(annotation: unknown): string[] {
  if (!annotation || typeof annotation !== 'object' || Array.isArray(annotation)) return [];
  const ann = annotation as Record<string, unknown>;
  const out: string[] = [];
  const part = (p: unknown) => {
    if (!Array.isArray(p)) return;
    if (isSha256Hex(p[0])) out.push(p[0]);
    if (p.length >= 6 && isSha256Hex(p[3])) out.push(p[3]);
  };
  if (isSha256Hex(ann.o)) out.push(ann.o);
  else part(ann.o);
  part(ann.p);
  for (const field of [ann.d, ann.t]) {
    if (isSha256Hex(field)) out.push(field);
    else if (Array.isArray(field)) for (const x of field) isSha256Hex(x) ? out.push(x) : part(x);
  }
  return out;
}
