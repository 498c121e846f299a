/**
 * The Codex CLI trimmer: three streaming passes (index, plan, filter-and-stub) that never hold the
 * rollout in memory, with the same restore annotation, stubs and options as the Claude Code
 * trimmer. Every changed line keeps its original in the object store and names it in a top-level
 * `ctxvm` field (Codex 0.169 ignores unknown top-level fields on every line type — checked with
 * the resume probe), so `restoreSession` rebuilds the input byte for byte and `pageIn` resolves
 * every stub.
 */
import { randomUUID } from 'node:crypto';
import { sha256Hex } from '../../core/hash.js';
import { readLines, JsonlWriter, UTF8_BOM, type RawLine } from '../../core/jsonl.js';
import { CtxvmError } from '../../errors.js';
import { ANNOTATION_KEY, ANNOTATION_VERSION, spliceAnnotation, type TrimAnnotation } from '../trim/annotation.js';
import type { ClaudeTrimInput, ClaudeTrimStats } from '../trim/claude-trim.js';
import { createObjectSink } from '../trim/object-sink.js';
import { CODEX_ABORTED_OUTPUT } from './context.js';
import { scanCodexSession, type CodexLineMeta } from './scan.js';
import { planCodexTrim, type CodexRemovalReason, type CodexTrimPlan } from './trim-plan.js';
import { emptyCodexCounters, mayTransform, transformCodexLine, type CodexTrimCounters } from './trim-transform.js';
import type { CodexLine } from './types.js';

/** Options of `trimCodexSession`: the same as the Claude Code trimmer's. */
export type CodexTrimInput = ClaudeTrimInput;

/** What a Codex trim did: the Claude Code trimmer's stats, with Codex counters. */
export interface CodexTrimStats extends ClaudeTrimStats {
  counters: CodexTrimCounters;
}

function originalBytes(raw: RawLine): Buffer {
  const parts = [raw.bytes];
  if (raw.bom) parts.unshift(UTF8_BOM);
  if (raw.eol) parts.push(Buffer.from(raw.eol));
  return parts.length === 1 ? Buffer.from(raw.bytes) : Buffer.concat(parts);
}

function syntheticOutput(anchor: CodexLine, callId: string, type: string): CodexLine {
  const line: CodexLine = {
    ...(anchor.timestamp !== undefined ? { timestamp: anchor.timestamp } : {}),
    type: 'response_item',
    payload: { type, call_id: callId, output: CODEX_ABORTED_OUTPUT },
  };
  line[ANNOTATION_KEY] = { v: ANNOTATION_VERSION, s: true } satisfies TrimAnnotation;
  return line;
}

const COUNTER_OF_REASON: Record<CodexRemovalReason, keyof CodexTrimCounters> = {
  'before-compaction': 'beforeCompaction',
  'orphan-output': 'orphanResults',
  reasoning: 'thinking',
  event: 'events',
  'ghost-snapshot': 'ghostSnapshots',
};

/** Removed lines are stored in objects of at most this many bytes, so memory stays flat. */
const RUN_OBJECT_BYTES = 4 * 1024 * 1024;

/** A line waiting to be written (held back one step so a trailing removed run can attach to it). */
type Pending = { raw?: RawLine; meta?: CodexLineMeta; value?: CodexLine; eol: string; annotation?: TrimAnnotation };

