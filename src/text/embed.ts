/**
 * Text embeddings from an OpenAI-compatible `/embeddings` endpoint (OpenAI, Ollama, vLLM, LM
 * Studio, a local server), configured like the LLM: a model, a base URL, a key. Vectors come
 * back L2-normalised, so a dot product is their cosine similarity.
 *
 *   CTXVM_EMBED_MODEL        model name; unset = no embeddings (search is BM25 only)
 *   CTXVM_EMBED_BASE_URL     base URL (default OPENAI_BASE_URL, else https://api.openai.com/v1)
 *   CTXVM_EMBED_API_KEY      bearer key (default OPENAI_API_KEY; local servers need none)
 *   CTXVM_EMBED_TIMEOUT_MS   per-call timeout, ms (default 2 000): a slow endpoint must not hold up a message
 */
import { CtxvmError, UsageError } from '../errors.js';
import { printableBaseUrl } from '../llm/llm-error.js';
import type { FetchLike } from '../llm/adapter-options.js';

/** Turns texts into vectors of one model. */
export interface Embedder {
  /** Model name: vectors of different models are never compared. */
  readonly model: string;
  /** The endpoint, credentials redacted (safe to print). */
  readonly endpoint: string;
  /** One unit-length vector per text, in order; rejects on any failure (an `E_UNAVAILABLE` error). */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** Options of `createOpenAiEmbedder`. */
export interface OpenAiEmbedderOptions {
  model: string;
  /** Base URL; `/embeddings` is appended (default https://api.openai.com/v1). */
  baseURL?: string;
  apiKey?: string;
  /** Per-call timeout, ms (default 2 000). */
  timeoutMs?: number;
  /** Most texts in one request (default 64); more are sent in several. */
  maxBatch?: number;
  /** `fetch` to use (default the global one). */
  fetch?: FetchLike;
}

/** Default base URL, as for the LLM. */
export const OPENAI_EMBED_DEFAULT_BASE_URL = 'https://api.openai.com/v1';
/** Default timeout of an embeddings call, ms. */
export const DEFAULT_EMBED_TIMEOUT_MS = 2_000;

/** An embedder speaking the OpenAI embeddings wire format. */
export function createOpenAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const base = (options.baseURL ?? OPENAI_EMBED_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const url = `${base}/embeddings`;
  const timeoutMs = options.timeoutMs ?? DEFAULT_EMBED_TIMEOUT_MS;
  const maxBatch = Math.max(1, options.maxBatch ?? 64);
  const doFetch = options.fetch ?? (globalThis.fetch as FetchLike);
  const endpoint = printableBaseUrl(url);
  const fail = (what: string, cause?: unknown) => new CtxvmError('E_UNAVAILABLE', `embeddings endpoint ${endpoint}: ${what}`, cause === undefined ? {} : { cause });

  async function call(input: readonly string[]): Promise<Float32Array[]> {
    let response: Response;
    try {
      response = await doFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
        body: JSON.stringify({ model: options.model, input }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (cause) {
      const name = (cause as Error | undefined)?.name;
      throw fail(name === 'TimeoutError' || name === 'AbortError' ? `no answer within ${timeoutMs} ms` : 'unreachable', cause);
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw fail(`HTTP ${response.status}`);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch (cause) {
      throw fail('the answer is not JSON', cause);
    }
    const data = (body as { data?: unknown })?.data;
    if (!Array.isArray(data) || data.length !== input.length) throw fail(`expected ${input.length} embeddings in "data"`);
    const out: Float32Array[] = new Array(input.length);
    for (const item of data as Array<{ index?: unknown; embedding?: unknown }>) {
      const index = typeof item?.index === 'number' ? item.index : -1;
      if (!(index >= 0 && index < input.length) || !Array.isArray(item.embedding) || item.embedding.length === 0) throw fail('an embedding is malformed');
      out[index] = unit(item.embedding as unknown[]);
    }
    const dims = out[0]?.length;
    if (out.some((v) => v === undefined || v.length !== dims)) throw fail('embeddings are missing or of different lengths');
    return out;
  }

  return {
    model: options.model,
    endpoint,
    async embed(texts) {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += maxBatch) out.push(...(await call(texts.slice(i, i + maxBatch))));
      return out;
    },
  };
}

/** `v` scaled to length 1 (a zero vector stays zero); rejects non-numbers. */
export function unit(v: readonly unknown[]): Float32Array {
  const out = new Float32Array(v.length);
  let norm = 0;
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (typeof x !== 'number' || !Number.isFinite(x)) throw new CtxvmError('E_UNAVAILABLE', 'an embedding holds a value that is not a finite number');
    out[i] = x;
    norm += x * x;
  }
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < out.length; i++) out[i]! /= norm;
  return out;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The embedder the environment configures, or undefined when CTXVM_EMBED_MODEL is unset. */
export function createEmbedderFromEnv(env: Env, options: { fetch?: FetchLike } = {}): Embedder | undefined {
  const get = (name: string) => env[name]?.trim() || undefined;
  const model = get('CTXVM_EMBED_MODEL');
  if (!model) return undefined;
  const rawTimeout = get('CTXVM_EMBED_TIMEOUT_MS');
  const timeoutMs = rawTimeout === undefined ? DEFAULT_EMBED_TIMEOUT_MS : Number(rawTimeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new UsageError(`CTXVM_EMBED_TIMEOUT_MS=${JSON.stringify(rawTimeout)}: expected a whole number of milliseconds >= 1`);
  const baseURL = get('CTXVM_EMBED_BASE_URL') ?? get('OPENAI_BASE_URL') ?? OPENAI_EMBED_DEFAULT_BASE_URL;
  const apiKey = get('CTXVM_EMBED_API_KEY') ?? get('OPENAI_API_KEY');
  return createOpenAiEmbedder({ model, baseURL, timeoutMs, ...(apiKey ? { apiKey } : {}), ...(options.fetch ? { fetch: options.fetch } : {}) });
}
