/**
 * Pass 3, one line at a time: apply the plan to a parsed transcript line. Returns whether the
 * line changed; the caller stores the original bytes and annotates. User text and assistant
 * text are never touched; tool names and identifying inputs stay; bulky payloads become stubs
 * that point into the stored original line.
 */
import type { ClaudeLine, ContentBlock, ToolResultBlock, ToolUseBlock, ImageBlock } from '../claude/types.js';
import type { LineMeta } from '../claude/scan.js';
import type { ClaudeTrimPlan } from './claude-plan.js';
import { toolResultThreshold, type TrimPolicy } from './policy.js';
import { countLines, estimateTokens, formatInt, jsonPointer, payloadRef, renderStub } from './stub.js';

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
  /** Tokens above `limit`? Exact when possible; callers pass the real tokenizer. */
  exceeds(text: string, limit: number): boolean;
  counters: TrimCounters;
}

/** Identifying tool inputs that are never paged out. */
const IDENTIFYING_INPUTS = new Set(['file_path', 'path', 'notebook_path', 'command', 'pattern', 'glob', 'url', 'query', 'description', 'subagent_type', 'cell_id', 'replace_all', 'offset', 'limit']);

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

function statusOf(block: ToolResultBlock, line: ClaudeLine): string {
  const tur = line.toolUseResult as Record<string, unknown> | undefined;
  const parts: string[] = [];
  if (block.is_error) parts.push('error');
  if (tur && typeof tur === 'object') {
    if (typeof tur.exitCode === 'number') parts.push(`exit ${tur.exitCode}`);
    if (tur.interrupted === true) parts.push('interrupted');
  }
  return parts.join(', ') || 'ok';
}

function imageStub(image: ImageBlock, ref: string): ContentBlock {
  const data = String(image.source?.data ?? '');
  const media = image.source?.media_type ?? 'image';
  const approxBytes = Math.floor((data.length * 3) / 4);
  return { type: 'text', text: `[ctxvm paged out: ${media} image, ${(approxBytes / 1024).toFixed(1)} KB]\npage in: ctxvm session page-in ${ref}` };
}

function transformToolResult(block: ToolResultBlock, blockIndex: number, line: ClaudeLine, ctx: TransformContext): ToolResultBlock | undefined {
  const { plan, policy } = ctx;
  if (plan.vanishingToolUses.has(block.tool_use_id)) {
    ctx.counters.orphanResults++;
    return undefined;
  }
  const tool = plan.tools.get(block.tool_use_id);
  const threshold = toolResultThreshold(policy, tool?.name);
  if (threshold === undefined) return block;
  if (block.is_error && policy.keepErrors) return block;
  const { text, images, bytes } = resultText(block.content);
  const superseded = plan.supersededReads.has(block.tool_use_id);
  const pointer = jsonPointer(['message', 'content', blockIndex, 'content']);
  const ref = payloadRef(ctx.originalRef, pointer);
  if (superseded || (text && ctx.exceeds(text, threshold))) {
    const tokens = estimateTokens(text);
    const stub = renderStub(
      {
        what: 'tool result',
        ...(tool?.name ? { tool: tool.name } : {}),
        ...(tool?.target ? { target: tool.target } : {}),
        status: statusOf(block, line),
        tokens,
        lines: countLines(text),
        bytes,
        text,
        ...(superseded ? { reason: 'superseded by a newer read of this file' } : {}),
        ref,
      },
      superseded ? Math.min(policy.excerptChars, 80) : policy.excerptChars,
    );
    ctx.counters.toolResults++;
    if (images) ctx.counters.images += images;
    return { ...block, content: stub };
  }
  if (images && policy.images && Array.isArray(block.content)) {
    ctx.counters.images += images;
    return {
      ...block,
      content: block.content.map((b, j) => (b?.type === 'image' ? imageStub(b as ImageBlock, payloadRef(ctx.originalRef, jsonPointer(['message', 'content', blockIndex, 'content', j]))) : b)),
    };
  }
  return block;
}

function transformToolUse(block: ToolUseBlock, blockIndex: number, ctx: TransformContext): ToolUseBlock {
  const input = block.input;
  if (!input || typeof input !== 'object') return block;
  let changed: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(input)) {
    if (IDENTIFYING_INPUTS.has(key) || value === null || typeof value === 'number' || typeof value === 'boolean') continue;
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    if (!ctx.exceeds(text, ctx.policy.toolInputTokens)) continue;
    const ref = payloadRef(ctx.originalRef, jsonPointer(['message', 'content', blockIndex, 'input', key]));
    changed ??= { ...input };
    changed[key] = `[ctxvm paged out: ${key} of ${block.name}, ≈${formatInt(estimateTokens(text))} tokens, ${countLines(text)} lines]\npage in: ctxvm session page-in ${ref}`;
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
  if (meta.line >= plan.protectedFromLine) return changed;

  if (policy.toolUseResult && line.toolUseResult !== undefined) {
    delete line.toolUseResult;
    ctx.counters.toolUseResults++;
    changed = true;
  }

  const message = line.message;
  if (!message || !Array.isArray(message.content)) return changed;
  const blocks = message.content;
  const out: ContentBlock[] = [];
  let blocksChanged = false;
  blocks.forEach((block, i) => {
    if (!block || typeof block !== 'object') {
      out.push(block);
      return;
    }
    let next: ContentBlock | undefined = block;
    if (line.type === 'user') {
      if (block.type === 'tool_result') next = transformToolResult(block as ToolResultBlock, i, line, ctx);
      else if (block.type === 'image' && policy.images) {
        next = imageStub(block as ImageBlock, payloadRef(ctx.originalRef, jsonPointer(['message', 'content', i])));
        ctx.counters.images++;
      }
    } else if (line.type === 'assistant') {
      if ((block.type === 'thinking' || block.type === 'redacted_thinking') && policy.thinking) {
        // earlier turns' thinking: the original stays in the store with the line (page-in by line)
        ctx.counters.thinking++;
        next = undefined;
      } else if (block.type === 'tool_use') next = transformToolUse(block as ToolUseBlock, i, ctx);
    }
    if (next !== block) blocksChanged = true;
    if (next !== undefined) out.push(next);
  });
  if (blocksChanged) {
    // never leave an empty message: an emptied line was planned for removal; this is a safety net
    if (out.length === 0) out.push({ type: 'text', text: '[ctxvm paged out: content]' });
    message.content = out;
    changed = true;
  }
  return changed;
}
