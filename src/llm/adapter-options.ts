/**
 * What the HTTP adapters share: option checks, defaults, and how a request becomes the
 * conversation part of a provider call.
 */
import { UsageError } from '../errors.js';
import type { LlmRequest } from './llm.js';

/** Per-attempt timeout of a provider call, ms (the SDKs default to 10 minutes; a chat turn should not). */
export const DEFAULT_LLM_TIMEOUT_MS = 60_000;
/** Retries after the first attempt on 408/409/429/5xx and network errors (the SDKs' own policy). */
export const DEFAULT_LLM_MAX_RETRIES = 2;

/** A `fetch` implementation (the global one, or a test double / proxying fetch). */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Checks the options every adapter takes; returns timeout and retries with defaults applied. */
export function checkAdapterOptions(where: string, options: { model?: unknown; timeoutMs?: unknown; maxRetries?: unknown; baseURL?: unknown }): {
  timeoutMs: number;
  maxRetries: number;
} {
  if (typeof options.model !== 'string' || options.model.trim() === '') {
    throw new UsageError(`${where}: model must be a non-empty string`, { hint: 'set CTXVM_LLM_MODEL or pass { model }' });
  }
  if (options.baseURL !== undefined && (typeof options.baseURL !== 'string' || !/^https?:\/\//i.test(options.baseURL))) {
    throw new UsageError(`${where}: baseURL must be an http(s) URL`);
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS;
  if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs <= 0) {
    throw new UsageError(`${where}: timeoutMs must be a positive integer (milliseconds)`);
  }
  const maxRetries = options.maxRetries ?? DEFAULT_LLM_MAX_RETRIES;
  if (typeof maxRetries !== 'number' || !Number.isInteger(maxRetries) || maxRetries < 0) {
    throw new UsageError(`${where}: maxRetries must be a non-negative integer`);
  }
  return { timeoutMs, maxRetries };
}

/** The turns after the system prompt: the request's non-system messages, else the user message. */
export function conversationOf(request: LlmRequest): { role: 'user' | 'assistant'; content: string }[] {
  const turns = (request.messages ?? [])
    .filter((m): m is { role: 'user' | 'assistant'; content: string } => m.role !== 'system')
    .map((m) => ({ role: m.role, content: m.content }));
  return turns.length > 0 ? turns : [{ role: 'user', content: request.userMessage }];
}
