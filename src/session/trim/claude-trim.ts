/**
 * The Claude Code trimmer: three streaming passes (index, plan, filter-and-stub) that never hold
 * the transcript in memory. Every changed line keeps its original in the object store and names
 * it in a restore annotation, so `restoreSession` rebuilds the input byte for byte.
 */
import { createHash, randomUUID } from 'node:crypto';
import { sha256Hex } from '../../core/hash.js';
import { readLines, JsonlWriter, UTF8_BOM, type RawLine } from '../../core/jsonl.js';
import { CtxvmError } from '../../errors.js';
import type { DriverTrimInput, DriverTrimStats } from '../driver.js';
import { scanClaudeSession, type LineMeta } from '../claude/scan.js';
import type { ClaudeLine } from '../claude/types.js';
import { ANNOTATION_KEY, ANNOTATION_VERSION, spliceAnnotation, type TrimAnnotation } from './annotation.js';
import { planClaudeTrim, type ClaudeTrimPlan } from './claude-plan.js';
import { emptyCounters, transformClaudeLine, type TrimCounters } from './claude-transform.js';
import { createObjectSink } from './object-sink.js';
import type { TrimPolicy } from './policy.js';

/** Same shape as every driver's trim input (see ../driver.ts). */
export type ClaudeTrimInput = DriverTrimInput;

/** A driver's trim stats, with the Claude-specific counters. */
export type ClaudeTrimStats = Omit<DriverTrimStats, 'counters'> & { counters: TrimCounters };

/** Whether the transform could change this line (else it is copied without being parsed). */
function mayChange(meta: LineMeta, plan: ClaudeTrimPlan, policy: TrimPolicy): boolean {
  if (meta.hasToolUseResult && policy.toolUseResult) return true;
  if (meta.hasImage && policy.images) return true;
  if (policy.thinking && meta.blockTypes.some((t) => t === 'thinking' || t === 'redacted_thinking')) return true;
  for (const r of meta.toolResults) if (plan.vanishingToolUses.has(r.toolUseId) || plan.supersededReads.has(r.toolUseId)) return true;
  const smallest = Math.min(policy.toolResultTokens, policy.toolInputTokens, ...Object.values(policy.tools).map((t) => t.toolResultTokens ?? Infinity));
  // a payload of n characters holds at least n/8 tokens of ordinary text and at most ~2n
  return (meta.toolResults.length > 0 || meta.toolUses.length > 0) && meta.payloadChars * 2 > smallest;
}

