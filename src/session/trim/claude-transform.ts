/**
 * Pass 3, one line at a time: apply the plan to a parsed transcript line. Returns whether the
 * line changed; the caller stores the original bytes and annotates. User text and assistant
 * text are never touched; tool names and identifying inputs stay; bulky payloads become stubs
 * that point into the stored original line, sized to what they replace (policy.ts). Stubs an
 * earlier trim wrote are left as they are, so trimming a trimmed file changes only what is new.
 */
import type { ClaudeLine, ContentBlock, ToolResultBlock, ToolUseBlock, ImageBlock } from '../claude/types.js';
import type { LineMeta } from '../claude/scan.js';
import { ageOfLine, type ClaudeTrimPlan } from './claude-plan.js';
import { excerptBudget, thresholdAtAge, toolResultThreshold, type TrimPolicy } from './policy.js';
import { countLines, isStub, jsonPointer, PAGE_IN_LEGEND, payloadRef, renderStub, type ExcerptShape, type PayloadFacts } from './stub.js';

/** Counts what a transform paged out, for the report. */
export interface TrimCounters {
  toolResults: number;
  toolInputs: number;
  images: number;
  thinking: number;
  toolUseResults: number;
  orphanResults: number;
  relinked: number;
  syntheticResults: number;
}

export function emptyCounters(): TrimCounters {
  return { toolResults: 0, toolInputs: 0, images: 0, thinking: 0, toolUseResults: 0, orphanResults: 0, relinked: 0, syntheticResults: 0 };
}

export interface TransformContext {
  plan: ClaudeTrimPlan;
  policy: TrimPolicy;
  /** Where this line's original will be stored, `<pack>#<offset>` (known before the transform; see payloadRef). */
  originalRef: string;
  /** Estimated tokens of a text (the tokenizer's fitted O(n) estimate); see `TokenCounter.estimate` for `limit`. */
  tokensOf(text: string, limit?: number): number;
  counters: TrimCounters;
  /** Whether the page-in legend is still to be said (the first stub of a trim says it). */
  legend?: { pending: boolean };
}

/** Identifying tool inputs that are never paged out. */
const IDENTIFYING_INPUTS = new Set(['file_path', 'path', 'notebook_path', 'command', 'pattern', 'glob', 'url', 'query', 'description', 'subagent_type', 'cell_id', 'replace_all', 'offset', 'limit', 'skill']);

/** Which part of a tool's output a later turn most likely looks at. */
function shapeFor(tool: string | undefined): ExcerptShape {
  if (!tool) return 'head-tail';
  if (/^(Bash|BashOutput|KillShell|shell|exec_command|local_shell)$/i.test(tool)) return 'tail';
  if (/^(Grep|Glob|LS|Read|NotebookRead|WebSearch|ToolSearch)$/.test(tool) || /search|list|find/i.test(tool)) return 'head';
  return 'head-tail';
}

/**
 * Tools whose result is a view of a file in the workspace (its content, or the snippet an edit
 * echoes back): the call names the file and stays, and the agent reads the current state with its
 * own tool, so a quoted slice of an old view is not worth its tokens on every later turn. Their
 * stubs say only what and how much was there (an error still quotes its error line).
 */
const FILE_VIEW_TOOLS = new Set(['Read', 'NotebookRead', 'Edit', 'MultiEdit', 'Write', 'NotebookEdit']);

/** The text of a tool_result's content (text blocks joined), and whether it holds images. */
function resultText(content: ToolResultBlock['content']): { text: string; images: number; bytes: number } {
  if (typeof content === 'string') return { text: content, images: 0, bytes: Buffer.byteLength(content) };
  if (!Array.isArray(content)) return { text: '', images: 0, bytes: 0 };
  let text = '';
  let images = 0;
  let bytes = 0;
  for (const b of content) {
    if (b?.type === 'text' && typeof (b as { text?: unknown }).text === 'string') {
      const t = (b as { text: string }).text;
      text += (text ? '\n' : '') + t;
      bytes += Buffer.byteLength(t);
    } else if (b?.type === 'image') {
      images++;
      bytes += String((b as ImageBlock).source?.data ?? '').length;
    }
  }
  return { text, images, bytes };
}

