/**
 * Pass 2 of the Claude Code trimmer, one line at a time (claude-range.ts routes them): removed
 * lines go into the current run of page-outs, kept lines are copied or transformed (stubs,
 * relinks) with their original stored, synthetic answers are inserted.
 */
import { createHash } from 'node:crypto';
import { badLineError, type RawLine } from '../../core/jsonl.js';
import { CtxvmError } from '../../errors.js';
import type { TokenCounter } from '../../text/tokens.js';
import type { LineMeta } from '../claude/scan.js';
import type { ClaudeLine } from '../claude/types.js';
import type { ClaudeTrimPlan } from './claude-plan.js';
import { emptyCounters, transformClaudeLine, type TrimCounters } from './claude-transform.js';
import type { TrimPolicy } from './policy.js';
import type { AnnotationDraft, QueuedLine, TrimStreamWriter } from './stream-writer.js';
import { mayCarryAnnotation } from './annotation.js';
import { takePrior, type PriorLine } from './compose.js';
import { withStandInRefs } from './stub.js';
import type { LineBytes } from './page-out.js';
import { partialFromEdits, readPartialLine, type PartialLine } from './partial-line.js';

/** What to do with a line: pass it through like a blank line, remove it, or keep it (transformed). */
export type LineRoute = { kind: 'pass' } | { kind: 'removed'; regions?: readonly number[] | null } | { kind: 'kept'; meta: LineMeta; edits?: number };

