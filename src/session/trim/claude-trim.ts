/**
 * The Claude Code trimmer: three streaming passes (index, plan, filter-and-stub) that never hold
 * the transcript in memory. Pass 1 (claude-index.ts) folds what the trim removes anyway — and,
 * when the end of the file shows where that is (fold-point.ts), pages it out as it reads it, so
 * pass 3 (claude-lines.ts) reads only the last compaction intervals. Page-outs go to packs
 * (page-out.ts); every changed line keeps its original there and names it in a restore
 * annotation, so `restoreSession` rebuilds the input byte for byte.
 */
import { readLineBatches } from '../../core/jsonl.js';
import { CtxvmError } from '../../errors.js';
import type { DriverTrimInput, DriverTrimStats } from '../driver.js';
import type { LineMeta } from '../claude/scan.js';
import { emptyFolded, indexClaudeForTrim } from './claude-index.js';
import { ClaudeLineTrimmer, type LineRoute } from './claude-lines.js';
import { foldedLinesPlan, planClaudeTrim, preservedReachesFolded } from './claude-plan.js';
import type { TrimCounters } from './claude-transform.js';
import { findFoldPoint } from './fold-point.js';
import { TrimStreamWriter, type TrimStreamWriterOptions } from './stream-writer.js';

/** Same shape as every driver's trim input (see ../driver.ts). */
export type ClaudeTrimInput = DriverTrimInput;

/** A driver's trim stats, with the Claude-specific counters. */
export type ClaudeTrimStats = Omit<DriverTrimStats, 'counters'> & { counters: TrimCounters };

/**
 * How pass 1 folds (the output is the same either way; tests compare them): `read` pages out
 * what is before the second-to-last boundary while indexing (default), `rolling` folds only the
 * index, `off` keeps the full index.
 */
export type FoldMode = 'read' | 'rolling' | 'off';

/** Knobs of `trimClaudeSession` that do not change its output. */
export interface ClaudeTrimTuning {
  fold?: FoldMode;
  /** Page-out pack sizes and how much output may wait for a pack (see TrimStreamWriterOptions). */
  packs?: Omit<TrimStreamWriterOptions, 'what'>;
}

/** Thrown inside `trimOnce` when the folding index cannot serve the plan (rare; see claude-index.ts). */
class FoldedTooMuch extends Error {}

/** What the three passes leave for the stats once their index and plan are gone. */
interface PassesDone {
  inputBytes: number;
  inputLines: number;
  removedLines: number;
  changedLines: number;
  counters: TrimCounters;
}

/**
 * The three passes, writing into `writer`. Their index, plan and line state die with this call:
 * the check that follows (`writer.finish`) loads the output, and would otherwise hold both.
 */
async function runPasses(opts: ClaudeTrimInput, writer: TrimStreamWriter, fold: boolean, foldBelow: number | undefined): Promise<PassesDone> {
  const { input, policy, tokens } = opts;
  const folded = emptyFolded();
  const trimmer = new ClaudeLineTrimmer({ input, policy, tokens, writer, plan: foldedLinesPlan(folded) });

  // pass 1: index (and page out what it folds on the way)
  const index = await indexClaudeForTrim(input, {
    fold,
    folded,
    ...(foldBelow !== undefined ? { foldBelow, onFolded: (raw, route) => trimmer.line(raw, route) } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    onProgress: (b) => opts.onProgress?.(b, 0, 1),
  });
  if (index.badLines.length > 0) {
    const first = index.badLines[0]!;
    throw new CtxvmError('E_PARSE', `${first.message}${index.badLines.length > 1 ? ` (and ${index.badLines.length - 1} more bad lines)` : ''}`, {
      cause: first,
      hint: 'the transcript has lines that are not JSON; nothing was written',
    });
  }
  if (index.objectLines === 0) throw new CtxvmError('E_PARSE', `${input}: no transcript lines found`, { hint: 'is this a Claude Code session file?' });
  if (fold && preservedReachesFolded(index)) throw new FoldedTooMuch();

  // pass 2: plan
  const plan = planClaudeTrim(index, policy);
  trimmer.plan = plan;
  const metaByLine = new Map<number, LineMeta>(index.folded.kept);
  for (const m of index.lines) metaByLine.set(m.line, m);

  // pass 3: filter and stub (from where pass 1 stopped handing lines on)
  for await (const batch of readLineBatches(input, { reuseBuffers: true, ...(opts.signal ? { signal: opts.signal } : {}), ...(index.readFrom ? { from: index.readFrom } : {}) })) {
    for (const raw of batch) {
      const meta = metaByLine.get(raw.line);
      // a folded line is removed unless kept (then it has metadata) or not an object
      const foldedLine = raw.line < plan.windowStart && !meta && !raw.isBlank && !index.folded.nonObjects.has(raw.line);
      let route: LineRoute;
      if (!meta && !foldedLine) route = { kind: 'pass' };
      else if (foldedLine || plan.removed.has(raw.line)) route = { kind: 'removed' };
      else route = { kind: 'kept', meta: meta! };
      const pending = trimmer.line(raw, route);
      if (pending) await pending;
    }
    opts.onProgress?.(batch[batch.length - 1]!.byteOffset, index.totalBytes, 3);
  }
  await trimmer.end();
  return {
    inputBytes: index.totalBytes,
    inputLines: index.objectLines + index.badLines.length,
    removedLines: trimmer.removedLines,
    changedLines: trimmer.changedLines,
    counters: trimmer.counters,
  };
}

async function trimOnce(opts: ClaudeTrimInput, fold: boolean, foldBelow: number | undefined, packs: ClaudeTrimTuning['packs']): Promise<ClaudeTrimStats> {
  const writer = await TrimStreamWriter.open(opts.output, opts.store, { what: 'transcript', ...packs, ...(opts.idSource ? { idSource: opts.idSource } : {}) });
  try {
    const passes = await runPasses(opts, writer, fold, foldBelow);
    const done = await writer.finish(opts.check);
    return {
      inputBytes: passes.inputBytes,
      inputLines: passes.inputLines,
      outputBytes: done.outputBytes,
      outputLines: done.outputLines,
      removedLines: passes.removedLines,
      changedLines: passes.changedLines,
      objects: done.objects,
      pagedOutBytes: done.pagedOutBytes,
      counters: passes.counters,
      holder: done.holder,
    };
  } catch (error) {
    await writer.abort();
    throw error;
  }
}

/** Trims a Claude Code transcript into `output` (atomically; the input is never modified). */
export async function trimClaudeSession(opts: ClaudeTrimInput, tuning: ClaudeTrimTuning = {}): Promise<ClaudeTrimStats> {
  if (opts.input === opts.output) throw new CtxvmError('E_USAGE', `refusing to overwrite the input ${opts.input}`, { hint: 'pass a different -o path; the original is never modified' });
  const mode = tuning.fold ?? 'read';
  const fold = opts.policy.dropBeforeCompaction && mode !== 'off';
  const foldBelow = fold && mode === 'read' ? await findFoldPoint(opts.input) : undefined;
  try {
    return await trimOnce(opts, fold, foldBelow, tuning.packs);
  } catch (error) {
    if (!(error instanceof FoldedTooMuch)) throw error;
    // the last boundary preserves messages from before the window: index everything
    return trimOnce(opts, false, undefined, tuning.packs);
  }
}