function statusOf(block: ToolResultBlock, line: ClaudeLine): string | undefined {
  const tur = line.toolUseResult as Record<string, unknown> | undefined;
  const parts: string[] = [];
  if (block.is_error) parts.push('error');
  if (tur && typeof tur === 'object') {
    if (typeof tur.exitCode === 'number' && tur.exitCode !== 0) parts.push(`exit ${tur.exitCode}`);
    if (tur.interrupted === true) parts.push('interrupted');
  }
  return parts.join(', ') || undefined;
}

function imageStub(image: ImageBlock, ref: string): ContentBlock {
  const data = String(image.source?.data ?? '');
  const media = image.source?.media_type ?? 'image';
  return { type: 'text', text: renderStub({ what: `${media} image`, bytes: Math.floor((data.length * 3) / 4), ref }, { excerptChars: 0 }) };
}

/** Every character of this a run of its own: the most an estimate charges per character (tokens.ts). */
const DENSEST = 'a.';

/**
 * Tokens of a payload as far as the decisions about it go (very long ones by length: they are far
 * past any threshold). The estimate may stop counting once it passes the count beyond which none
 * of them changes: past `threshold`, past the size that fills the excerpt budget, and past what
 * the largest stub `facts` could get costs over the share a stub may take (`affordableStub`): its
 * header with the legend plus the densest excerpt the budget allows.
 */
function payloadTokens(text: string, facts: PayloadFacts, threshold: number, ctx: TransformContext): number {
  if (text.length > 200_000) return Math.ceil(text.length / 4);
  const { policy } = ctx;
  const header = renderStub({ ...facts, text: '', legend: PAGE_IN_LEGEND }, { excerptChars: 0 });
  // an excerpt is at most its budget and a few joints ("\n", "…")
  const stubTokens = ctx.tokensOf(header) + ctx.tokensOf(DENSEST.repeat(Math.ceil((policy.excerptChars + 17) / 2))) + 2;
  const fullBudget = policy.excerptShare > 0 ? Math.ceil(policy.excerptChars / (policy.excerptShare * 4)) : 0;
  return ctx.tokensOf(text, Math.max(threshold + 1, fullBudget, Math.ceil(stubTokens / policy.maxStubShare)));
}

/**
 * The stub for a payload of `tokens` tokens, or undefined when none would cost at most the
 * policy's share of it (the payload then stays). The excerpt is dropped before giving up.
 */
export function affordableStub(facts: PayloadFacts, tokens: number, ctx: { policy: TrimPolicy; tokensOf(text: string): number; legend?: { pending: boolean } }): string | undefined {
  const limit = tokens * ctx.policy.maxStubShare;
  const tries: PayloadFacts[] = ctx.legend?.pending ? [{ ...facts, legend: PAGE_IN_LEGEND }, facts] : [facts];
  for (const f of tries) {
    for (const excerptChars of [excerptBudget(ctx.policy, tokens), 0]) {
      const stub = renderStub(f, { excerptChars });
      if (ctx.tokensOf(stub) <= limit) {
        if (f.legend && ctx.legend) ctx.legend.pending = false;
        return stub;
      }
    }
  }
  return undefined;
}

/** An orphan result (its call is not in what the agent loads) becomes a text stub saying so. */
function orphanStub(block: ToolResultBlock, ctx: TransformContext): ContentBlock {
  const { text, bytes } = resultText(block.content);
  ctx.counters.orphanResults++;
  return { type: 'text', text: renderStub({ what: 'a result whose call is not in this session', lines: countLines(text), bytes, reason: `tool_use_id ${block.tool_use_id}` }, { excerptChars: 0 }) };
}

