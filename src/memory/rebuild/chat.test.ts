import { describe, expect, it } from 'vitest';
import type { RebuiltContext } from '../context.js';
import { toChatMessages } from './chat.js';

function context(text: string, stablePrefixChars: number): RebuiltContext {
  return { text, tokens: 0, budgetTokens: 100, layers: [], dropped: [], stablePrefixChars, memoryVersion: 1, cached: false };
}

describe('toChatMessages', () => {
  const ctx = context('You help.\n\n# User profile\n- name: Li\n\n# Open tasks\n- [todo] Report\n', 'You help.\n\n# User profile\n- name: Li\n'.length);

  it('gives OpenAI one system message with the whole context, then the user message', () => {
    expect(toChatMessages(ctx, 'Hi', 'openai')).toEqual([
      { role: 'system', content: ctx.text },
      { role: 'user', content: 'Hi' },
    ]);
  });

  it('gives Anthropic a cache breakpoint right after the stable layers', () => {
    expect(toChatMessages(ctx, 'Hi', 'anthropic')).toEqual({
      system: [
        { type: 'text', text: 'You help.\n\n# User profile\n- name: Li\n', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: '\n# Open tasks\n- [todo] Report\n' },
      ],
      messages: [{ role: 'user', content: 'Hi' }],
    });
  });

  it('leaves out empty blocks and an empty system message', () => {
    const volatileOnly = context('# Open tasks\n- [todo] Report\n', 0);
    expect(toChatMessages(volatileOnly, 'Hi', 'anthropic').system).toEqual([{ type: 'text', text: '# Open tasks\n- [todo] Report\n' }]);
    const stableOnly = context('You help.\n', 10);
    expect(toChatMessages(stableOnly, 'Hi', 'anthropic').system).toEqual([{ type: 'text', text: 'You help.\n', cache_control: { type: 'ephemeral' } }]);
    expect(toChatMessages(context('', 0), 'Hi', 'openai')).toEqual([{ role: 'user', content: 'Hi' }]);
    expect(toChatMessages(context('', 0), 'Hi', 'anthropic').system).toEqual([]);
  });
});
