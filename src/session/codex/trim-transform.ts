/**
 * Pass 3 of the Codex trimmer, one `response_item` line at a time: bulky payloads become stubs
 * that point into the stored original line (`/payload/output`, `/payload/arguments`, ...), so
 * `pageIn` returns them unchanged. Messages stay verbatim except for their images; tool names,
 * call ids and identifying arguments stay; a stub never replaces a payload it would not shrink.
 */
import { affordableStub, type TrimCounters } from '../trim/claude-transform.js';
import { thresholdAtAge, toolResultThreshold, type TrimPolicy } from '../trim/policy.js';
import { countLines, isStub, jsonPointer, payloadRef, renderStub, STUB_PREFIX } from '../trim/stub.js';
import type { CodexLineMeta } from './scan.js';
import { codexAgeOfLine, type CodexTrimPlan } from './trim-plan.js';
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
  /** Estimated tokens of a text (the tokenizer's fitted O(n) estimate). */
  tokensOf(text: string): number;
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
  const what = url.startsWith('data:') ? `${media} image` : `image ${url.slice(0, 120)}`;
  return { type: 'input_text', text: renderStub({ what, bytes: approxBytes, ref: reference }, { excerptChars: 0 }) };
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
  return meta.exitCode !== undefined && meta.exitCode !== 0 ? `exit ${meta.exitCode}` : undefined;
}

/** Tokens of a payload, estimated (very long ones by length: they are far past any threshold). */
function payloadTokens(text: string, ctx: CodexTransformContext): number {
  return text.length > 200_000 ? Math.ceil(text.length / 4) : ctx.tokensOf(text);
}

function transformOutput(item: CodexItem, meta: CodexLineMeta, age: number, ctx: CodexTransformContext): boolean {
  const { plan, policy } = ctx;
  const call = meta.callId ? plan.calls.get(meta.callId) : undefined;
  const base = toolResultThreshold(policy, call?.name);
  if (base === undefined) return false;
  // a failure of the current user turn is worth as much as anything recent: it goes only above the tail's threshold
  const failed = meta.exitCode !== undefined && meta.exitCode !== 0;
  const threshold = failed && meta.line >= plan.errorsKeptFromLine ? thresholdAtAge(policy, base, -1) : thresholdAtAge(policy, base, age);
  if (threshold === undefined) return false;
  const output = item.output;
  if (isStub(output)) return false;
  const list = Array.isArray(output) ? outputItemsText(output) : undefined;
  const text = typeof output === 'string' ? output : list ? list.text : '';
  // an earlier trim already decided this output: its stubs (whole, or an image's beside kept text) stay
  if (list && (isStub(list.text) || (output as { text?: unknown }[]).some((b) => isStub(b?.text)))) return false;
  const superseded = age >= 0 && meta.callId !== undefined && plan.supersededReads.has(meta.callId);
  const tokens = text ? payloadTokens(text, ctx) : 0;
  if (text && (superseded || tokens > threshold)) {
    const body = typeof output === 'string' ? outputBodyText(output) : text;
    const status = statusOf(meta);
    // a file's content is in the file, which the call names: a stale slice of it is not worth quoting (Claude: FILE_VIEW_TOOLS)
    const quote = !superseded && (status !== undefined || call?.fileRead !== true);
    const stub = affordableStub(
      {
        ...(status ? { status } : {}),
        lines: countLines(body),
        bytes: meta.payloadBytes,
        text: quote ? body : '',
        shape: call?.type === 'local_shell_call' || /shell|exec|command/i.test(call?.name ?? '') ? 'tail' : 'head-tail',
        ...(superseded ? { reason: 'superseded by a later identical read' } : {}),
      },
      tokens,
      ctx,
    );
    if (stub !== undefined) {
      item.output = stub;
      ctx.counters.toolResults++;
      if (list?.images) ctx.counters.images += list.images;
      return true;
    }
  }
  if (Array.isArray(output) && policy.images && age >= 0) {
    const out = stubImages(output as CodexContentBlock[], ['payload', 'output'], ctx);
    if (out) {
      item.output = out;
      return true;
    }
  }
  return false;
}

/** An oversized shell command keeps its first line as identification and points at the rest. */
function commandStub(command: string, tool: string, reference: string, tokens: number, ctx: CodexTransformContext): string | undefined {
  const firstLine = command.split('\n', 1)[0]!;
  const head = firstLine.length > COMMAND_HEAD_CHARS ? `${firstLine.slice(0, COMMAND_HEAD_CHARS)}…` : firstLine;
  const rest = renderStub({ what: `rest of the ${tool} command`, lines: countLines(command), bytes: Buffer.byteLength(command), ref: reference }, { excerptChars: 0 });
  const stub = `${head}\n${rest}`;
  return ctx.tokensOf(stub) <= tokens * ctx.policy.maxStubShare ? stub : undefined;
}

