/**
 * Pass 3 of the Codex trimmer, one `response_item` line at a time: bulky payloads become stubs
 * that point into the stored original line (`/payload/output`, `/payload/arguments`, ...), so
 * `pageIn` returns them unchanged. Messages stay verbatim except for their images; tool names,
 * call ids and identifying arguments stay; a stub never replaces a payload it would not shrink.
 */
import type { TrimCounters } from '../trim/claude-transform.js';
import { toolResultThreshold, type TrimPolicy } from '../trim/policy.js';
import { countLines, estimateTokens, formatInt, jsonPointer, payloadRef, renderStub } from '../trim/stub.js';
import type { CodexLineMeta } from './scan.js';
import type { CodexTrimPlan } from './trim-plan.js';
import { commandText, isOutputType, outputBodyText, outputItemsText, parseJsonObject, type CodexContentBlock, type CodexItem, type CodexLine } from './types.js';

/** What the Codex trimmer did, for the report: the Claude counters plus Codex's own. */
export interface CodexTrimCounters extends TrimCounters {
  /** Display-only event_msg lines paged out. */
  events: number;
  /** ghost_snapshot items paged out. */
  ghostSnapshots: number;
  /** Lines of history a compaction had replaced, paged out. */
  beforeCompaction: number;
}

export function emptyCodexCounters(): CodexTrimCounters {
  return { toolResults: 0, toolInputs: 0, images: 0, thinking: 0, toolUseResults: 0, orphanResults: 0, relinked: 0, syntheticResults: 0, events: 0, ghostSnapshots: 0, beforeCompaction: 0 };
}

export interface CodexTransformContext {
  plan: CodexTrimPlan;
  policy: TrimPolicy;
  /** Where this line's original will be stored, `<pack>#<offset>` (known before the transform; see payloadRef). */
  originalRef: string;
  /** Tokens above `limit`? Callers pass the real tokenizer. */
  exceeds(text: string, limit: number): boolean;
  counters: CodexTrimCounters;
}

/** Arguments that identify a call; kept verbatim unless they are themselves the bulk (a heredoc). */
const IDENTIFYING_ARGS = new Set(['command', 'cmd', 'workdir', 'file_path', 'path', 'dir_path', 'pattern', 'url', 'query', 'q', 'description', 'offset', 'limit', 'timeout_ms', 'justification']);
/** Characters of an oversized command kept as its identifying head. */
const COMMAND_HEAD_CHARS = 200;

function ref(ctx: CodexTransformContext, segments: (string | number)[]): string {
  return payloadRef(ctx.originalRef, jsonPointer(segments));
}

function imageStub(block: CodexContentBlock, reference: string): CodexContentBlock {
  const url = typeof block.image_url === 'string' ? block.image_url : '';
  const media = /^data:([^;,]+)/.exec(url)?.[1] ?? 'image';
  const comma = url.indexOf(',');
  const approxBytes = url.startsWith('data:') && comma !== -1 ? Math.floor(((url.length - comma - 1) * 3) / 4) : url.length;
  const what = url.startsWith('data:') ? `${media} image, ${(approxBytes / 1024).toFixed(1)} KB` : `image ${url.slice(0, 120)}`;
  return { type: 'input_text', text: `[ctxvm paged out: ${what}]\npage in: ctxvm session page-in ${reference}` };
}

/** Replaces inline images of a block list; returns undefined when there were none. */
function stubImages(blocks: CodexContentBlock[], base: (string | number)[], ctx: CodexTransformContext): CodexContentBlock[] | undefined {
  let changed = false;
  const out = blocks.map((b, i) => {
    if (b?.type !== 'input_image' || typeof b.image_url !== 'string' || !b.image_url.startsWith('data:')) return b;
    changed = true;
    ctx.counters.images++;
    return imageStub(b, ref(ctx, [...base, i]));
  });
  return changed ? out : undefined;
}

function statusOf(meta: CodexLineMeta): string | undefined {
  return meta.exitCode !== undefined ? `exit ${meta.exitCode}` : undefined;
}

function transformOutput(item: CodexItem, meta: CodexLineMeta, ctx: CodexTransformContext): boolean {
  const { plan, policy } = ctx;
  const call = meta.callId ? plan.calls.get(meta.callId) : undefined;
  const threshold = toolResultThreshold(policy, call?.name);
  if (threshold === undefined) return false;
  if (policy.keepErrors && meta.exitCode !== undefined && meta.exitCode !== 0) return false;
  const output = item.output;
  const list = Array.isArray(output) ? outputItemsText(output) : undefined;
  const text = typeof output === 'string' ? output : list ? list.text : '';
  const superseded = meta.callId !== undefined && plan.supersededReads.has(meta.callId);
  if (superseded || (text && ctx.exceeds(text, threshold))) {
    const body = typeof output === 'string' ? outputBodyText(output) : text;
    const stub = renderStub(
      {
        what: 'tool result',
        ...(call?.name ? { tool: call.name } : {}),
        ...(call?.target ? { target: call.target } : {}),
        ...(statusOf(meta) ? { status: statusOf(meta)! } : {}),
        tokens: estimateTokens(text),
        lines: countLines(body),
        bytes: meta.payloadBytes,
        text: body,
        ...(superseded ? { reason: 'superseded by a later identical read' } : {}),
        ref: ref(ctx, ['payload', 'output']),
      },
      superseded ? Math.min(policy.excerptChars, 80) : policy.excerptChars,
    );
    // a stub that does not shrink the payload is no trim
    if (typeof output === 'string' && stub.length >= output.length) return false;
    if (list && list.images === 0 && stub.length >= text.length) return false;
    item.output = stub;
    ctx.counters.toolResults++;
    if (list?.images) ctx.counters.images += list.images;
    return true;
  }
  if (Array.isArray(output) && policy.images) {
    const out = stubImages(output as CodexContentBlock[], ['payload', 'output'], ctx);
    if (out) {
      item.output = out;
      return true;
    }
  }
  return false;
}

