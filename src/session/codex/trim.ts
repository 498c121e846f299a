/**
 * The Codex CLI trimmer: three streaming passes (index, plan, filter-and-stub) that never hold the
 * rollout in memory, with the same restore annotation, stubs and options as the Claude Code
 * trimmer. Every changed line keeps its original in a page-out pack and names it in a top-level
 * `ctxvm` field (Codex 0.169 ignores unknown top-level fields on every line type — checked with
 * the resume probe), so `restoreSession` rebuilds the input byte for byte and `pageIn` resolves
 * every stub. The output and page-out machinery is shared (../trim/stream-writer.ts).
 */
import { readLines, type RawLine } from '../../core/jsonl.js';
import { CtxvmError } from '../../errors.js';
import type { ClaudeTrimInput, ClaudeTrimStats } from '../trim/claude-trim.js';
import type { PageOutOptions } from '../trim/page-out.js';
import { TrimStreamWriter, type AnnotationDraft, type QueuedLine } from '../trim/stream-writer.js';
import { withStandInRefs } from '../trim/stub.js';
import { takePrior, type PriorLine } from '../trim/compose.js';
import { CODEX_ABORTED_OUTPUT } from './context.js';
import { scanCodexSession, type CodexLineMeta } from './scan.js';
import { planCodexTrim, type CodexRemovalReason, type CodexTrimPlan } from './trim-plan.js';
import { emptyCodexCounters, mayTransform, transformCodexLine, type CodexTrimCounters } from './trim-transform.js';
import type { CodexLine } from './types.js';

/** Options of `trimCodexSession`: the same as the Claude Code trimmer's. */
export type CodexTrimInput = ClaudeTrimInput;

/** What a Codex trim did: the Claude Code trimmer's stats, with Codex counters. */
export interface CodexTrimStats extends Omit<ClaudeTrimStats, 'index'> {
  counters: CodexTrimCounters;
}

function syntheticOutput(anchor: CodexLine, callId: string, type: string): CodexLine {
  return {
    ...(anchor.timestamp !== undefined ? { timestamp: anchor.timestamp } : {}),
    type: 'response_item',
    payload: { type, call_id: callId, output: CODEX_ABORTED_OUTPUT },
  };
}

const COUNTER_OF_REASON: Record<CodexRemovalReason, keyof CodexTrimCounters> = {
  'before-compaction': 'beforeCompaction',
  'orphan-output': 'orphanResults',
  reasoning: 'thinking',
  event: 'events',
  'ghost-snapshot': 'ghostSnapshots',
};

