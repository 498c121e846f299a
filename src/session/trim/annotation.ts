/**
 * The restore annotation ctxvm adds to every line it changes, inserts or follows a removal with.
 * It is a top-level `ctxvm` field — agents ignore unknown top-level fields and never send them
 * to the model — holding the addresses needed to rebuild the original file byte for byte:
 *
 * - `o`: object holding this line's original bytes (with its terminator) — the line was changed;
 * - `d`: object(s) holding the run of original lines removed just before this line (a long run
 *   is stored in several objects of bounded size, listed in order);
 * - `t`: the same for the run removed after this line (end of file);
 * - `s`: true for a line ctxvm inserted (a synthetic tool result); restore drops it;
 * - `a`: 1 when the line is otherwise unchanged and the annotation was appended to its original
 *   bytes as the last field: restore cuts it off again (no object needed for the original).
 */
import { isSha256Hex } from '../../core/hash.js';
import { ParseError } from '../../errors.js';

export const ANNOTATION_KEY = 'ctxvm';
export const ANNOTATION_VERSION = 1;

export interface TrimAnnotation {
  v: number;
  a?: 1;
  o?: string;
  d?: string | string[];
  t?: string | string[];
  s?: true;
}

/** The object addresses of a `d`/`t` field, in order. */
export function runHashes(field: string | string[] | undefined): string[] {
  return field === undefined ? [] : Array.isArray(field) ? field : [field];
}

const SUFFIX_START = `,"${'ctxvm'}":`;

/**
 * Appends `annotation` (with `a: 1`) as the last field of an unchanged line's own bytes, so the
 * line stays byte-identical up to it and restore needs no stored copy. Undefined when the line
 * does not end exactly in `}` (trailing spaces, not an object) or starts with a BOM.
 */
export function spliceAnnotation(bytes: Buffer, bom: boolean, annotation: TrimAnnotation): string | undefined {
  if (bom || bytes.length < 2 || bytes[bytes.length - 1] !== 0x7d) return undefined;
  const text = bytes.toString('utf8');
  if (Buffer.byteLength(text) !== bytes.length) return undefined; // invalid UTF-8 would not round-trip
  const body = text.slice(0, -1);
  if (body.trimEnd() !== body || body.endsWith('{')) return undefined;
  annotation.a = 1;
  return `${body}${SUFFIX_START}${JSON.stringify(annotation)}}`;
}

/** The original line text of a line written by `spliceAnnotation`, or undefined if it was edited. */
export function unspliceAnnotation(text: string, annotation: TrimAnnotation): string | undefined {
  const suffix = `${SUFFIX_START}${JSON.stringify(annotation)}}`;
  if (!text.endsWith(suffix)) return undefined;
  return `${text.slice(0, -suffix.length)}}`;
}

/** Quick byte test before parsing: can this line carry an annotation at all? */
export function mayCarryAnnotation(bytes: Buffer): boolean {
  return bytes.includes('"ctxvm":{');
}

/** Reads and checks the annotation of a parsed line; undefined when there is none. */
export function readAnnotation(value: unknown, where: { file: string; line: number; byteOffset: number }): TrimAnnotation | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const a = (value as Record<string, unknown>)[ANNOTATION_KEY];
  if (a === undefined) return undefined;
  const bad = (why: string) => new ParseError(where, `invalid ctxvm restore annotation: ${why}`, { hint: 'the trimmed file was edited by hand; restore cannot trust this line' });
  if (!a || typeof a !== 'object' || Array.isArray(a)) throw bad('not an object');
  const ann = a as Record<string, unknown>;
  if (ann.v !== ANNOTATION_VERSION) throw bad(`unsupported version ${String(ann.v)}`);
  if (ann.o !== undefined && !isSha256Hex(ann.o)) throw bad('field o is not a sha256 hex digest');
  if (ann.a !== undefined && ann.a !== 1) throw bad('field a must be 1');
  for (const k of ['d', 't'] as const) {
    const v = ann[k];
    if (v === undefined) continue;
    const list = Array.isArray(v) ? v : [v];
    if (list.length === 0 || !list.every(isSha256Hex)) throw bad(`field ${k} is not a sha256 hex digest or a list of them`);
  }
  return ann as unknown as TrimAnnotation;
}
