/**
 * The trimmed transcript's index, built while it is written, so the output is validated without
 * being read back: a line copied from the input (or copied with a restore annotation appended)
 * is what the input's index says it is — the same record; a line written anew is skimmed from the
 * bytes written, exactly as a lean load would read it (lean-load.ts). The findings then come from
 * the same reconstruction and rules as any load.
 *
 * Lines keep the numbers of the input lines they come from (a line ctxvm inserts comes half a
 * line after the one it answers): findings are compared by what they say, not where
 * (session.ts), and a chain line whose lean form is not at hand — a copied line before the
 * boundary — is then read from the input, where its bytes are the same.
 */
import { reconstructClaudeContext } from '../claude/context.js';
import { LeanLines } from '../claude/lean-line.js';
import { skimClaudeForTrim } from '../claude/line-skim.js';
import { countUnknownType, describeLine, type ClaudeIndex, type LineMeta } from '../claude/scan.js';
import type { ClaudeLine } from '../claude/types.js';
import { validateClaudeContext } from '../claude/validate.js';
import type { ValidationFinding } from '../driver.js';
import { CtxvmError } from '../../errors.js';
import type { WrittenLine } from './stream-writer.js';

const isBoundary = (m: LineMeta) => m.kind === 'system' && m.subtype === 'compact_boundary';
const LF = 0x0a;
const CR = 0x0d;
const BOM = [0xef, 0xbb, 0xbf];

/** A written line's JSON text: without a BOM and terminator. */
function lineBytes(data: Buffer): Buffer {
  let b = data;
  if (b[0] === BOM[0] && b[1] === BOM[1] && b[2] === BOM[2]) b = b.subarray(3);
  let end = b.length;
  if (b[end - 1] === LF) end--;
  if (b[end - 1] === CR) end--;
  return b.subarray(0, end);
}

export class ClaudeOutputIndex {
  readonly #inputMeta: (line: number) => LineMeta | undefined;
  readonly #inputLean: LeanLines;
  readonly #index: ClaudeIndex;
  /** Lean forms of the lines written anew, by line number. */
  readonly #written = new LeanLines();
  readonly #unknownTypes = new Map<string, { count: number; firstLine: number }>();
  /** The number the last line got. */
  #line = 0;

  /** `input`: the input file; `inputMeta`: its line records by number; `inputLean`: its lean lines (lean-load.ts). */
  constructor(input: string, inputMeta: (line: number) => LineMeta | undefined, inputLean: LeanLines) {
    this.#inputMeta = inputMeta;
    this.#inputLean = inputLean;
    this.#index = { file: input, lines: [], badLines: [], lastBoundary: -1, totalBytes: 0, unknownTypes: this.#unknownTypes };
  }

  /** Takes the next line written (see `TrimStreamWriterOptions.onWritten`). */
  observe(written: WrittenLine): void {
    const line = written.origin ?? this.#line + 0.5;
    this.#line = line;
    let meta: LineMeta;
    if (written.kind !== 'serialized' && written.origin !== undefined) {
      const source = this.#inputMeta(written.origin);
      if (!source) return; // a blank or non-object line passed through: not in an index
      meta = source;
    } else {
      const bytes = lineBytes(written.data);
      let value: ClaudeLine | undefined;
      try {
        value = skimClaudeForTrim(bytes) ?? (JSON.parse(bytes.toString('utf8')) as ClaudeLine);
      } catch (cause) {
        throw new CtxvmError('E_INTERNAL', `the trimmed transcript's line for input line ${line} is not JSON`, { cause });
      }
      if (!value || typeof value !== 'object' || Array.isArray(value)) return;
      meta = describeLine(value, line, 0, bytes.length);
      this.#written.set(line, value as Record<string, unknown>, bytes);
    }
    if (isBoundary(meta)) this.#index.lastBoundary = this.#index.lines.length;
    this.#index.lines.push(meta);
    countUnknownType(this.#unknownTypes, meta);
  }

  /** The output's findings, once it is complete. */
  async findings(): Promise<ValidationFinding[]> {
    const lean = { get: (line: number) => this.#written.get(line) ?? this.#inputLean.get(line) };
    const context = await reconstructClaudeContext(this.#index, { lean: true, leanValues: lean });
    return validateClaudeContext(this.#index, context);
  }
}
