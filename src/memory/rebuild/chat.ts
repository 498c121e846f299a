/**
 * A rebuilt context in the shape a provider's chat API takes. The stable layers (system,
 * profile, project) come first and unchanged between turns, so provider prompt caches hit:
 * OpenAI caches the longest matching prefix on its own; Anthropic caches up to an explicit
 * `cache_control` breakpoint, which goes right after the stable layers.
 */
import type { ChatMessage, RebuiltContext } from '../context.js';

/** An Anthropic system text block. */
export interface AnthropicTextBlock {
  type: 'text';
  text: string;
  cache_control?: { type: 'ephemeral' };
}

/** The body fields of an Anthropic Messages API request. */
export interface AnthropicChat {
  system: AnthropicTextBlock[];
  messages: Array<{ role: 'user'; content: string }>;
}

/** Chat request shapes by provider. */
export interface ChatShapes {
  openai: ChatMessage[];
  anthropic: AnthropicChat;
}

/**
 * The context and the user's message as provider chat input. OpenAI: a system message (the
 * whole context) and the user message. Anthropic: two system blocks, the stable prefix with a
 * cache breakpoint and the volatile rest, then the user message. Empty blocks are left out
 * (the API rejects empty text blocks).
 */
export function toChatMessages<S extends keyof ChatShapes>(ctx: RebuiltContext, userText: string, shape: S): ChatShapes[S];
export function toChatMessages(ctx: RebuiltContext, userText: string, shape: keyof ChatShapes): ChatShapes[keyof ChatShapes] {
  if (shape === 'openai') {
    const messages: ChatMessage[] = [];
    if (ctx.text !== '') messages.push({ role: 'system', content: ctx.text });
    messages.push({ role: 'user', content: userText });
    return messages;
  }
  const stable = ctx.text.slice(0, ctx.stablePrefixChars);
  const volatile = ctx.text.slice(ctx.stablePrefixChars);
  const system: AnthropicTextBlock[] = [];
  if (stable !== '') system.push({ type: 'text', text: stable, cache_control: { type: 'ephemeral' } });
  if (volatile !== '') system.push({ type: 'text', text: volatile });
  return { system, messages: [{ role: 'user', content: userText }] };
}
