/**
 * Picks the LLM from environment variables (passed in, never read from `process.env`):
 *
 *   CTXVM_LLM            offline | openai | anthropic — force one (default: chosen as below)
 *   ANTHROPIC_API_KEY    → Anthropic (ANTHROPIC_BASE_URL optional)
 *   OPENAI_API_KEY or OPENAI_BASE_URL → OpenAI-compatible (Ollama/vLLM need no key)
 *   otherwise            → the offline responder
 *   CTXVM_LLM_MODEL      model name (defaults: Anthropic `claude-haiku-4-5`, OpenAI `gpt-4o-mini`;
 *                        required for any other OpenAI-compatible server)
 *   CTXVM_LLM_TIMEOUT_MS, CTXVM_LLM_MAX_RETRIES   per-attempt timeout (ms) and retries
 */
import { UsageError } from '../errors.js';
import type { FetchLike } from './adapter-options.js';
import { ANTHROPIC_DEFAULT_BASE_URL, createAnthropicLlm } from './anthropic.js';
import type { LlmCallback } from './llm.js';
import { printableBaseUrl } from './llm-error.js';
import { createOfflineResponder } from './offline.js';
import { createOpenAiCompatibleLlm, OPENAI_DEFAULT_BASE_URL } from './openai-compatible.js';

/** Which LLM a configuration selected. */
export type LlmName = 'offline' | 'openai' | 'anthropic';

/** Default Anthropic model when CTXVM_LLM_MODEL is unset. */
export const DEFAULT_ANTHROPIC_MODEL = 'claude-haiku-4-5';
/** Default model on OpenAI's own endpoint when CTXVM_LLM_MODEL is unset. */
export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini';

/** What `createLlmFromEnv` chose (safe to print: no key in it). */
export interface ConfiguredLlm {
  name: LlmName;
  /** Model name, null for the offline responder. */
  model: string | null;
  /** Base URL with any credentials redacted, null for the offline responder. */
  baseURL: string | null;
  llm: LlmCallback;
}

/** Options of `createLlmFromEnv` (they win over the environment). */
export interface LlmFromEnvOptions {
  /** Per-attempt timeout, ms (default CTXVM_LLM_TIMEOUT_MS, else 60 000). */
  timeoutMs?: number;
  /** Retries after the first attempt (default CTXVM_LLM_MAX_RETRIES, else 2). */
  maxRetries?: number;
  /** `fetch` for the HTTP adapters (tests, proxies). */
  fetch?: FetchLike;
}

type Env = Readonly<Record<string, string | undefined>>;

/** Builds the LLM callback the environment asks for; throws a UsageError for a bad setting. */
export function createLlmFromEnv(env: Env, options: LlmFromEnvOptions = {}): ConfiguredLlm {
  const get = (name: string): string | undefined => {
    const v = env[name]?.trim();
    return v ? v : undefined;
  };
  const forced = get('CTXVM_LLM')?.toLowerCase();
  if (forced !== undefined && forced !== 'offline' && forced !== 'openai' && forced !== 'anthropic') {
    throw new UsageError(`CTXVM_LLM=${JSON.stringify(forced)}: expected offline, openai or anthropic`);
  }
  const name: LlmName = forced ?? (get('ANTHROPIC_API_KEY') ? 'anthropic' : get('OPENAI_API_KEY') || get('OPENAI_BASE_URL') ? 'openai' : 'offline');
  if (name === 'offline') return { name, model: null, baseURL: null, llm: createOfflineResponder() };

  const shared = {
    ...(options.fetch ? { fetch: options.fetch } : {}),
    timeoutMs: options.timeoutMs ?? intFromEnv(get('CTXVM_LLM_TIMEOUT_MS'), 'CTXVM_LLM_TIMEOUT_MS', 1),
    maxRetries: options.maxRetries ?? intFromEnv(get('CTXVM_LLM_MAX_RETRIES'), 'CTXVM_LLM_MAX_RETRIES', 0),
  };
  const explicit = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

  if (name === 'anthropic') {
    const apiKey = get('ANTHROPIC_API_KEY');
    if (!apiKey) throw new UsageError('CTXVM_LLM=anthropic needs ANTHROPIC_API_KEY', { hint: 'export ANTHROPIC_API_KEY=…, or unset CTXVM_LLM' });
    const model = get('CTXVM_LLM_MODEL') ?? DEFAULT_ANTHROPIC_MODEL;
    const baseURL = get('ANTHROPIC_BASE_URL') ?? ANTHROPIC_DEFAULT_BASE_URL;
    return { name, model, baseURL: printableBaseUrl(baseURL), llm: createAnthropicLlm(explicit({ apiKey, model, baseURL, ...shared })) };
  }

  const apiKey = get('OPENAI_API_KEY');
  const baseURL = get('OPENAI_BASE_URL') ?? OPENAI_DEFAULT_BASE_URL;
  if (!apiKey && !get('OPENAI_BASE_URL')) {
    throw new UsageError('CTXVM_LLM=openai needs OPENAI_API_KEY, or OPENAI_BASE_URL for a server without keys', {
      hint: 'e.g. OPENAI_BASE_URL=http://localhost:11434/v1 CTXVM_LLM_MODEL=qwen2.5:7b for Ollama',
    });
  }
  const onOpenAi = printableBaseUrl(baseURL) === OPENAI_DEFAULT_BASE_URL;
  const model = get('CTXVM_LLM_MODEL') ?? (onOpenAi ? DEFAULT_OPENAI_MODEL : undefined);
  if (!model) {
    throw new UsageError(`OPENAI_BASE_URL=${printableBaseUrl(baseURL)} needs CTXVM_LLM_MODEL (the model name that server serves)`, {
      hint: 'e.g. CTXVM_LLM_MODEL=qwen2.5:7b (Ollama), deepseek-chat (DeepSeek)',
    });
  }
  return { name, model, baseURL: printableBaseUrl(baseURL), llm: createOpenAiCompatibleLlm(explicit({ apiKey: apiKey ?? null, baseURL, model, ...shared })) };
}

function intFromEnv(value: string | undefined, name: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`${name}=${JSON.stringify(value)}: expected an integer >= ${min}`);
  return n;
}
