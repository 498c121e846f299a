/**
 * The restore annotation ctxvm adds to every line it changes, inserts or follows a removal with.
 * It is a top-level `ctxvm` field — agents ignore unknown top-level fields and never send them
 * to the model — holding the addresses needed to rebuild the original file byte for byte:
 *
 * - `o`: object holding this line's original bytes (with its terminator) — the line was changed;
 * - `d`: object(s) holding the run of original lines removed just before this line (a long run
 *   is stored in several objects of bounded size, listed in order);
 * - `t`: the same for the run removed after this line (end of file);
 * - `s`: true for a line ctxvm inserted (a synthetic tool result); restore drops it.
 */
import { isSha256Hex } from '../../core/hash.js';
import { ParseError } from '../../errors.js';

export const ANNOTATION_KEY = 'ctxvm';
export const ANNOTATION_VERSION = 1;

export interface TrimAnnotation {
  v: number;
  o?: string;
  d?: string | string[];
  t?: string | string[];
  s?: true;
}

/** The object addresses of a `d`/`t` field, in order. */
export function runHashes(field: string | string[] | undefined): string[] {
  return field === undefined ? [] : Array.isArray(field) ? field : [field];
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
  for (const k of ['d', 't'] as const) {
    const v = ann[k];
    if (v === undefined) continue;
    const list = Array.isArray(v) ? v : [v];
    if (list.length === 0 || !list.every(isSha256Hex)) throw bad(`field ${k} is not a sha256 hex digest or a list of them`);
  }
  return ann as unknown as TrimAnnotation;
}
