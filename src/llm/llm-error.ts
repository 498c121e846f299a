/**
 * The one error an LLM adapter throws: a `CtxvmError` with code `E_LLM` whose message names the
 * provider, the model, the base URL and the HTTP status — never the API key, which is scrubbed
 * from anything the provider echoes back.
 */
import { redactUrl } from '../core/config.js';
import { CtxvmError } from '../errors.js';

/** Where a call went (everything in it is safe to print). */
export interface LlmEndpoint {
  /** "openai-compatible" or "anthropic". */
  provider: string;
  model: string;
  /** Base URL, credentials in it redacted. */
  baseURL: string;
}

/** A failed LLM call. */
export class LlmError extends CtxvmError {
  readonly provider: string;
  readonly model: string;
  readonly baseURL: string;
  /** HTTP status of the last attempt, when the provider answered. */
  readonly status: number | undefined;
  /** The provider's request id (`x-request-id` / `request-id`), for support tickets. */
  readonly requestId: string | undefined;
  /** "http", "timeout", "connection", "aborted" or "response" (an answer without text). */
  readonly reason: 'http' | 'timeout' | 'connection' | 'aborted' | 'response';

  constructor(
    endpoint: LlmEndpoint,
    detail: { reason: LlmError['reason']; status?: number; requestId?: string; message: string; hint?: string; cause?: unknown },
  ) {
    const where = `${endpoint.provider} model ${JSON.stringify(endpoint.model)} at ${endpoint.baseURL}`;
    const status = detail.status !== undefined ? `HTTP ${detail.status}: ` : '';
    super('E_LLM', `${where}: ${status}${detail.message}`, {
      ...(detail.cause !== undefined ? { cause: detail.cause } : {}),
      ...(detail.hint !== undefined ? { hint: detail.hint } : {}),
    });
    this.name = 'LlmError';
    this.provider = endpoint.provider;
    this.model = endpoint.model;
    this.baseURL = endpoint.baseURL;
    this.status = detail.status;
    this.requestId = detail.requestId;
    this.reason = detail.reason;
  }
}

/** The printable form of a base URL: credentials in it redacted, trailing slash dropped. */
export function printableBaseUrl(baseURL: string): string {
  return redactUrl(baseURL).replace(/\/+$/, '');
}

/** Replaces every occurrence of `secret` in `text` with "***" (providers may echo the key back). */
export function scrubSecret(text: string, secret: string | null | undefined): string {
  if (!secret || secret.length < 4) return text;
  return text.split(secret).join('***');
}

/** Shape shared by the OpenAI and Anthropic SDK errors (both are Stainless-generated). */
interface SdkErrorLike {
  name?: string;
  message?: string;
  status?: number;
  headers?: Headers | Record<string, string> | undefined;
  error?: unknown;
  requestID?: string | null;
  request_id?: string | null;
}

/** The SDK's error classes that have no HTTP status (both SDKs export these names). */
export interface SdkErrorClasses {
  APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
  APIConnectionError: abstract new (...args: never[]) => Error;
  APIUserAbortError: abstract new (...args: never[]) => Error;
}

