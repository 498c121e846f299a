/**
 * Test helpers for LLM adapters, exported for users' own tests: a real HTTP server on
 * 127.0.0.1 (port 0) that records what the SDK sent and answers from a script, and a builder for
 * an `LlmRequest`. No network, no account.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RebuiltContext } from '../memory/context.js';
import type { LlmRequest } from './llm.js';

/** One request the server received. */
export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. "/v1/chat/completions". */
  url: string;
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON (undefined when it is not JSON). */
  body: unknown;
}

/** One scripted answer. */
export interface ScriptedResponse {
  status?: number;
  /** JSON body (serialised) or raw text. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this long before answering, ms (to provoke timeouts). */
  delayMs?: number;
}

/** A local stand-in for a provider's HTTP API. */
export interface ProviderTestServer {
  /** "http://127.0.0.1:<port>". */
  readonly origin: string;
  /** Everything received so far, in order. */
  readonly requests: RecordedRequest[];
  /** Queues answers, used one per request in order; when the queue is empty `fallback` answers. */
  enqueue(...responses: ScriptedResponse[]): void;
  close(): Promise<void>;
}

/** Starts the server; `fallback` answers requests when no scripted answer is queued. */
export async function startProviderTestServer(fallback: (request: RecordedRequest) => ScriptedResponse): Promise<ProviderTestServer> {
  const requests: RecordedRequest[] = [];
  const queue: ScriptedResponse[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = undefined;
      }
      const recorded: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      const answer = queue.shift() ?? fallback(recorded);
      if (answer.delayMs) {
        const t = setTimeout(() => {
          timers.delete(t);
          send(res, answer);
        }, answer.delayMs);
        timers.add(t);
      } else send(res, answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...responses) => void queue.push(...responses),
    close: async () => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function send(res: ServerResponse, answer: ScriptedResponse): void {
  if (res.destroyed) return;
  const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? {});
  res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
  res.end(text);
}

/** An OpenAI chat-completions reply with `text`. */
export function openAiReply(text: string, model = 'test-model'): unknown {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

/** An Anthropic Messages reply with `text`. */
export function anthropicReply(text: string, model = 'test-model'): unknown {
  return {
    id: 'msg_test',
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}

/** A minimal `LlmRequest` whose context text is `stable + volatile`. */
export function llmRequestOf(options: { stable?: string; volatile?: string; userMessage?: string; userId?: string; nowMs?: number } = {}): LlmRequest {
  const stable = options.stable ?? '# System\nYou are a helpful assistant.\n\n';
  const volatile = options.volatile ?? '# Tasks\n- write the weekly report (todo)\n';
  const userMessage = options.userMessage ?? 'what is left today?';
  const context: RebuiltContext = {
    text: stable + volatile,
    tokens: 0,
    budgetTokens: 2000,
    layers: [],
    dropped: [],
    stablePrefixChars: stable.length,
    memoryVersion: 1,
    cached: false,
  };
  return {
    context,
    userMessage,
    messages: [
      { role: 'system', content: context.text },
      { role: 'user', content: userMessage },
    ],
    extraction: { intent: 'chat', confidence: 1, entities: [], language: 'en', source: 'rules' },
    userId: options.userId ?? 'u1',
    nowMs: options.nowMs ?? Date.UTC(2026, 2, 10, 9, 0, 0),
    timeZone: 'UTC',
  };
}
