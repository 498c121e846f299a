/**
 * The LLM callback over any OpenAI-compatible chat-completions endpoint — OpenAI itself, Ollama,
 * vLLM, DeepSeek, Qwen (DashScope compatible mode), … — through the official `openai` SDK.
 *
 * One call per turn: `[system: context.text, user: userMessage]`. Timeouts and retries are the
 * SDK's: each attempt is cut after `timeoutMs`; 408, 409, 429, 5xx and network errors are retried
 * `maxRetries` times with exponential backoff (0.5 s doubling to at most 8 s, 25 % jitter), and a
 * `retry-after`/`retry-after-ms` header from the server takes precedence. The SDK is loaded on
 * the first call, so importing this file costs nothing.
 */
import type OpenAI from 'openai';
import { checkAdapterOptions, conversationOf, type FetchLike } from './adapter-options.js';
import type { LlmCallback } from './llm.js';
import { LlmError, printableBaseUrl, toLlmError, type LlmEndpoint, type SdkErrorClasses } from './llm-error.js';

/** OpenAI's own endpoint, used when no base URL is given. */
export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** Options of `createOpenAiCompatibleLlm`. */
export interface OpenAiCompatibleLlmOptions {
  /** API key, sent as `Authorization: Bearer …`; omit for servers without auth (Ollama, local vLLM). */
  apiKey?: string | null;
  /** Endpoint up to `/v1` (default `https://api.openai.com/v1`; Ollama: `http://localhost:11434/v1`). */
  baseURL?: string;
  /** Model name as the server knows it ("gpt-4o-mini", "qwen2.5:7b", "deepseek-chat"). */
  model: string;
  /** Per-attempt timeout, ms (default 60 000). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  /** Sampling temperature 0..2 (default: the server's). */
  temperature?: number;
  /** Upper bound on reply tokens, sent as `max_tokens` (default: the server's). */
  maxTokens?: number;
  /** Extra request headers (e.g. an organisation or gateway header). */
  headers?: Record<string, string>;
  /** `fetch` to use (default: the global one); for proxies and tests. */
  fetch?: FetchLike;
}

/** Creates the OpenAI-compatible LLM callback. Failures throw an `LlmError` (code E_LLM). */
export function createOpenAiCompatibleLlm(options: OpenAiCompatibleLlmOptions): LlmCallback {
  const { timeoutMs, maxRetries } = checkAdapterOptions('createOpenAiCompatibleLlm', options);
  const baseURL = options.baseURL ?? OPENAI_DEFAULT_BASE_URL;
  const apiKey = options.apiKey || null;
  const endpoint: LlmEndpoint = { provider: 'openai-compatible', model: options.model, baseURL: printableBaseUrl(baseURL) };
  let client: Promise<{ api: OpenAI; errors: SdkErrorClasses }> | undefined;
  const getClient = () =>
    (client ??= import('openai').then(({ default: OpenAIClient }) => ({
      errors: OpenAIClient,
      api: new OpenAIClient({
        // The SDK insists on a key; for keyless servers send a placeholder and strip the header below.
        apiKey: apiKey ?? 'no-key',
        baseURL,
        timeout: timeoutMs,
        maxRetries,
        // Explicit nulls keep the SDK from reading OPENAI_ORG_ID, _PROJECT_ID, _ADMIN_KEY, … from the environment.
        organization: null,
        project: null,
        adminAPIKey: null,
        webhookSecret: null,
        logLevel: 'off',
        defaultHeaders: { ...options.headers, ...(apiKey ? {} : { Authorization: null }) },
        ...(options.fetch ? { fetch: options.fetch as never } : {}),
      }),
    })));

  return async (request) => {
    const { api: openai, errors } = await getClient();
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      ...(request.context.text ? [{ role: 'system' as const, content: request.context.text }] : []),
      ...conversationOf(request),
    ];
    let completion: OpenAI.Chat.ChatCompletion;
    try {
      completion = await openai.chat.completions.create({
        model: options.model,
        messages,
        ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
        ...(options.maxTokens !== undefined ? { max_tokens: options.maxTokens } : {}),
      });
    } catch (cause) {
      throw toLlmError(cause, endpoint, apiKey, maxRetries, errors);
    }
    const choice = completion?.choices?.[0];
    const text = choice?.message?.content ?? choice?.message?.refusal;
    if (typeof text !== 'string' || text === '') {
      throw new LlmError(endpoint, { reason: 'response', message: `the reply has no text (finish_reason ${choice?.finish_reason ?? 'missing'})` });
    }
    return text;
  };
}