function pageOutCommand(command: unknown, tool: string, reference: string, threshold: number, ctx: CodexTransformContext): unknown {
  const text = commandText(command);
  if (!text || text.length * 2 <= threshold || text.includes(STUB_PREFIX)) return command;
  const tokens = payloadTokens(text, ctx);
  if (tokens <= threshold) return command;
  if (typeof command === 'string') return commandStub(command, tool, reference, tokens, ctx) ?? command;
  const parts = [...(command as string[])];
  const last = parts.length - 1;
  const stub = commandStub(parts[last]!, tool, reference, tokens, ctx);
  if (stub === undefined) return command;
  parts[last] = stub;
  return parts;
}

function transformFunctionCall(item: CodexItem, age: number, ctx: CodexTransformContext): boolean {
  const args = parseJsonObject(item.arguments);
  if (!args) return false;
  const threshold = thresholdAtAge(ctx.policy, ctx.policy.toolInputTokens, age);
  if (threshold === undefined) return false;
  const tool = typeof item.name === 'string' ? item.name : 'tool';
  const reference = ref(ctx, ['payload', 'arguments']);
  let changed = false;
  for (const [key, value] of Object.entries(args)) {
    if (value === null || typeof value === 'number' || typeof value === 'boolean' || isStub(value)) continue;
    if (key === 'command' || key === 'cmd') {
      const next = pageOutCommand(value, tool, reference, threshold, ctx);
      if (next !== value) {
        args[key] = next;
        changed = true;
      }
      continue;
    }
    if (IDENTIFYING_ARGS.has(key)) continue;
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    if (text.length * 2 <= threshold) continue;
    const tokens = payloadTokens(text, ctx);
    if (tokens <= threshold) continue;
    // the argument's key stands right before its stub: the stub need not name it
    const stub = affordableStub({ lines: countLines(text), bytes: Buffer.byteLength(text), text, shape: 'head' }, tokens, ctx);
    if (stub === undefined) continue;
    args[key] = stub;
    changed = true;
  }
  if (!changed) return false;
  const next = JSON.stringify(args);
  if (typeof item.arguments === 'string' && next.length >= item.arguments.length) return false;
  item.arguments = next;
  ctx.counters.toolInputs++;
  return true;
}

function transformCustomCall(item: CodexItem, meta: CodexLineMeta, age: number, ctx: CodexTransformContext): boolean {
  const input = item.input;
  const threshold = thresholdAtAge(ctx.policy, ctx.policy.toolInputTokens, age);
  if (threshold === undefined || typeof input !== 'string' || isStub(input) || input.length * 2 <= threshold) return false;
  const tokens = payloadTokens(input, ctx);
  if (tokens <= threshold) return false;
  const stub = affordableStub(
    { lines: countLines(input), bytes: meta.payloadBytes, text: input, shape: 'head' },
    tokens,
    ctx,
  );
  if (stub === undefined) return false;
  item.input = stub;
  ctx.counters.toolInputs++;
  return true;
}

function transformLocalShell(item: CodexItem, age: number, ctx: CodexTransformContext): boolean {
  const action = item.action as Record<string, unknown> | undefined;
  const threshold = thresholdAtAge(ctx.policy, ctx.policy.toolInputTokens, age);
  if (!action || typeof action !== 'object' || threshold === undefined) return false;
  const next = pageOutCommand(action.command, 'local_shell', ref(ctx, ['payload', 'action']), threshold, ctx);
  if (next === action.command) return false;
  item.action = { ...action, command: next };
  ctx.counters.toolInputs++;
  return true;
}

/** Applies the plan to one parsed line (mutating it). Returns true when anything changed. */
export function transformCodexLine(line: CodexLine, meta: CodexLineMeta, ctx: CodexTransformContext): boolean {
  if (meta.kind !== 'response_item') return false;
  const item = line.payload as CodexItem | undefined;
  if (!item || typeof item !== 'object') return false;
  const age = codexAgeOfLine(ctx.plan, meta.line);
  if (isOutputType(item.type)) return transformOutput(item, meta, age, ctx);
  if (item.type === 'function_call') return transformFunctionCall(item, age, ctx);
  if (item.type === 'custom_tool_call') return transformCustomCall(item, meta, age, ctx);
  if (item.type === 'local_shell_call') return transformLocalShell(item, age, ctx);
  if (item.type === 'message' && ctx.policy.images && age >= 0 && Array.isArray(item.content)) {
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
  if (meta.kind !== 'response_item') return false;
  const inTail = meta.line >= plan.protectedFromLine;
  if (inTail && policy.tailPayloadTokens <= 0) return false;
  const floor = (base: number) => (inTail ? Math.max(base, policy.tailPayloadTokens) : base);
  // a token is at least one byte: payloads within the threshold in bytes cannot exceed it
  if (isOutputType(meta.payloadType)) {
    return meta.payloadBytes > floor(policy.toolResultTokens) || Object.keys(policy.tools).length > 0 || (!inTail && ((meta.callId !== undefined && plan.supersededReads.has(meta.callId)) || meta.images > 0));
  }
  if (meta.payloadType === 'function_call' || meta.payloadType === 'custom_tool_call' || meta.payloadType === 'local_shell_call') return meta.payloadBytes > floor(policy.toolInputTokens);
  return !inTail && meta.payloadType === 'message' && meta.images > 0;
}