/** Maps whatever an SDK threw into an `LlmError` (an `LlmError` passes through). */
export function toLlmError(cause: unknown, endpoint: LlmEndpoint, apiKey: string | null | undefined, retries: number, sdk: SdkErrorClasses): LlmError {
  if (cause instanceof LlmError) return cause;
  const e = (cause ?? {}) as SdkErrorLike;
  const raw = scrubSecret(typeof e.message === 'string' && e.message ? e.message : String(cause), apiKey);
  const tried = retries > 0 ? ` (retried up to ${retries} ${retries === 1 ? 'time' : 'times'})` : '';
  if (typeof e.status === 'number') {
    const status = e.status;
    const requestId = e.requestID ?? e.request_id ?? headerOf(e.headers, 'x-request-id') ?? headerOf(e.headers, 'request-id') ?? undefined;
    const message = providerMessage(e, raw, status, apiKey);
    return new LlmError(endpoint, {
      reason: 'http',
      status,
      ...(requestId ? { requestId } : {}),
      message: status === 429 || status >= 500 ? `${message}${tried}` : message,
      hint: hintFor(status, endpoint),
      cause: scrubbedCause(cause, apiKey),
    });
  }
  if (cause instanceof sdk.APIConnectionTimeoutError) {
    return new LlmError(endpoint, { reason: 'timeout', message: `request timed out${tried}`, hint: 'raise timeoutMs, or check that the server is up', cause: scrubbedCause(cause, apiKey) });
  }
  if (cause instanceof sdk.APIUserAbortError) {
    return new LlmError(endpoint, { reason: 'aborted', message: 'request aborted', cause: scrubbedCause(cause, apiKey) });
  }
  if (cause instanceof sdk.APIConnectionError) {
    const below = (cause as { cause?: { message?: string; code?: string; cause?: { code?: string } } }).cause;
    const code = below?.code ?? below?.cause?.code;
    return new LlmError(endpoint, {
      reason: 'connection',
      message: `could not connect${code ? ` (${code})` : ''}${tried}`,
      hint: 'check the base URL and that the server is reachable',
      cause: scrubbedCause(cause, apiKey),
    });
  }
  return new LlmError(endpoint, { reason: 'response', message: raw, cause: scrubbedCause(cause, apiKey) });
}

/** Longest provider message kept, characters (an HTML error page says nothing more after that). */
const MAX_PROVIDER_MESSAGE = 300;

/**
 * The provider's own words: `error.message` of the body (OpenAI: `{error: {message, type}}`,
 * the SDK keeps the inner object; Anthropic: `{type: 'error', error: {type, message}}`), else the
 * SDK's message without its status prefix; the key scrubbed, then cut to 300 characters.
 */
function providerMessage(e: SdkErrorLike, raw: string, status: number, apiKey: string | null | undefined): string {
  const body = e.error as { message?: unknown; type?: unknown; error?: { message?: unknown; type?: unknown } } | undefined;
  const inner = body?.error && typeof body.error === 'object' ? body.error : body;
  let text: string;
  if (inner && typeof inner.message === 'string' && inner.message) {
    const type = typeof inner.type === 'string' && inner.type !== 'error' ? `${inner.type}: ` : '';
    text = `${type}${inner.message}`;
  } else {
    // The SDK prefixes the status ("401 Incorrect API key…"); the LlmError message states it itself.
    text = raw.replace(new RegExp(`^${status}\\s*`), '') || 'no error message';
  }
  // scrub before cutting, so no part of the key survives the cut
  text = scrubSecret(text, apiKey);
  return text.length > MAX_PROVIDER_MESSAGE ? `${text.slice(0, MAX_PROVIDER_MESSAGE)}…` : text;
}

function hintFor(status: number, endpoint: LlmEndpoint): string | undefined {
  const keyVar = endpoint.provider === 'anthropic' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY';
  if (status === 401 || status === 403) return `check ${keyVar} (the key was rejected)`;
  if (status === 404) return 'check the model name (CTXVM_LLM_MODEL) and the base URL';
  if (status === 429) return 'rate limited: wait and retry, or raise maxRetries';
  if (status >= 500) return 'the provider failed; retry later';
  return undefined;
}

function headerOf(headers: SdkErrorLike['headers'], name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  return (headers as Record<string, string>)[name];
}

/**
 * SDK errors keep the request's headers and body around; a cause chain that reaches a log must
 * not carry the key, so the cause kept is a plain error with the scrubbed message only.
 */
function scrubbedCause(cause: unknown, apiKey: string | null | undefined): Error {
  const e = cause as { name?: string; message?: string } | undefined;
  const plain = new Error(scrubSecret(typeof e?.message === 'string' ? e.message : String(cause), apiKey));
  plain.name = typeof e?.name === 'string' ? e.name : 'Error';
  return plain;
}
