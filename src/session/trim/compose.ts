/**
 * Trimming a trimmed file: a line an earlier trim annotated stands for original bytes already
 * stored (its `d` run, its original — stored, or itself without the appended annotation — and
 * its `t` run). A re-trim composes with that instead of wrapping it: a removed line's run takes
 * those parts as they are, a kept line keeps them in its new annotation, and a line nothing
 * happens to is written as it was. So one restore gives back the first original, and trimming
 * a file that has nothing new to trim gives back the same bytes.
 */
import type { LineBytes } from './page-out.js';
import { ANNOTATION_KEY, isPageInOnly, readAnnotation, unspliceAnnotation, type TrimAnnotation } from './annotation.js';
import type { RawLine } from '../../core/jsonl.js';

/** What a line an earlier trim (annotation version 2 or 3) annotated stands for. */
export interface PriorLine {
  ann: TrimAnnotation;
  /** The original of an `a: 1` line: its bytes without the appended annotation. */
  original?: LineBytes;
}

/**
 * The earlier trim's annotation of a parsed line, or undefined when there is none or it is of
 * version 1 (one object per line: such a line is wrapped whole, and restore undoes the levels
 * one by one). Removes the annotation from `value`. Throws a ParseError for a malformed one.
 */
export function takePrior(raw: RawLine, value: Record<string, unknown>, file: string): PriorLine | undefined {
  const ann = readAnnotation(value, { file, line: raw.line, byteOffset: raw.byteOffset });
  // version 1, or a branch's page-in pointer: the line is wrapped whole (its bytes are its original)
  if (!ann || ann.v === 1 || isPageInOnly(ann)) return undefined;
  delete value[ANNOTATION_KEY];
  if (!ann.a) return { ann };
  const text = unspliceAnnotation(raw.text, ann);
  if (text === undefined) return undefined; // edited by hand: treated as a plain line, wrapped whole
  return { ann, original: { bytes: Buffer.from(text), bom: raw.bom, eol: raw.eol } };
}
