/** Claude messages → the agent-neutral AgentContext (token categories per block). */
import type { AgentContext, ContextEntry, ContextPart } from '../context-model.js';
import { isSummaryBlock, type ClaudeContext, type ContextMessage } from './context.js';
import type { ContentBlock } from './types.js';

function blockParts(block: ContentBlock, message: ContextMessage): ContextPart[] {
  const role = message.role;
  switch (block.type) {
    case 'text':
      if (message.injected || isSummaryBlock(block)) return [{ category: 'system', text: String(block.text ?? '') }];
      return [{ category: role === 'user' ? 'userText' : 'assistantText', text: String(block.text ?? '') }];
    case 'image':
      return [{ category: 'image', text: String((block.source as { data?: unknown } | undefined)?.data ?? '') }];
    case 'thinking': {
      // billed by the reasoning its signature seals, not by the summary shown (billing-model.ts)
      const signature = typeof block.signature === 'string' ? block.signature.length : 0;
      return [{ category: 'thinking', text: String(block.thinking ?? ''), ...(signature ? { encryptedChars: signature } : {}) }];
    }
    case 'redacted_thinking': {
      const data = String(block.data ?? '');
      return [{ category: 'thinking', text: data, encryptedChars: data.length }];
    }
    case 'tool_use':
      return [{ category: 'toolInput', text: `${String(block.name)} ${JSON.stringify(block.input ?? {})}` }];
    case 'tool_result': {
      const c = block.content;
      if (typeof c === 'string') return [{ category: 'toolResult', text: c }];
      if (!Array.isArray(c)) return [{ category: 'toolResult', text: '' }];
      return c.map(
        (inner): ContextPart =>
          inner.type === 'image'
            ? { category: 'image', text: String((inner.source as { data?: unknown } | undefined)?.data ?? '') }
            : { category: 'toolResult', text: inner.type === 'text' ? String(inner.text ?? '') : JSON.stringify(inner) },
      );
    }
    default:
      return [{ category: 'system', text: JSON.stringify(block) }];
  }
}

export function claudeAgentContext(ctx: ClaudeContext): AgentContext {
  const entries: ContextEntry[] = ctx.messages.map((m) => ({
    role: m.role,
    line: m.lines[0] ?? 0,
    parts: m.content.flatMap((b) => blockParts(b, m)),
    ...(m.injected ? { injected: true } : {}),
  }));
  // attachments sent as role:"system" entries (newer models) cost tokens too; each goes after the
  // message that precedes its line in the file
  for (const s of ctx.systemEntries ?? []) {
    let at = entries.length;
    while (at > 0 && (entries[at - 1]!.line === 0 || entries[at - 1]!.line > s.line)) at--;
    entries.splice(at, 0, { role: 'system', line: s.line, parts: [{ category: 'system', text: s.text }] });
  }
  return { agent: 'claude', entries, ...(ctx.model ? { model: ctx.model } : {}) };
}
