/**
 * Live calls to the real providers. Each runs only when its key is in the environment, so CI and
 * offline runs skip them (the reason is printed and is part of the test name).
 */
import { describe, expect, it } from 'vitest';
import { createLlmFromEnv } from './from-env.js';
import { llmRequestOf } from './testing.js';

const env = process.env;
const live = [
  { provider: 'openai' as const, variable: 'OPENAI_API_KEY' },
  { provider: 'anthropic' as const, variable: 'ANTHROPIC_API_KEY' },
];

describe('live LLM calls', () => {
  for (const { provider, variable } of live) {
    const skip = !env[variable];
    if (skip) console.info(`[ctxvm] live ${provider} test skipped: ${variable} is not set`);
    it.skipIf(skip)(`${provider} answers a rebuilt context${skip ? ` (skipped: ${variable} is not set)` : ''}`, async () => {
      const { llm, model } = createLlmFromEnv({ ...env, CTXVM_LLM: provider }, { timeoutMs: 60_000, maxRetries: 2 });
      const reply = await llm(
        llmRequestOf({ stable: 'You are a terse assistant. Answer with one word.\n\n', volatile: '# Tasks\n- buy milk (todo)\n', userMessage: 'What do I need to buy? One word.' }),
      );
      expect(model).toBeTruthy();
      expect(reply.toLowerCase()).toContain('milk');
    });
  }
});