/** A deterministic uuid for the synthetic answer to an assistant line. */
function syntheticUuid(anchor: string): string {
  const h = createHash('sha256').update(`ctxvm-synthetic:${anchor}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function syntheticAnswer(anchor: ClaudeLine, toolUseIds: string[], uuid: string): ClaudeLine {
  const line: ClaudeLine = {
    parentUuid: anchor.uuid ?? null,
    isSidechain: anchor.isSidechain ?? false,
    userType: anchor.userType ?? 'external',
    cwd: anchor.cwd,
    sessionId: anchor.sessionId,
    version: anchor.version,
    gitBranch: anchor.gitBranch,
    type: 'user',
    message: {
      role: 'user',
      content: toolUseIds.map((id) => ({
        type: 'tool_result',
        tool_use_id: id,
        content: '[ctxvm: result unavailable — this tool call had no recorded result in the original session]',
        is_error: true,
      })),
    },
    uuid,
    timestamp: anchor.timestamp,
  };
  (line as Record<string, unknown>)[ANNOTATION_KEY] = { v: ANNOTATION_VERSION, s: true } satisfies TrimAnnotation;
  return line;
}

function originalBytes(raw: RawLine): Buffer {
  const parts = [raw.bytes];
  if (raw.bom) parts.unshift(UTF8_BOM);
  if (raw.eol) parts.push(Buffer.from(raw.eol));
  return parts.length === 1 ? Buffer.from(raw.bytes) : Buffer.concat(parts);
}

/** A line waiting to be written (held back one step so a trailing removed run can attach to it). */
type Pending = { raw?: RawLine; value?: ClaudeLine; eol: string; annotation?: TrimAnnotation };

export async function trimClaudeSession(opts: ClaudeTrimInput): Promise<ClaudeTrimStats> {
  const { input, output, store, policy, tokens } = opts;
  if (input === output) throw new CtxvmError('E_USAGE', `refusing to overwrite the input ${input}`, { hint: 'pass a different -o path; the original is never modified' });

  // pass 1: index
  const index = await scanClaudeSession(input, { signal: opts.signal, onProgress: (b) => opts.onProgress?.(b, 0, 1) });
  if (index.badLines.length > 0) {
    const first = index.badLines[0]!;
    throw new CtxvmError('E_PARSE', `${first.message}${index.badLines.length > 1 ? ` (and ${index.badLines.length - 1} more bad lines)` : ''}`, {
      cause: first,
      hint: 'the transcript has lines that are not JSON; nothing was written',
    });
  }
  if (index.lines.length === 0) throw new CtxvmError('E_PARSE', `${input}: no transcript lines found`, { hint: 'is this a Claude Code session file?' });

  // pass 2: plan
  const plan: ClaudeTrimPlan = planClaudeTrim(index, policy);
  const metaByLine = new Map<number, LineMeta>();
  for (const m of index.lines) metaByLine.set(m.line, m);

  // pass 3: filter and stub
  const sink = createObjectSink(store);
  const counters = emptyCounters();
  const writer = await JsonlWriter.open(output);
  const syntheticParent = new Map<string, string>(); // anchor uuid → synthetic uuid
  // Threshold decisions use the tokenizer's fitted O(n) estimate, not BPE: the BPE tables alone
  // would cost ~70 MB of RSS and most of the time budget. The estimate runs 5-65% above the exact
  // count, so a payload near the threshold may be paged out a little early, never kept too long.
  const exceeds = (text: string, limit: number) => text.length > limit * 8 || (text.length * 2 > limit && tokens.estimate(text) > limit);
  // removed lines are stored in objects of at most RUN_OBJECT_BYTES, so memory stays flat
  const RUN_OBJECT_BYTES = 4 * 1024 * 1024;
  let run: Buffer[] = [];
  let runBytes = 0;
  let runObjects: string[] = [];
  let pending: Pending | undefined;
  let held: RawLine[] = []; // blank or non-object lines waiting to know whether removed lines follow
  let removedLines = 0;
  let changedLines = 0;
  let objects = 0;

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
    if (!p.raw && !p.value) return;
    const annotation = p.annotation ?? { v: ANNOTATION_VERSION };
    // an unchanged line keeps its bytes with the annotation appended; restore cuts it off again
    if (!p.value && p.raw && !annotation.s && !annotation.o && !p.raw.bytes.includes('"ctxvm":{')) {
      const spliced = spliceAnnotation(p.raw.bytes, p.raw.bom, annotation);
      if (spliced !== undefined) {
        await writer.writeRaw(spliced + p.eol);
        return;
      }
    }
    const value = p.value ?? (JSON.parse(p.raw!.text) as ClaudeLine);
    if (!annotation.s && !annotation.o && p.raw) {
      annotation.o = await sink.put(originalBytes(p.raw));
      objects++;
    }
    (value as Record<string, unknown>)[ANNOTATION_KEY] = annotation;
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
      if (!meta) {
        // A blank or non-object line cannot carry a restore annotation, and restore writes a run of
        // removed lines back just before (or, at the end, after) an annotated line. So such a line
        // joins an open run, or waits: into the run if removed lines follow it, else written as is.
        if (runBytes > 0 || runObjects.length > 0) {
          const b = originalBytes(raw);
          run.push(b);
          runBytes += b.length;
        } else held.push(raw);
        continue;
      }
      if (plan.removed.has(raw.line)) {
        for (const h of held) {
          const b = originalBytes(h);
          run.push(b);
          runBytes += b.length;
        }
        held = [];
        const b = originalBytes(raw);
        run.push(b);
        runBytes += b.length;
        removedLines++;
        if (runBytes >= RUN_OBJECT_BYTES) await sealRunPart();
        continue;
      }
      for (const h of held) await queue({ raw: h, eol: h.eol });
      held = [];
      let value: ClaudeLine | undefined;
      let annotation: TrimAnnotation | undefined;
      const needsParse =
        meta.annotated ||
        (raw.line < plan.protectedFromLine && mayChange(meta, plan, policy)) ||
        (meta.parentUuid && (plan.relink.has(meta.parentUuid) || syntheticParent.has(meta.parentUuid))) ||
        runBytes > 0 ||
        runObjects.length > 0 ||
        plan.unanswered.has(raw.line);
      if (needsParse) {
        value = JSON.parse(raw.text) as ClaudeLine;
        const dropped = await putRun();
        const original = originalBytes(raw);
        // stubs point into the original line, so its address is needed before the transform
        const originalHash = sha256Hex(original);
        let changed = transformClaudeLine(value, meta, { plan, policy, originalHash, exceeds, counters });
        if (typeof value.parentUuid === 'string' && syntheticParent.has(value.parentUuid)) {
          value.parentUuid = syntheticParent.get(value.parentUuid)!;
          changed = true;
        }
        // a line an earlier trim annotated gets this trim's annotation (its bytes, old annotation
        // included, become the original): restore then undoes exactly one trim at a time
        if (meta.annotated) changed = true;
        if (changed) {
          await sink.put(original, originalHash);
          objects++;
          changedLines++;
          annotation = { v: ANNOTATION_VERSION, o: originalHash, ...(dropped ? { d: dropped } : {}) };
        } else {
          // unchanged after all: the original bytes are written (with the run's annotation appended)
          value = undefined;
          if (dropped) annotation = { v: ANNOTATION_VERSION, d: dropped };
        }
      }
      await queue({ raw, eol: raw.eol, ...(value ? { value } : {}), ...(annotation ? { annotation } : {}) });

      const open = plan.unanswered.get(raw.line);
      if (open) {
        const anchor = value ?? (JSON.parse(raw.text) as ClaudeLine);
        if (anchor.uuid) {
          const uuid = syntheticUuid(anchor.uuid);
          syntheticParent.set(anchor.uuid, uuid);
          const synthetic = syntheticAnswer(anchor, open, uuid);
          counters.syntheticResults += open.length;
          await queue({ eol: '\n', value: synthetic, annotation: synthetic.ctxvm as TrimAnnotation });
        }
      }
    }
    for (const h of held) await queue({ raw: h, eol: h.eol });
    const trailing = await putRun();
    if (!pending) throw new CtxvmError('E_INVALID', `${input}: trimming would leave an empty transcript; nothing was written`);
    if (trailing) {
      pending.annotation ??= { v: ANNOTATION_VERSION };
      pending.annotation.t = trailing;
      if (!pending.annotation.s && !pending.annotation.o) changedLines++;
    }
    await emit(pending);
    await sink.drain();
    if (opts.check) {
      await writer.flush();
      const problems = await opts.check(writer.tempPath);
      if (problems.length > 0) {
        throw new CtxvmError('E_INVALID', `the trimmed transcript would be invalid, so nothing was written:\n  ${problems.slice(0, 10).join('\n  ')}`, {
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