/** A deterministic uuid for the synthetic answer to an assistant line. */
function syntheticUuid(anchor: string): string {
  const h = createHash('sha256').update(`ctxvm-synthetic:${anchor}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function syntheticAnswer(anchor: ClaudeLine, toolUseIds: string[], uuid: string): ClaudeLine {
  return {
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
}

/** Options of `ClaudeLineTrimmer`. */
export interface ClaudeLineTrimmerOptions {
  /** The input file (for error messages). */
  input: string;
  policy: TrimPolicy;
  tokens: TokenCounter;
  writer: TrimStreamWriter;
  /** The plan the lines are trimmed by. */
  plan: ClaudeTrimPlan;
  /** Where pass 1 noted the members the trim edits (`ClaudeIndex.edits`; a kept route says where its line's notes start). */
  edits?: Int32Array;
}

/** Pass 2's state: the writer, lines held back, synthetic parents, counters. */
export class ClaudeLineTrimmer {
  /** The plan every line is trimmed by. */
  readonly plan: ClaudeTrimPlan;
  readonly counters: TrimCounters = emptyCounters();
  removedLines = 0;
  changedLines = 0;
  readonly #input: string;
  readonly #policy: TrimPolicy;
  readonly #writer: TrimStreamWriter;
  readonly #smallest: number;
  /** Smallest payload threshold inside the protected tail (Infinity: the tail is left alone). */
  readonly #tail: number;
  readonly #tokensOf: (text: string, limit?: number) => number;
  /** The first stub says how to page in; a file an earlier trim annotated has said it already. */
  readonly #legend = { pending: true };
  readonly #syntheticParent = new Map<string, string>(); // anchor uuid → synthetic uuid
  readonly #edits: Int32Array | undefined;
  #held: RawLine[] = []; // blank or non-object lines waiting to know whether removed lines follow

  constructor(options: ClaudeLineTrimmerOptions) {
    this.plan = options.plan;
    this.#input = options.input;
    this.#policy = options.policy;
    this.#writer = options.writer;
    this.#edits = options.edits;
    const { policy, tokens } = options;
    this.#smallest = Math.min(policy.toolResultTokens, policy.toolInputTokens, ...Object.values(policy.tools).map((t) => t.toolResultTokens ?? Infinity));
    this.#tail = policy.tailPayloadTokens > 0 ? Math.max(this.#smallest, policy.tailPayloadTokens) : Infinity;
    // Decisions use the tokenizer's fitted O(n) estimate, not BPE: exact counts of every payload
    // would be most of the time budget. The estimate runs 5-65% above the exact count.
    this.#tokensOf = (text, limit) => tokens.estimate(withStandInRefs(text), limit);
  }

  /** Whether the transform could change this line (else it is copied without being parsed). */
  #mayChange(meta: LineMeta): boolean {
    const { plan } = this;
    const policy = this.#policy;
    for (const r of meta.toolResults) if (plan.orphanResults.has(r.toolUseId)) return true;
    const hasPayload = meta.toolResults.length > 0 || meta.toolUses.length > 0;
    // a payload of n characters holds at least n/8 tokens of ordinary text and at most ~2n
    if (meta.line >= plan.protectedFromLine) return hasPayload && meta.payloadChars * 2 > this.#tail;
    if (meta.hasToolUseResult && policy.toolUseResult) return true;
    if (meta.hasImage && policy.images) return true;
    if (policy.thinking && meta.blockTypes.some((t) => t === 'thinking' || t === 'redacted_thinking')) return true;
    for (const r of meta.toolResults) if (plan.supersededReads.has(r.toolUseId)) return true;
    return hasPayload && meta.payloadChars * 2 > this.#smallest;
  }

  #prior(raw: RawLine): PriorLine | undefined {
    let value: unknown;
    try {
      value = JSON.parse(raw.text);
    } catch {
      return undefined;
    }
    return value && typeof value === 'object' && !Array.isArray(value) ? takePrior(raw, value as Record<string, unknown>, this.#input) : undefined;
  }

  /**
   * The line partly read (partial-line.ts) — where pass 1 noted its members, when it did — or
   * undefined when it must be parsed whole.
   */
  #readPartial(raw: RawLine, meta: LineMeta, edits: number | undefined): PartialLine | undefined {
    if (raw.bom) return undefined;
    try {
      const noted = this.#edits && edits !== undefined ? partialFromEdits(raw.bytes, this.#edits, edits, meta.otherType ?? meta.kind) : undefined;
      return noted ?? readPartialLine(raw.bytes);
    } catch (cause) {
      throw badLineError(this.#input, raw, false, cause);
    }
  }

  #parse(raw: RawLine): ClaudeLine {
    try {
      return JSON.parse(raw.text) as ClaudeLine;
    } catch (cause) {
      throw badLineError(this.#input, raw, false, cause); // pass 1 checked the structure only
    }
  }

  /**
   * Trims one line. Blank and removed lines are handled synchronously (undefined comes back)
   * unless a pack is due to be sealed; await what comes back otherwise.
   */
  line(raw: RawLine, route: LineRoute): Promise<void> | undefined {
    const writer = this.#writer;
    if (route.kind === 'pass') {
      // A blank or non-object line cannot carry a restore annotation, and restore writes a run of
      // removed lines back just before (or, at the end, after) an annotated line. So such a line
      // joins an open run, or waits: into the run if removed lines follow it, else written as is.
      if (writer.runOpen) writer.addToRun(raw);
      else this.#held.push(raw.detach()); // it may wait past its read block
      return undefined;
    }
    if (route.kind === 'removed') {
      if (this.#held.length > 0) {
        for (const h of this.#held) writer.addToRun(h);
        this.#held = [];
      }
      // a line an earlier trim annotated stands for the originals it names
      const prior = mayCarryAnnotation(raw.bytes) ? this.#prior(raw) : undefined;
      if (prior) writer.addPriorToRun(prior);
      else writer.addToRun(raw, route.regions);
      this.removedLines++;
      return writer.sealDue ? writer.sealIfDue() : undefined;
    }
    return this.#kept(raw, route.meta, route.edits);
  }

  #kept(raw: RawLine, meta: LineMeta, edits: number | undefined): Promise<void> | undefined {
    const writer = this.#writer;
    for (const h of this.#held) writer.queue({ raw: h, eol: h.eol });
    this.#held = [];
    const { plan } = this;
    if (meta.annotated) this.#legend.pending = false;
    let value: ClaudeLine | undefined;
    let annotation: AnnotationDraft | undefined;
    let stubPack: QueuedLine['stubPack'];
    const needsParse =
      meta.annotated ||
      this.#mayChange(meta) ||
      plan.reparent.has(raw.line) ||
      (meta.parentUuid && (plan.relink.has(meta.parentUuid) || this.#syntheticParent.has(meta.parentUuid))) ||
      plan.unanswered.has(raw.line);
    let original: LineBytes | undefined;
    let prior: PriorLine | undefined;
    let json: string | undefined;
    if (!needsParse && writer.runOpen) {
      // the line stays as it is (the transform would leave it alone): it only carries the run
      // removed before it, appended to its bytes
      annotation = { d: writer.endRun()! };
    } else if (needsParse) {
      // a line an earlier trim annotated is parsed whole: its annotation is composed, not appended
      const partial = meta.annotated ? undefined : this.#readPartial(raw, meta, edits);
      value = partial ? partial.value : this.#parse(raw);
      prior = meta.annotated ? takePrior(raw, value as Record<string, unknown>, this.#input) : undefined;
      const dropped = writer.endRun();
      // stubs point into the original line, so where it will be stored is needed first
      const at = writer.nextLocation();
      let changed = transformClaudeLine(value, meta, { plan, policy: this.#policy, originalRef: at.location, tokensOf: this.#tokensOf, counters: this.counters, legend: this.#legend });
      if (typeof value.parentUuid === 'string' && this.#syntheticParent.has(value.parentUuid)) {
        value.parentUuid = this.#syntheticParent.get(value.parentUuid)!;
        changed = true;
      }
      if (prior) {
        // composed with the earlier trim's annotation; a line nothing happens to stays as it was
        const composed = writer.composeLine(prior, dropped, changed, at);
        ({ annotation, stubPack, original } = composed);
        if (annotation) this.changedLines++;
        if (!composed.keepValue) value = undefined;
      } else {
        // a line a version 1 annotation names is wrapped whole: restore undoes it level by level
        if (meta.annotated) changed = true;
        if (changed) {
          this.changedLines++;
          annotation = { o: writer.storeOriginal(raw, at, partial?.regions), ...(dropped ? { d: dropped } : {}) };
          stubPack = at.pack;
          // written now, while the line's bytes are at hand
          if (partial) json = partial.json();
        } else {
          // unchanged after all: the original bytes are written (with the run's annotation appended)
          value = undefined;
          if (dropped) annotation = { d: dropped };
        }
      }
    }
    writer.queue({
      raw,
      eol: raw.eol,
      ...(value ? { value: value as Record<string, unknown>, ...(json !== undefined ? { json } : {}) } : {}),
      ...(annotation ? { annotation } : {}),
      ...(stubPack ? { stubPack } : {}),
      ...(original ? { original } : {}),
      ...(prior && !annotation ? { prior } : {}),
    });

    const open = plan.unanswered.get(raw.line);
    if (open) {
      // the answer copies the anchor's bookkeeping: from the whole line, not a partly read one
      const anchor = json === undefined && value ? value : this.#parse(raw);
      if (anchor.uuid) {
        const uuid = syntheticUuid(anchor.uuid);
        this.#syntheticParent.set(anchor.uuid, uuid);
        this.counters.syntheticResults += open.length;
        writer.queue({ eol: '\n', value: syntheticAnswer(anchor, open, uuid) as Record<string, unknown>, annotation: { s: true } });
      }
    }
    return writer.sealDue ? writer.sealIfDue() : undefined;
  }

  /** After the last line: writes what was held back and attaches a trailing run to the last line. */
  async end(): Promise<void> {
    const writer = this.#writer;
    for (const h of this.#held) writer.queue({ raw: h, eol: h.eol });
    this.#held = [];
    const trailing = writer.endRun();
    const last = writer.held;
    if (!last) throw new CtxvmError('E_INVALID', `${this.#input}: trimming would leave an empty transcript; nothing was written`);
    if (trailing && writer.attachTrailing(trailing)) this.changedLines++;
  }
}
