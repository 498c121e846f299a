/**
 * Delivers reminders by POSTing JSON to a webhook. Each delivery tries up to `attempts` times
 * within the call, with exponential backoff on network errors, timeouts, 408, 429 and 5xx
 * (honouring a `Retry-After` in seconds, capped at `retryMaxMs`); other statuses fail at once. Beyond that, the
 * scheduler's ledger retries later, so a receiver that is down for an hour still gets its
 * reminders. Every request carries `Idempotency-Key: <reminder id>` (receivers de-duplicate on
 * it) and, with a `secret`, `X-Ctxvm-Signature: sha256=<HMAC of the body>`.
 *
 * Errors name the webhook by its origin only: webhook URLs often carry a token in the path.
 */
import { createHmac } from 'node:crypto';
import { CtxvmError, UsageError } from '../../errors.js';
import { reminderJson, type Reminder, type ReminderSink } from './reminder.js';

/** Options of `createWebhookSink`. */
export interface WebhookSinkOptions {
  /** The http(s) URL to POST to. */
  url: string;
  /** Extra headers (e.g. the receiver's Authorization). */
  headers?: Record<string, string>;
  /** HMAC-SHA256 key for the `X-Ctxvm-Signature` header (default: unsigned). */
  secret?: string;
  /** Tries per delivery, including the first (default 3). */
  attempts?: number;
  /** Backoff before the second try, ms; doubles per try (default 500). */
  retryBaseMs?: number;
  /** Longest wait between tries, ms, also the cap on `Retry-After` (default 8 000). */
  retryMaxMs?: number;
  /** Per-request timeout, ms (default 10 000). */
  timeoutMs?: number;
  /** `fetch` to use (default: the global one). */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Sleep between tries (default: a timer); injectable for tests. */
  sleep?: (ms: number) => Promise<void>;
}

/** A webhook that did not take a reminder. */
export class WebhookError extends CtxvmError {
  /** HTTP status of the last try, when the receiver answered. */
  readonly status: number | undefined;
  /** Whether trying again later may help (network, timeout, 408, 429, 5xx). */
  readonly retryable: boolean;
  /** The receiver's `Retry-After`, ms, when it sent one. */
  readonly retryAfterMs: number | undefined;

  constructor(message: string, options: { status?: number; retryable: boolean; retryAfterMs?: number }) {
    super('E_UNAVAILABLE', message);
    this.name = 'WebhookError';
    this.status = options.status;
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** Creates a sink that POSTs each reminder to `options.url`. */
export function createWebhookSink(options: WebhookSinkOptions): ReminderSink {
  let url: URL;
  try {
    url = new URL(options.url);
  } catch (cause) {
    throw new UsageError('webhook: not a URL', { cause, hint: 'give an http(s) URL, e.g. https://example.com/hooks/reminders' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`webhook: expected an http(s) URL, got ${url.protocol}`);
  const attempts = options.attempts ?? 3;
  if (!Number.isInteger(attempts) || attempts < 1) throw new UsageError('webhook: attempts must be a positive integer');
  const baseMs = options.retryBaseMs ?? 500;
  const maxMs = options.retryMaxMs ?? 8_000;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const doFetch = options.fetch ?? ((input: string, init: RequestInit) => fetch(input, init));
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const where = `webhook ${url.origin}`;

  async function once(reminder: Reminder): Promise<void> {
    const body = JSON.stringify(reminderJson(reminder));
    const headers: Record<string, string> = {
      ...options.headers,
      'content-type': 'application/json',
      'idempotency-key': reminder.id,
      'user-agent': 'ctxvm-reminders',
    };
    if (options.secret) headers['x-ctxvm-signature'] = `sha256=${createHmac('sha256', options.secret).update(body).digest('hex')}`;
    let response: Response;
    try {
      response = await doFetch(url.href, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    } catch (cause) {
      const timedOut = (cause as Error)?.name === 'TimeoutError';
      const code = (cause as { cause?: { code?: string } })?.cause?.code;
      throw new WebhookError(`${where}: ${timedOut ? `no answer within ${timeoutMs} ms` : `request failed${code ? ` (${code})` : ''}`}`, { retryable: true });
    }
    await response.body?.cancel().catch(() => undefined);
    if (response.status >= 200 && response.status < 300) return;
    const retryable = response.status === 408 || response.status === 429 || response.status >= 500;
    const retryAfter = retryAfterMs(response.headers.get('retry-after'));
    throw new WebhookError(`${where}: HTTP ${response.status}`, { status: response.status, retryable, ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}) });
  }

  return {
    name: where,
    async deliver(reminder) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await once(reminder);
        } catch (error) {
          const e = error as WebhookError;
          if (!e.retryable || attempt >= attempts) throw error;
          const backoff = Math.min(maxMs, baseMs * 2 ** (attempt - 1));
          await sleep(e.retryAfterMs !== undefined ? Math.min(maxMs, e.retryAfterMs) : backoff);
        }
      }
    },
  };
}

/** `Retry-After` in seconds, as ms (the HTTP-date form is ignored: backoff applies). */
function retryAfterMs(value: string | null): number | undefined {
  if (!value || value.trim() === '') return undefined;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}
