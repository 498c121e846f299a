/**
 * Validator for Claude Code transcripts: the rules the Messages API and Claude Code's resume
 * impose on the reconstructed context (see ../shared/DESIGN.md). Each finding names its rule and
 * the file line it is about. Warnings are reported but do not make a file invalid.
 */
import { resolvePreserved } from './chain.js';
import type { ClaudeIndex, LineMeta } from './scan.js';
import type { ClaudeContext, ContextMessage } from './context.js';
import type { ContentBlock } from './types.js';

import type { ValidationFinding } from '../driver.js';

export type { ValidationFinding };
export type FindingSeverity = ValidationFinding['severity'];

/** Names and meanings of the rules, for `--help` and docs. */
export const CLAUDE_RULES: Readonly<Record<string, string>> = {
  'json-line': 'every line is a JSON object',
  'parent-chain':
    'the resumed chain reaches a root: a parentUuid on it that names no line is bridged by timestamp or ends what Claude Code sends there (warning: it resumes from that line)',
  'dangling-parent': 'a parentUuid off the resumed chain names no line (warning)',
  'empty-content': 'no message, text block or tool result on the chain is empty',
  'role-order': 'roles alternate after merging (a context that starts with an assistant message is a warning: Claude Code sends it as is)',
  'tool-result-without-use': 'every tool_result answers a tool_use of the assistant message right before it',
  'tool-use-without-result': 'every tool_use is answered in the next user message',
  'tool-result-order': 'in a user message, tool_result blocks come before any other block',
  'duplicate-tool-id': 'tool_use ids are unique in the context',
  'thinking-signature': 'thinking blocks carry their signature',
  'open-tool-use': 'the last message has tool calls without results; Claude Code marks them interrupted on resume (warning)',
  'preserved-messages': 'the messages the last compaction boundary preserves (preservedMessages / preservedSegment) exist in the file',
  'unknown-line-type': 'a line type ctxvm does not know: kept verbatim, never sent by the agent as far as ctxvm knows (warning)',
  'unmodelled-attachment': 'an attachment type whose reminder text ctxvm does not reproduce: Claude Code may send text that is not counted (warning)',
  'thinking-dropped': 'thinking written by another model than the one Claude Code resumes with is not sent (warning)',
};

function firstLine(m: ContextMessage | undefined): number {
  return m?.lines[0] ?? 0;
}

function isEmptyBlock(b: ContentBlock): boolean {
  if (b.type === 'text') return typeof b.text !== 'string' || b.text.length === 0;
  return false;
}

/** Finds the line of the message block that holds `blockIndex` (messages merge several lines). */
function lineOfBlock(metaByLine: Map<number, LineMeta>, m: ContextMessage, blockIndex: number): number {
  let seen = 0;
  for (const line of m.lines) {
    const meta = metaByLine.get(line);
    const n = meta?.blockTypes.length ?? 1;
    if (blockIndex < seen + n) return line;
    seen += n;
  }
  return firstLine(m);
}