/** Trims a Codex rollout into `output` (atomically; the input is never modified). `packs` tunes page-out pack sizes. */
export async function trimCodexSession(opts: CodexTrimInput, packs: Omit<PageOutOptions, 'onSealed'> = {}): Promise<CodexTrimStats> {
  const { input, output, store, policy, tokens } = opts;
  if (input === output) throw new CtxvmError('E_USAGE', `refusing to overwrite the input ${input}`, { hint: 'pass a different -o path; the original is never modified' });

  // pass 1: index
  const index = await scanCodexSession(input, { signal: opts.signal, onProgress: (b) => opts.onProgress?.(b, 0, 1) });
  if (index.badLines.length > 0) {
    const first = index.badLines[0]!;
    throw new CtxvmError('E_PARSE', `${first.message}${index.badLines.length > 1 ? ` (and ${index.badLines.length - 1} more bad lines)` : ''}`, {
      cause: first,
      hint: 'the rollout has lines that are not JSON objects; nothing was written',
    });
  }
  if (index.lines.length === 0) throw new CtxvmError('E_PARSE', `${input}: no rollout lines found`, { hint: 'is this a Codex CLI rollout-*.jsonl file?' });

  // pass 2: plan
  const plan: CodexTrimPlan = planCodexTrim(index, policy);
  const metaByLine = new Map<number, CodexLineMeta>();
  for (const m of index.lines) metaByLine.set(m.line, m);

  // pass 3: filter and stub
  const counters = emptyCodexCounters();
  for (const reason of plan.removed.values()) counters[COUNTER_OF_REASON[reason]]++;
  const writer = await TrimStreamWriter.open(output, store, { what: 'rollout', ...packs });
  // Decisions use the tokenizer's fitted O(n) estimate, as the Claude trimmer does: it runs at or
  // a little above the exact count.
  const tokensOf = (text: string) => tokens.estimate(withStandInRefs(text));
  let removedLines = 0;
  let changedLines = 0;
  const blanks: RawLine[] = [];

  try {
    for await (const raw of readLines(input, { signal: opts.signal })) {
      if (raw.line % 512 === 0) opts.onProgress?.(raw.byteOffset, index.totalBytes, 3);
      const meta = metaByLine.get(raw.line);
      // Blank lines cannot carry an annotation: they wait for the next line. Before a removed line
      // they join its run (restore puts them back in place); before a kept one they are copied.
      if (!meta) {
        blanks.push(raw);
        continue;
      }
      if (plan.removed.has(raw.line)) {
        for (const b of blanks.splice(0)) writer.addToRun(b);
        // a line an earlier trim annotated stands for the originals it names
        const prior = meta.annotated ? takePrior(raw, JSON.parse(raw.text) as Record<string, unknown>, input) : undefined;
        if (prior) writer.addPriorToRun(prior);
        else writer.addToRun(raw);
        removedLines++;
        await writer.sealIfDue();
        continue;
      }
      if (blanks.length > 0 && !writer.runOpen) for (const b of blanks.splice(0)) await writer.queue({ raw: b, eol: b.eol });
      else for (const b of blanks.splice(0)) writer.addToRun(b);
      let value: CodexLine | undefined;
      let annotation: AnnotationDraft | undefined;
      let stubPack: QueuedLine['stubPack'];
      let original: QueuedLine['original'];
      let prior: PriorLine | undefined;
      if (meta.annotated) {
        value = JSON.parse(raw.text) as CodexLine;
        prior = takePrior(raw, value as Record<string, unknown>, input);
      }
      const dropped = writer.endRun();
      let changed = false;
      // stubs point into the original line, so where it will be stored is needed first
      const at = writer.nextLocation();
      if (mayTransform(meta, plan, policy)) {
        value ??= JSON.parse(raw.text) as CodexLine;
        changed = transformCodexLine(value, meta, { plan, policy, originalRef: at.location, tokensOf, counters });
      }
      if (prior) {
        // composed with the earlier trim's annotation; a line nothing happens to stays as it was
        const composed = writer.composeLine(prior, dropped, changed, at);
        ({ annotation, stubPack, original } = composed);
        if (!composed.keepValue) value = undefined;
      } else {
        if (changed) {
          annotation = { o: writer.storeOriginal(raw, at) };
          stubPack = at.pack;
        } else value = undefined; // unchanged after all: the original bytes are written
        if (dropped) {
          // the run goes where it costs no extra stored line: after the previous line when that one
          // is annotated anyway (changed or inserted), else before this one
          const prev = writer.held?.annotation;
          if (prev && (prev.o || prev.s) && !prev.t) prev.t = dropped;
          else annotation = { ...(annotation ?? {}), d: dropped };
        }
        // a line a version 1 annotation names is wrapped whole: restore undoes it level by level
        if (meta.annotated) annotation ??= {};
      }
      if (annotation) changedLines++;
      await writer.queue({
        raw,
        eol: raw.eol,
        ...(value ? { value } : {}),
        ...(annotation ? { annotation } : {}),
        ...(stubPack ? { stubPack } : {}),
        ...(original ? { original } : {}),
        ...(prior && !annotation ? { prior } : {}),
      });

      const open = plan.unanswered.get(raw.line);
      if (open) {
        const synthetic = syntheticOutput(value ?? (JSON.parse(raw.text) as CodexLine), open.callId, open.type);
        counters.syntheticResults++;
        await writer.queue({ eol: raw.eol || '\n', value: synthetic, annotation: { s: true } });
      }
      await writer.sealIfDue();
    }
    if (!writer.runOpen) for (const b of blanks.splice(0)) await writer.queue({ raw: b, eol: b.eol });
    else for (const b of blanks.splice(0)) writer.addToRun(b);
    const trailing = writer.endRun();
    if (!writer.held) throw new CtxvmError('E_INVALID', `${input}: trimming would leave an empty rollout; nothing was written`);
    if (trailing && writer.attachTrailing(trailing)) changedLines++;
    const done = await writer.finish(opts.check);
    return {
      inputBytes: index.totalBytes,
      inputLines: index.lines.length + index.badLines.length,
      outputBytes: done.outputBytes,
      outputLines: done.outputLines,
      removedLines,
      changedLines,
      objects: done.objects,
      pagedOutBytes: done.pagedOutBytes,
      counters,
      holder: done.holder,
    };
  } catch (error) {
    await writer.abort();
    throw error;
  }
}
