/**
 * The restore annotation ctxvm adds to every line it changes, inserts or follows a removal with.
 * It is a top-level `ctxvm` field — agents ignore unknown top-level fields and never send them
 * to the model — holding what is needed to rebuild the original file byte for byte.
 *
 * Version 2 (written now). Originals live in page-out packs (see page-out.ts) in lifted form
 * (see lift.ts); a `PackPart` names a byte range of one pack and, when UUIDs were lifted out of
 * it, the byte range of the per-trim id object holding them:
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
export const ANNOTATION_VERSION = 2;

/**
 * A stored piece of original bytes: `[pack, offset, length]` of lifted text in a pack object
 * (offsets in uncompressed bytes), followed by `[ids, idOffset, idLength]` when UUIDs were lifted.
 */
export type PackPart = [pack: string, offset: number, length: number] | [pack: string, offset: number, length: number, ids: string, idOffset: number, idLength: number];

/** A version 2 annotation (written by this build). */
export interface TrimAnnotation {
  v: 2;
  a?: 1;
  o?: PackPart;
  d?: PackPart[];
  t?: PackPart[];
  s?: true;
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

/** True when `x` is a well-formed `PackPart`. */
export function isPackPart(x: unknown): x is PackPart {
  if (!Array.isArray(x) || (x.length !== 3 && x.length !== 6)) return false;
  if (!isSha256Hex(x[0]) || !isCount(x[1]) || !isCount(x[2])) return false;
  return x.length === 3 || (isSha256Hex(x[3]) && isCount(x[4]) && isCount(x[5]));
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
  if (ann.v !== ANNOTATION_VERSION) throw bad(`unsupported version ${String(ann.v)}`);
  if (ann.o !== undefined && !isPackPart(ann.o)) throw bad('field o is not a pack part');
  for (const k of ['d', 't'] as const) {
    const v = ann[k];
    if (v !== undefined && (!Array.isArray(v) || v.length === 0 || !v.every(isPackPart))) throw bad(`field ${k} is not a list of pack parts`);
  }
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
    if (isSha256Hex(p[3])) out.push(p[3]);
  };
  if (isSha256Hex(ann.o)) out.push(ann.o);
  else part(ann.o);
  for (const field of [ann.d, ann.t]) {
    if (isSha256Hex(field)) out.push(field);
    else if (Array.isArray(field)) for (const x of field) isSha256Hex(x) ? out.push(x) : part(x);
  }
  return out;
}