function transformToolResult(block: ToolResultBlock, blockIndex: number, line: ClaudeLine, meta: LineMeta, age: number, ctx: TransformContext): ToolResultBlock | undefined {
  const { plan, policy } = ctx;
  const tool = plan.tools.get(block.tool_use_id);
  const base = toolResultThreshold(policy, tool?.name);
  if (base === undefined) return block;
  // an error of the current user turn is worth as much as anything recent: it goes only above the tail's threshold
  const threshold = block.is_error && meta.line >= plan.errorsKeptFromLine ? thresholdAtAge(policy, base, -1) : thresholdAtAge(policy, base, age);
  if (threshold === undefined) return block;
  // an earlier trim already decided this result: its stubs (whole, or an image's beside kept text) stay as they are
  if (isStub(block.content) || (Array.isArray(block.content) && block.content.some((b) => isStub((b as { text?: unknown } | null)?.text)))) return block;
  const { text, images, bytes } = resultText(block.content);
  const superseded = age >= 0 && plan.supersededReads.has(block.tool_use_id);
  const status = text ? statusOf(block, line) : undefined;
  const quote = !superseded && (status !== undefined || !FILE_VIEW_TOOLS.has(tool?.name ?? ''));
  const facts: PayloadFacts = {
    ...(status ? { status } : {}),
    lines: countLines(text),
    bytes,
    text: quote ? text : '',
    shape: shapeFor(tool?.name),
    ...(superseded ? { reason: 'superseded by a newer read of this file' } : {}),
  };
  const tokens = text ? payloadTokens(text, facts, threshold, ctx) : 0;
  if (text && (superseded || tokens > threshold)) {
    const stub = affordableStub(facts, tokens, ctx);
    if (stub !== undefined) {
      ctx.counters.toolResults++;
      if (images) ctx.counters.images += images;
      return { ...block, content: stub };
    }
  }
  if (images && policy.images && age >= 0 && Array.isArray(block.content)) {
    ctx.counters.images += images;
    return {
      ...block,
      content: block.content.map((b, j) => (b?.type === 'image' ? imageStub(b as ImageBlock, payloadRef(ctx.originalRef, jsonPointer(['message', 'content', blockIndex, 'content', j]))) : b)),
    };
  }
  return block;
}

/**
 * A command that is itself the bulk of its call (a heredoc, an inline script) keeps its head as
 * identification, after the header that says what was paged out; undefined when that stub would
 * not pay, or could not quote a head. Codex's trimmer treats an oversized command the same way.
 */
function commandStub(command: string, facts: PayloadFacts, tokens: number, ctx: TransformContext): string | undefined {
  const headChars = ctx.policy.excerptChars;
  const firstLine = command.split('\n', 1)[0]!.trimEnd();
  if (headChars <= 0 || firstLine === '') return undefined;
  const head = firstLine.length > headChars ? firstLine.slice(0, headChars) : firstLine;
  // the head is within the excerpt budget payloadTokens counts far enough for
  const stub = `${renderStub(facts, { excerptChars: 0 })}\n${head}…`;
  return ctx.tokensOf(stub) <= tokens * ctx.policy.maxStubShare ? stub : undefined;
}