export function validateClaudeContext(index: ClaudeIndex, ctx: ClaudeContext): ValidationFinding[] {
  // judge what the file says, not what the agent would repair on its own
  const strict = ctx.strict;
  const findings: ValidationFinding[] = [];
  const add = (rule: string, line: number, message: string, severity: FindingSeverity = 'error') => findings.push({ rule, line, message, severity });

  for (const bad of index.badLines) add('json-line', bad.line, bad.message);

  const onChain = new Set(ctx.chainLines);
  for (const miss of ctx.missingParents) {
    if (miss.bridgedTo !== undefined) {
      add('parent-chain', miss.line, `parentUuid ${miss.parentUuid} names no line; Claude Code bridges to line ${miss.bridgedTo} by timestamp`, 'warning');
      continue;
    }
    // Claude Code resumes from here (O: 3e89eb15 line 61); what comes before is not sent
    const lost = index.lines.filter((m) => m.line < miss.line && (m.kind === 'user' || m.kind === 'assistant') && !m.isSidechain && !onChain.has(m.line) && (index.lastBoundary < 0 || m.line > index.lines[index.lastBoundary]!.line));
    const span = lost.length > 0 ? `: the ${lost.length} message line(s) before it (lines ${lost[0]!.line}–${lost[lost.length - 1]!.line}) are not sent` : '';
    add('parent-chain', miss.line, `parentUuid ${miss.parentUuid} names no line in the file; Claude Code resumes from line ${miss.line}${span}`, 'warning');
  }
  for (const [type, seen] of index.unknownTypes ?? []) {
    add('unknown-line-type', seen.firstLine, `line type ${JSON.stringify(type)} (${seen.count} line${seen.count === 1 ? '' : 's'}) is not known to ctxvm; kept verbatim`, 'warning');
  }
  const unmodelled = new Map<string, number[]>();
  for (const a of ctx.unmodelledAttachments) unmodelled.set(a.type, [...(unmodelled.get(a.type) ?? []), a.line]);
  for (const [type, lines] of unmodelled) {
    add('unmodelled-attachment', lines[0]!, `attachment type ${JSON.stringify(type)} (${lines.length} line${lines.length === 1 ? '' : 's'}) may be sent as a reminder ctxvm does not reproduce; its tokens are not counted`, 'warning');
  }
  const droppedThinking = ctx.transcript.length === 0 ? [] : thinkingOfOtherModels(index, ctx);
  if (droppedThinking.length > 0) {
    add('thinking-dropped', droppedThinking[0]!, `${droppedThinking.length} line(s) with thinking were written by another model than ${ctx.resumeModel}, the model Claude Code resumes with; it does not send that thinking`, 'warning');
  }
  const uuids = new Set(index.lines.map((m) => m.uuid).filter(Boolean));
  for (const m of index.lines) {
    if (typeof m.parentUuid === 'string' && !uuids.has(m.parentUuid) && !onChain.has(m.line) && !m.isSidechain) {
      add('dangling-parent', m.line, `parentUuid ${m.parentUuid} names no line in the file`, 'warning');
    }
  }

  // Claude Code skips a user line with `content: []` (and whatever tool result it stood for)
  const metaByLine = new Map(index.lines.map((m) => [m.line, m] as const));
  for (const line of ctx.chainLines) {
    const m = metaByLine.get(line);
    if (m?.kind === 'user' && m.emptyContent && !m.isSidechain) add('empty-content', line, 'user message has content []: Claude Code skips the line on resume');
  }
  // preserved messages that cannot be found are silently not preserved
  const boundary = index.lastBoundary >= 0 ? index.lines[index.lastBoundary] : undefined;
  const spec = boundary?.preserved;
  if (boundary && spec && ((spec.uuids?.length ?? 0) > 0 || spec.segment)) {
    const byUuid = new Map<string, LineMeta>();
    for (const m of index.lines) if (m.uuid) byUuid.set(m.uuid, m);
    if (!resolvePreserved(boundary, byUuid)) {
      const missing = (spec.uuids ?? []).filter((u) => !byUuid.has(u));
      const what = spec.segment ? `preservedSegment ${spec.segment.head}..${spec.segment.tail} cannot be walked` : `preserved uuid(s) ${missing.join(', ')} name no line`;
      add('preserved-messages', boundary.line, `${what}: Claude Code drops the preserved messages on resume`);
    }
  }

  const msgs = strict;
  // the first-party API accepts it (anthropics/anthropic-sdk-typescript#622); Bedrock does not
  if (msgs.length > 0 && msgs[0]!.role !== 'user') add('role-order', firstLine(msgs[0]), 'the context starts with an assistant message: Claude Code sends it as is (Amazon Bedrock rejects such a request)', 'warning');
  const seenToolIds = new Map<string, number>();
  msgs.forEach((m, i) => {
    const line = firstLine(m);
    if (m.content.length === 0) add('empty-content', line, `${m.role} message has no content`);
    m.content.forEach((b, j) => {
      if (isEmptyBlock(b)) add('empty-content', lineOfBlock(metaByLine, m, j), `${m.role} message has an empty text block`);
      if (b.type === 'thinking' && (typeof b.signature !== 'string' || b.signature.length === 0)) {
        add('thinking-signature', lineOfBlock(metaByLine, m, j), 'thinking block without a signature cannot be sent back to the API');
      }
    });
    if (i > 0 && msgs[i - 1]!.role === m.role) add('role-order', line, `two ${m.role} messages in a row after merging`);

    if (m.role === 'assistant') {
      const uses = m.content.filter((b) => b.type === 'tool_use').map((b) => String(b.id));
      for (const id of uses) {
        if (seenToolIds.has(id)) add('duplicate-tool-id', line, `tool_use id ${id} already used at line ${seenToolIds.get(id)}`);
        seenToolIds.set(id, line);
      }
      const next = msgs[i + 1];
      if (uses.length > 0) {
        if (!next) {
          add('open-tool-use', line, `${uses.length} tool call(s) at the end have no result; Claude Code marks them interrupted on resume`, 'warning');
        } else {
          const answered = new Set(next.content.filter((b) => b.type === 'tool_result').map((b) => String(b.tool_use_id)));
          for (const id of uses) if (!answered.has(id)) add('tool-use-without-result', line, `tool_use ${id} is not answered in the next message (line ${firstLine(next)})`);
        }
      }
    } else {
      const prev = msgs[i - 1];
      const uses = new Set(prev?.role === 'assistant' ? prev.content.filter((b) => b.type === 'tool_use').map((b) => String(b.id)) : []);
      let sawOther = false;
      m.content.forEach((b, j) => {
        if (b.type !== 'tool_result') {
          sawOther = true;
          return;
        }
        if (!uses.has(String(b.tool_use_id))) add('tool-result-without-use', lineOfBlock(metaByLine, m, j), `tool_result for ${String(b.tool_use_id)} answers no tool_use of the previous assistant message`);
        if (sawOther) add('tool-result-order', lineOfBlock(metaByLine, m, j), 'tool_result after other content in the same user message');
        const c = b.content;
        if (c !== undefined && ((typeof c === 'string' && c.length === 0 && !b.is_error) || (Array.isArray(c) && c.length === 0))) {
          // an empty tool_result content is legal for the API; Claude Code writes "" for silent commands
        }
      });
    }
  });
  return findings;
}

/** Lines on the chain whose thinking Claude Code drops because another model wrote them (§1.7.0). */
function thinkingOfOtherModels(index: ClaudeIndex, ctx: ClaudeContext): number[] {
  const sent = new Set(ctx.transcript.flatMap((m) => m.lines));
  const metaByLine = new Map(index.lines.map((m) => [m.line, m] as const));
  return ctx.chainLines.filter((line) => {
    const m = metaByLine.get(line);
    return m?.kind === 'assistant' && !m.isApiError && sent.has(line) && m.model !== ctx.resumeModel && m.blockTypes.some((t) => t === 'thinking' || t === 'redacted_thinking');
  });
}

export function isValid(findings: ValidationFinding[]): boolean {
  return !findings.some((f) => f.severity === 'error');
}