/** An oversized shell command keeps its first line as identification and points at the rest. */
function commandStub(command: string, tool: string, reference: string): string {
  const firstLine = command.split('\n', 1)[0]!;
  const head = firstLine.length > COMMAND_HEAD_CHARS ? `${firstLine.slice(0, COMMAND_HEAD_CHARS)}…` : firstLine;
  return `${head}\n[ctxvm paged out: rest of the command of ${tool}, ≈${formatInt(estimateTokens(command))} tokens, ${countLines(command)} lines]\npage in: ctxvm session page-in ${reference}`;
}

function pageOutCommand(command: unknown, tool: string, reference: string, ctx: CodexTransformContext): unknown {
  const text = commandText(command);
  if (!text || !ctx.exceeds(text, ctx.policy.toolInputTokens)) return command;
  if (typeof command === 'string') return commandStub(command, tool, reference);
  const parts = [...(command as string[])];
  const last = parts.length - 1;
  parts[last] = commandStub(parts[last]!, tool, reference);
  return parts;
}

function transformFunctionCall(item: CodexItem, ctx: CodexTransformContext): boolean {
  const args = parseJsonObject(item.arguments);
  if (!args) return false;
  const tool = typeof item.name === 'string' ? item.name : 'tool';
  const reference = ref(ctx, ['payload', 'arguments']);
  let changed = false;
  for (const [key, value] of Object.entries(args)) {
    if (value === null || typeof value === 'number' || typeof value === 'boolean') continue;
    if (key === 'command' || key === 'cmd') {
      const next = pageOutCommand(value, tool, reference, ctx);
      if (next !== value) {
        args[key] = next;
        changed = true;
      }
      continue;
    }
    if (IDENTIFYING_ARGS.has(key)) continue;
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    if (!ctx.exceeds(text, ctx.policy.toolInputTokens)) continue;
    args[key] = `[ctxvm paged out: ${key} of ${tool}, ≈${formatInt(estimateTokens(text))} tokens, ${countLines(text)} lines]\npage in: ctxvm session page-in ${reference}`;
    changed = true;
  }
  if (!changed) return false;
  const next = JSON.stringify(args);
  if (typeof item.arguments === 'string' && next.length >= item.arguments.length) return false;
  item.arguments = next;
  ctx.counters.toolInputs++;
  return true;
}

function transformCustomCall(item: CodexItem, meta: CodexLineMeta, ctx: CodexTransformContext): boolean {
  const input = item.input;
  if (typeof input !== 'string' || !ctx.exceeds(input, ctx.policy.toolInputTokens)) return false;
  const stub = renderStub(
    {
      what: 'tool input',
      ...(meta.toolName ? { tool: meta.toolName } : {}),
      ...(meta.target ? { target: meta.target } : {}),
      tokens: estimateTokens(input),
      lines: countLines(input),
      bytes: meta.payloadBytes,
      text: input,
      ref: ref(ctx, ['payload', 'input']),
    },
    ctx.policy.excerptChars,
  );
  if (stub.length >= input.length) return false;
  item.input = stub;
  ctx.counters.toolInputs++;
  return true;
}

function transformLocalShell(item: CodexItem, ctx: CodexTransformContext): boolean {
  const action = item.action as Record<string, unknown> | undefined;
  if (!action || typeof action !== 'object') return false;
  const next = pageOutCommand(action.command, 'local_shell', ref(ctx, ['payload', 'action']), ctx);
  if (next === action.command) return false;
  item.action = { ...action, command: next };
  ctx.counters.toolInputs++;
  return true;
}

/** Applies the plan to one parsed line (mutating it). Returns true when anything changed. */
export function transformCodexLine(line: CodexLine, meta: CodexLineMeta, ctx: CodexTransformContext): boolean {
  if (meta.line >= ctx.plan.protectedFromLine || meta.kind !== 'response_item') return false;
  const item = line.payload as CodexItem | undefined;
  if (!item || typeof item !== 'object') return false;
  if (isOutputType(item.type)) return transformOutput(item, meta, ctx);
  if (item.type === 'function_call') return transformFunctionCall(item, ctx);
  if (item.type === 'custom_tool_call') return transformCustomCall(item, meta, ctx);
  if (item.type === 'local_shell_call') return transformLocalShell(item, ctx);
  if (item.type === 'message' && ctx.policy.images && Array.isArray(item.content)) {
    const out = stubImages(item.content as CodexContentBlock[], ['payload', 'content'], ctx);
    if (out) {
      item.content = out;
      return true;
    }
  }
  return false;
}

/** Whether pass 3 must parse a line at all (cheap test on the index; false means copy it as is). */
export function mayTransform(meta: CodexLineMeta, plan: CodexTrimPlan, policy: TrimPolicy): boolean {
  if (meta.line >= plan.protectedFromLine || meta.kind !== 'response_item') return false;
  // a token is at least one byte: payloads within the threshold in bytes cannot exceed it
  if (isOutputType(meta.payloadType)) {
    return meta.payloadBytes > policy.toolResultTokens || Object.keys(policy.tools).length > 0 || (meta.callId !== undefined && plan.supersededReads.has(meta.callId)) || meta.images > 0;
  }
  if (meta.payloadType === 'function_call' || meta.payloadType === 'custom_tool_call' || meta.payloadType === 'local_shell_call') return meta.payloadBytes > policy.toolInputTokens;
  return meta.payloadType === 'message' && meta.images > 0;
}
