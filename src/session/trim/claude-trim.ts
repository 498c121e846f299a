/**
 * The Claude Code trimmer: two streaming passes that never hold the transcript in memory. The
 * first is a lean load (../claude/lean-load.ts): the index every decision is made from, and the
 * input's findings. The plan (claude-plan.ts) is made from the index alone; the second pass
 * (claude-lines.ts) reads the file again, line by line, and writes the output while paging out
 * what goes to packs (page-out.ts): every changed line keeps its original there and names it in a
 * restore annotation, so `restoreSession` rebuilds the input byte for byte. The output is indexed
 * as it is written (claude-output-index.ts) and judged by its findings before it is committed.
 */
import { CtxvmError } from '../../errors.js';
import type { DriverTrimInput, DriverTrimStats } from '../driver.js';
import { loadClaudeLean } from '../claude/lean-load.js';
import type { ClaudeIndex, LineMeta } from '../claude/scan.js';
import { ClaudeOutputIndex } from './claude-output-index.js';
import { planClaudeTrim } from './claude-plan.js';
import type { TrimCounters } from './claude-transform.js';
import { trimClaudeRange } from './claude-range.js';
import { TrimStreamWriter, type TrimStreamWriterOptions } from './stream-writer.js';

/** Same shape as every driver's trim input (see ../driver.ts). */
export type ClaudeTrimInput = DriverTrimInput;

/** A driver's trim stats, with the Claude-specific counters and the input's index (without its edit notes). */
export type ClaudeTrimStats = Omit<DriverTrimStats, 'counters' | 'loadInput'> & { counters: TrimCounters; index: ClaudeIndex };

/** Knobs of `trimClaudeSession` that do not change its output. */
export interface ClaudeTrimTuning {
  /** Page-out pack sizes and how much output may wait for a pack (see TrimStreamWriterOptions). */
  packs?: Omit<TrimStreamWriterOptions, 'what' | 'onWritten'>;
}

/** Trims a Claude Code transcript into `output` (atomically; the input is never modified). */
export async function trimClaudeSession(opts: ClaudeTrimInput, tuning: ClaudeTrimTuning = {}): Promise<ClaudeTrimStats> {
  const { input, policy, tokens } = opts;
  if (input === opts.output) throw new CtxvmError('E_USAGE', `refusing to overwrite the input ${input}`, { hint: 'pass a different -o path; the original is never modified' });

  // pass 1: the index and the input's findings
  // the lean context goes at once: only the index, the lean lines and the findings are kept
  const { index, lean, findings: before } = await loadClaudeLean(input, { edits: true, ...(opts.signal ? { signal: opts.signal } : {}), onProgress: (b) => opts.onProgress?.(b, 0, 1) });
  if (index.badLines.length > 0) {
    const first = index.badLines[0]!;
    throw new CtxvmError('E_PARSE', `${first.message}${index.badLines.length > 1 ? ` (and ${index.badLines.length - 1} more bad lines)` : ''}`, {
      cause: first,
      hint: 'the transcript has lines that are not JSON; nothing was written',
    });
  }
  if (index.lines.length === 0) throw new CtxvmError('E_PARSE', `${input}: no transcript lines found`, { hint: 'is this a Claude Code session file?' });
  const plan = planClaudeTrim(index, policy);
  // each line's place in the index: its record there, and where pass 1's notes on it are
  // line numbers run from 1 to at most the last line's: one number each
  const slots = new Int32Array((index.lines[index.lines.length - 1]?.line ?? 0) + 1).fill(-1);
  index.lines.forEach((m, slot) => (slots[m.line] = slot));
  const slotOf = (line: number): number | undefined => {
    const slot = Number.isInteger(line) && line < slots.length ? slots[line]! : -1;
    return slot < 0 ? undefined : slot;
  };
  const metaOf = (line: number): LineMeta | undefined => {
    const slot = slotOf(line);
    return slot === undefined ? undefined : index.lines[slot];
  };

  const output = new ClaudeOutputIndex(input, metaOf, lean);
  const writer = await TrimStreamWriter.open(opts.output, opts.store, {
    what: 'transcript',
    ...tuning.packs,
    ...(opts.idSource ? { idSource: opts.idSource } : {}),
    onWritten: (line) => output.observe(line),
  });
  try {
    // pass 2: filter and stub
    const result = await trimClaudeRange({
      input,
      policy,
      tokens,
      plan,
      lines: { meta: metaOf, slot: slotOf },
      ...(index.edits ? { edits: index.edits } : {}),
      writer,
      ...(opts.signal ? { signal: opts.signal } : {}),
      onProgress: (b) => opts.onProgress?.(b, index.totalBytes, 3),
    });
    // the output's findings, while the last packs are still being stored
    writer.endLines();
    const after = await output.findings();
    opts.judge?.(before, after);
    const done = await writer.finish(opts.check);
    delete index.edits;
    return {
      index,
      inputBytes: index.totalBytes,
      inputLines: index.lines.length,
      outputBytes: done.outputBytes,
      outputLines: done.outputLines,
      removedLines: result.removedLines,
      changedLines: result.changedLines,
      objects: done.objects,
      pagedOutBytes: done.pagedOutBytes,
      counters: result.counters,
      holder: done.holder,
      findings: { before, after },
    };
  } catch (error) {
    await writer.abort();
    throw error;
  }
}