/** Trims a Codex rollout into `output` (atomically; the input is never modified). */
export async function trimCodexSession(opts: CodexTrimInput): Promise<CodexTrimStats> {
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
  const sink = createObjectSink(store);
  const counters = emptyCodexCounters();
  for (const reason of plan.removed.values()) counters[COUNTER_OF_REASON[reason]]++;
  const writer = await JsonlWriter.open(output);
  // Threshold decisions use the tokenizer's fitted O(n) estimate, as the Claude trimmer does: it
  // runs at or a little above the exact count, so a payload near the threshold may be paged out
  // a little early, never kept too long.
  const exceeds = (text: string, limit: number) => text.length > limit * 8 || (text.length * 2 > limit && tokens.estimate(text) > limit);
  let run: Buffer[] = [];
  let runBytes = 0;
  let runObjects: string[] = [];
  let pending: Pending | undefined;
  let removedLines = 0;
  let changedLines = 0;
  let objects = 0;

  const blanks: RawLine[] = [];
  const addToRun = (bytes: Buffer) => {
    run.push(bytes);
    runBytes += bytes.length;
  };
  const sealRunPart = async () => {
    if (runBytes === 0) return;
    const bytes = run.length === 1 ? run[0]! : Buffer.concat(run, runBytes);
    run = [];
    runBytes = 0;
    objects++;
    runObjects.push(await sink.put(bytes));
  };
  /** Ends the current run of removed lines; its object address(es) for a `d`/`t` field. */
  const putRun = async (): Promise<string | string[] | undefined> => {
    await sealRunPart();
    const list = runObjects;
    runObjects = [];
    return list.length === 0 ? undefined : list.length === 1 ? list[0] : list;
  };
  const emit = async (p: Pending) => {
    if (!p.annotation && p.raw) {
      await writer.writeLine(p.raw);
      return;
    }
    const annotation = p.annotation ?? { v: ANNOTATION_VERSION };
    // an unchanged line keeps its bytes with the annotation appended (restore cuts it off again);
    // a changed (or already annotated) one is re-serialised and its original stored
    if (!p.value && p.raw && !p.meta?.annotated && !annotation.s && !annotation.o) {
      const spliced = spliceAnnotation(p.raw.bytes, p.raw.bom, annotation);
      if (spliced !== undefined) {
        await writer.writeRaw(spliced + p.eol);
        return;
      }
    }
    if (!annotation.s && !annotation.o && p.raw) {
      annotation.o = await sink.put(originalBytes(p.raw));
      objects++;
    }
    const value = p.value ?? (JSON.parse(p.raw!.text) as CodexLine);
    value[ANNOTATION_KEY] = annotation;
    await writer.writeRaw(JSON.stringify(value) + p.eol);
  };
  const queue = async (p: Pending) => {
    if (pending) await emit(pending);
    pending = p;
  };

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
        for (const b of blanks.splice(0)) addToRun(originalBytes(b));
        addToRun(originalBytes(raw));
        removedLines++;
        if (runBytes >= RUN_OBJECT_BYTES) await sealRunPart();
        continue;
      }
      if (blanks.length > 0 && runBytes === 0 && runObjects.length === 0) for (const b of blanks.splice(0)) await queue({ raw: b, eol: b.eol });
      else for (const b of blanks.splice(0)) addToRun(originalBytes(b));
      let value: CodexLine | undefined;
      let annotation: TrimAnnotation | undefined;
      const dropped = await putRun();
      if (mayTransform(meta, plan, policy)) {
        value = JSON.parse(raw.text) as CodexLine;
        const original = originalBytes(raw);
        // stubs point into the original line, so its address is needed before the transform
        const originalHash = sha256Hex(original);
        if (transformCodexLine(value, meta, { plan, policy, originalHash, exceeds, counters })) {
          await sink.put(original, originalHash);
          objects++;
          annotation = { v: ANNOTATION_VERSION, o: originalHash };
        } else value = undefined; // unchanged after all: the original bytes are written
      }
      if (dropped) {
        // the run goes where it costs no extra object: after the previous line when that one is
        // annotated anyway (changed or inserted), else before this one (which then needs `o`)
        const prev = pending?.annotation;
        if (prev && (prev.o || prev.s) && !prev.t) prev.t = dropped;
        else annotation = { ...(annotation ?? { v: ANNOTATION_VERSION }), d: dropped };
      }
      // a line an earlier trim annotated is wrapped, never passed on with the old annotation:
      // restore then undoes this trim only (and once more, the earlier one)
      if (meta.annotated) annotation ??= { v: ANNOTATION_VERSION };
      if (annotation) changedLines++;
      await queue({ raw, meta, eol: raw.eol, ...(value ? { value } : {}), ...(annotation ? { annotation } : {}) });

      const open = plan.unanswered.get(raw.line);
      if (open) {
        const synthetic = syntheticOutput(value ?? (JSON.parse(raw.text) as CodexLine), open.callId, open.type);
        counters.syntheticResults++;
        await queue({ eol: raw.eol || '\n', value: synthetic, annotation: synthetic[ANNOTATION_KEY] as TrimAnnotation });
      }
    }
    if (runBytes === 0 && runObjects.length === 0) for (const b of blanks.splice(0)) await queue({ raw: b, eol: b.eol });
    else for (const b of blanks.splice(0)) addToRun(originalBytes(b));
    const trailing = await putRun();
    if (!pending) throw new CtxvmError('E_INVALID', `${input}: trimming would leave an empty rollout; nothing was written`);
    if (trailing) {
      const p: Pending = pending;
      if (!p.annotation) changedLines++;
      p.annotation = { ...(p.annotation ?? { v: ANNOTATION_VERSION }), t: trailing };
    }
    await emit(pending);
    await sink.drain();
    if (opts.check) {
      await writer.flush();
      const problems = await opts.check(writer.tempPath);
      if (problems.length > 0) {
        throw new CtxvmError('E_INVALID', `the trimmed rollout would be invalid, so nothing was written:\n  ${problems.slice(0, 10).join('\n  ')}`, {
          hint: 'please report this with the input file; the original is untouched',
        });
      }
    }
    const holder = `trim:${randomUUID()}`;
    const hashes = [...sink.hashes];
    for (let i = 0; i < hashes.length; i += 32) await Promise.all(hashes.slice(i, i + 32).map((h) => store.ref(h, holder)));
    // the objects and their references are durable before the trimmed file appears
    await store.flush();
    await writer.close();
    return {
      inputBytes: index.totalBytes,
      inputLines: index.lines.length + index.badLines.length,
      outputBytes: writer.bytes,
      outputLines: writer.lines,
      removedLines,
      changedLines,
      objects,
      pagedOutBytes: sink.bytes,
      counters,
      holder,
    };
  } catch (error) {
    await writer.abort();
    throw error;
  }
}
