/**
 * The LLM callback over Anthropic's Messages API, through the official `@anthropic-ai/sdk`.
 *
 * The rebuilt context goes in `system` as two text blocks: the stable layers (system, profile,
 * project — `context.text.slice(0, context.stablePrefixChars)`) carrying
 * `cache_control: { type: 'ephemeral' }`, which puts the prompt-caching breakpoint right after
 * them, then the volatile rest (tasks, history, memories). The stable prefix is byte-identical
 * between turns while memory has not changed, so every later turn reads it from the cache.
 *
 * Timeouts and retries are the SDK's: each attempt is cut after `timeoutMs`; 408, 409, 429, 5xx
 * and network errors are retried `maxRetries` times with exponential backoff (0.5 s doubling to
 * at most 8 s, 25 % jitter), honouring `retry-after`/`retry-after-ms` and `x-should-retry`.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { UsageError } from '../errors.js';
import type { RebuiltContext } from '../memory/context.js';
import { checkAdapterOptions, conversationOf, type FetchLike } from './adapter-options.js';
import type { LlmCallback } from './llm.js';
import { LlmError, printableBaseUrl, toLlmError, type LlmEndpoint, type SdkErrorClasses } from './llm-error.js';

/** Anthropic's endpoint, used when no base URL is given. */
export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
/** Reply token cap when none is given. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 1024;

/** Options of `createAnthropicLlm`. */
export interface AnthropicLlmOptions {
  /** API key (the SDK sends it as the auth header). */
  apiKey: string;
  /** Endpoint without `/v1` (default `https://api.anthropic.com`). */
  baseURL?: string;
  /** Model id ("claude-haiku-4-5", "claude-sonnet-4-6", …). */
  model: string;
  /** Upper bound on reply tokens (default 1024). */
  maxTokens?: number;
  /** Per-attempt timeout, ms (default 60 000). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  /** Sampling temperature 0..1 (default: the API's). */
  temperature?: number;
  /** `fetch` to use (default: the global one); for proxies and tests. */
  fetch?: FetchLike;
}

/** Creates the Anthropic LLM callback. Failures throw an `LlmError` (code E_LLM). */
export function createAnthropicLlm(options: AnthropicLlmOptions): LlmCallback {
  const { timeoutMs, maxRetries } = checkAdapterOptions('createAnthropicLlm', options);
  if (typeof options.apiKey !== 'string' || options.apiKey === '') {
    throw new UsageError('createAnthropicLlm: apiKey is required', { hint: 'set ANTHROPIC_API_KEY' });
  }
  const maxTokens = options.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS;
  if (!Number.isInteger(maxTokens) || maxTokens <= 0) throw new UsageError('createAnthropicLlm: maxTokens must be a positive integer');
  const baseURL = options.baseURL ?? ANTHROPIC_DEFAULT_BASE_URL;
  const endpoint: LlmEndpoint = { provider: 'anthropic', model: options.model, baseURL: printableBaseUrl(baseURL) };
  let client: Promise<{ api: Anthropic; errors: SdkErrorClasses }> | undefined;
  const getClient = () =>
    (client ??= import('@anthropic-ai/sdk').then(({ default: AnthropicClient }) => ({
      errors: AnthropicClient,
      api: new AnthropicClient({
        apiKey: options.apiKey,
        baseURL,
        timeout: timeoutMs,
        maxRetries,
        logLevel: 'off',
        ...(options.fetch ? { fetch: options.fetch as never } : {}),
      }),
    })));

  return async (request) => {
    const { api: anthropic, errors } = await getClient();
    const system = systemBlocks(request.context);
    let message: Anthropic.Message;
    try {
      message = await anthropic.messages.create({
        model: options.model,
        max_tokens: maxTokens,
        ...(system.length ? { system } : {}),
        messages: conversationOf(request),
        ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
      });
    } catch (cause) {
      throw toLlmError(cause, endpoint, options.apiKey, maxRetries, errors);
    }
    const text = (message?.content ?? [])
      .filter((b): b is Anthropic.TextBlock => b.type === 'text')
      .map((b) => b.text)
      .join('');
    if (text === '') throw new LlmError(endpoint, { reason: 'response', message: `the reply has no text (stop_reason ${message?.stop_reason ?? 'missing'})` });
    return text;
  };
}

/**
 * The `system` blocks of a context: the stable layers with a cache breakpoint, then the rest.
 * Blank blocks are left out (the API rejects them); the split point is clamped to the text.
 */
export function systemBlocks(context: Pick<RebuiltContext, 'text' | 'stablePrefixChars'>): Anthropic.TextBlockParam[] {
  const cut = Math.max(0, Math.min(context.text.length, Math.trunc(context.stablePrefixChars) || 0));
  const stable = context.text.slice(0, cut);
  const volatile = context.text.slice(cut);
  const blocks: Anthropic.TextBlockParam[] = [];
  if (stable.trim() !== '') blocks.push({ type: 'text', text: stable, cache_control: { type: 'ephemeral' } });
  if (volatile.trim() !== '') blocks.push({ type: 'text', text: volatile });
  return blocks;
}
