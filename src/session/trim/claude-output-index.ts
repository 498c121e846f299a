/**
 * The trimmed transcript's index, built while it is written, so the output is validated without
 * being read back: a line copied from the input (or copied with a restore annotation appended)
 * is what the input's index says it is, at its new place; a line written anew is skimmed from
 * the bytes written, exactly as a lean load would read it (lean-load.ts). The findings then come
 * from the same reconstruction and rules as any load; a chain line the lean lines do not hold (a
 * preserved message before the boundary) is read from the written file.
 */
import { reconstructClaudeContext } from '../claude/context.js';
import { leanClaudeLine } from '../claude/lean-line.js';
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
function lineBytes(data: string | Buffer): Buffer {
  let b = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  if (b[0] === BOM[0] && b[1] === BOM[1] && b[2] === BOM[2]) b = b.subarray(3);
  let end = b.length;
  if (b[end - 1] === LF) end--;
  if (b[end - 1] === CR) end--;
  return b.subarray(0, end);
}

export class ClaudeOutputIndex {
  readonly #inputMeta: ReadonlyMap<number, LineMeta>;
  readonly #inputLean: ReadonlyMap<number, Record<string, unknown>>;
  readonly #index: ClaudeIndex;
  /** Lean lines after the output's last boundary so far (as `LeanLines` keeps them). */
  readonly #lean = new Map<number, Record<string, unknown>>();
  readonly #unknownTypes = new Map<string, { count: number; firstLine: number }>();
  #line = 0;

  /** `inputMeta`: the input's lines by number; `inputLean`: its lean lines (lean-load.ts). */
  constructor(inputMeta: ReadonlyMap<number, LineMeta>, inputLean: ReadonlyMap<number, Record<string, unknown>>) {
    this.#inputMeta = inputMeta;
    this.#inputLean = inputLean;
    this.#index = { file: '', lines: [], badLines: [], lastBoundary: -1, totalBytes: 0, unknownTypes: this.#unknownTypes };
  }

  /** Takes the next line written (see `TrimStreamWriterOptions.onWritten`). */
  observe(written: WrittenLine): void {
    const line = ++this.#line;
    const byteOffset = this.#index.totalBytes;
    this.#index.totalBytes += typeof written.data === 'string' ? Buffer.byteLength(written.data) : written.data.length;
    let meta: LineMeta;
    let lean: Record<string, unknown> | undefined;
    if (written.kind !== 'serialized' && written.origin !== undefined) {
      const source = this.#inputMeta.get(written.origin);
      if (!source) return; // a blank or non-object line passed through: not in an index
      // the input line's bytes (an appended annotation changes nothing validation reads)
      meta = { ...source, line, byteOffset, annotated: source.annotated || written.kind === 'annotated' };
      lean = this.#inputLean.get(written.origin);
    } else {
      const bytes = lineBytes(written.data);
      let value: ClaudeLine | undefined;
      try {
        value = skimClaudeForTrim(bytes) ?? (JSON.parse(bytes.toString('utf8')) as ClaudeLine);
      } catch (cause) {
        throw new CtxvmError('E_INTERNAL', `the trimmed transcript's line ${line} is not JSON`, { cause });
      }
      if (!value || typeof value !== 'object' || Array.isArray(value)) return;
      meta = describeLine(value, line, byteOffset, bytes.length);
      try {
        lean = leanClaudeLine(value as Record<string, unknown>, bytes);
      } catch {
        // a skipped string that does not decode: reconstruction reads the line and decides
      }
    }
    if (isBoundary(meta)) {
      this.#index.lastBoundary = this.#index.lines.length;
      this.#lean.clear();
    }
    this.#index.lines.push(meta);
    countUnknownType(this.#unknownTypes, meta);
    if (lean) this.#lean.set(line, lean);
  }

  /** The output's findings, once it is complete and flushed to `file` (where a chain line the lean lines lack is read). */
  async findings(file: string): Promise<ValidationFinding[]> {
    this.#index.file = file;
    const context = await reconstructClaudeContext(this.#index, { lean: true, leanValues: this.#lean });
    return validateClaudeContext(this.#index, context);
  }
}