function transformToolUse(block: ToolUseBlock, age: number, ctx: TransformContext): ToolUseBlock {
  const input = block.input;
  if (!input || typeof input !== 'object') return block;
  const threshold = thresholdAtAge(ctx.policy, ctx.policy.toolInputTokens, age);
  if (threshold === undefined) return block;
  let changed: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(input)) {
    if (key === 'command' && typeof value === 'string' && !isStub(value) && value.length * 2 > threshold) {
      const facts: PayloadFacts = { lines: countLines(value), bytes: Buffer.byteLength(value) };
      const tokens = payloadTokens(value, facts, threshold, ctx);
      const stub = tokens > threshold ? commandStub(value, facts, tokens, ctx) : undefined;
      if (stub !== undefined) {
        changed ??= { ...input };
        changed[key] = stub;
        ctx.counters.toolInputs++;
      }
      continue;
    }
    if (IDENTIFYING_INPUTS.has(key) || value === null || typeof value === 'number' || typeof value === 'boolean' || isStub(value)) continue;
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    if (text.length * 2 <= threshold) continue;
    // the field's key stands right before its stub: the stub need not name it
    const facts: PayloadFacts = { lines: countLines(text), bytes: Buffer.byteLength(text), text, shape: 'head' };
    const tokens = payloadTokens(text, facts, threshold, ctx);
    if (tokens <= threshold) continue;
    const stub = affordableStub(facts, tokens, ctx);
    if (stub === undefined) continue;
    changed ??= { ...input };
    changed[key] = stub;
    ctx.counters.toolInputs++;
  }
  return changed ? { ...block, input: changed } : block;
}

/** Applies the plan to one parsed line (mutating it). Returns true when anything changed. */
export function transformClaudeLine(line: ClaudeLine, meta: LineMeta, ctx: TransformContext): boolean {
  const { plan, policy } = ctx;
  let changed = false;

  if (typeof line.parentUuid === 'string' && plan.relink.has(line.parentUuid)) {
    line.parentUuid = plan.relink.get(line.parentUuid)!;
    ctx.counters.relinked++;
    changed = true;
  }
  const reparent = plan.reparent.get(meta.line);
  if (reparent !== undefined && line.parentUuid !== reparent) {
    line.parentUuid = reparent;
    ctx.counters.relinked++;
    changed = true;
  }
  // age of the round trip the line belongs to: < 0 inside the protected tail
  const age = ageOfLine(plan, meta.line);
  if (age >= 0 && policy.toolUseResult && line.toolUseResult !== undefined) {
    delete line.toolUseResult;
    ctx.counters.toolUseResults++;
    changed = true;
  }

  const message = line.message;
  if (!message || !Array.isArray(message.content)) return changed;
  const blocks = message.content;
  const out: ContentBlock[] = [];
  const orphans: ContentBlock[] = [];
  let blocksChanged = false;
  blocks.forEach((block, i) => {
    if (!block || typeof block !== 'object') {
      out.push(block);
      return;
    }
    let next: ContentBlock | undefined = block;
    if (line.type === 'user') {
      if (block.type === 'tool_result' && plan.orphanResults.has((block as ToolResultBlock).tool_use_id)) {
        // after any results that stay: text may not come before a tool_result
        orphans.push(orphanStub(block as ToolResultBlock, ctx));
        next = undefined;
      } else if (block.type === 'tool_result') next = transformToolResult(block as ToolResultBlock, i, line, meta, age, ctx);
      else if (block.type === 'image' && policy.images && age >= 0) {
        next = imageStub(block as ImageBlock, payloadRef(ctx.originalRef, jsonPointer(['message', 'content', i])));
        ctx.counters.images++;
      }
    } else if (line.type === 'assistant') {
      if ((block.type === 'thinking' || block.type === 'redacted_thinking') && policy.thinking && (age >= 0 || plan.tailThinking)) {
        // earlier turns' thinking (and the tail's once its turn ended): the original stays in the store with the line
        ctx.counters.thinking++;
        next = undefined;
      } else if (block.type === 'tool_use') next = transformToolUse(block as ToolUseBlock, age, ctx);
    }
    if (next !== block) blocksChanged = true;
    if (next !== undefined) out.push(next);
  });
  out.push(...orphans);
  // never leave an empty message: a line the plan could not remove (a preserved reply made only
  // of thinking) keeps its blocks, which is what the agent would see of it anyway
  if (blocksChanged && out.length > 0) {
    message.content = out;
    changed = true;
  }
  return changed;
}
