/**
 * Pass 2 of the Claude Code trimmer: each line is routed by the plan — passed through, removed
 * into a run, or kept (and changed by the transform) — and handed to one `ClaudeLineTrimmer`,
 * which writes the output and pages out the originals.
 */
import { readLineBatches } from '../../core/jsonl.js';
import type { TokenCounter } from '../../text/tokens.js';
import { EDIT_SLOTS } from '../claude/line-skim.js';
import type { LineMeta } from '../claude/scan.js';
import { ClaudeLineTrimmer, type LineRoute } from './claude-lines.js';
import type { ClaudeTrimPlan } from './claude-plan.js';
import type { TrimCounters } from './claude-transform.js';
import { regionsFromEdits } from './partial-line.js';
import type { TrimPolicy } from './policy.js';
import type { TrimStreamWriter } from './stream-writer.js';

/** The lines of the index a range reads: each line's record and its place in the index. */
export interface IndexedLines {
  meta(line: number): LineMeta | undefined;
  /** Where the line's record is in the index (`ClaudeIndex.lines`, and its notes in `ClaudeIndex.edits`). */
  slot(line: number): number | undefined;
}

/** The lines to trim and what to trim them with. */
export interface ClaudeRange {
  input: string;
  policy: TrimPolicy;
  tokens: TokenCounter;
  plan: ClaudeTrimPlan;
  lines: IndexedLines;
  edits?: Int32Array;
  writer: TrimStreamWriter;
  signal?: AbortSignal;
  /** Called with the byte offset reached, after each read block. */
  onProgress?: (byteOffset: number) => void;
}

/** What trimming the lines did. */
export interface ClaudeRangeResult {
  removedLines: number;
  changedLines: number;
  counters: TrimCounters;
}

/** Trims the lines of `r.input` into its writer (which it leaves open). */
export async function trimClaudeRange(r: ClaudeRange): Promise<ClaudeRangeResult> {
  const { plan, lines, edits } = r;
  const trimmer = new ClaudeLineTrimmer({
    input: r.input,
    policy: r.policy,
    tokens: r.tokens,
    writer: r.writer,
    plan,
    ...(edits ? { edits } : {}),
  });
  for await (const batch of readLineBatches(r.input, { reuseBuffers: true, ...(r.signal ? { signal: r.signal } : {}) })) {
    for (const raw of batch) {
      const meta = lines.meta(raw.line);
      let route: LineRoute;
      if (!meta) route = { kind: 'pass' };
      else {
        const notes = lines.slot(raw.line)! * EDIT_SLOTS;
        if (!plan.removed.has(raw.line)) route = { kind: 'kept', meta, edits: notes };
        else {
          // where its content is, for lifting, from pass 1's notes
          const regions = edits ? regionsFromEdits(edits, notes) : undefined;
          route = { kind: 'removed', ...(regions ? { regions } : {}) };
        }
      }
      const pending = trimmer.line(raw, route);
      if (pending) await pending;
    }
    r.onProgress?.(batch[batch.length - 1]!.byteOffset);
  }
  await trimmer.end();
  return { removedLines: trimmer.removedLines, changedLines: trimmer.changedLines, counters: trimmer.counters };
}
