import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAnthropicLlm, systemBlocks } from './anthropic.js';
import { LlmError } from './llm-error.js';
import { anthropicReply, llmRequestOf, startProviderTestServer, type ProviderTestServer } from './testing.js';

const KEY = 'sk-ant-test-0123456789SECRET';

describe('createAnthropicLlm against a local Messages API server', () => {
  let server: ProviderTestServer;
  beforeAll(async () => {
    server = await startProviderTestServer(() => ({ body: anthropicReply('Your weekly report is due at 17:00.') }));
  });
  afterAll(() => server.close());
  beforeEach(() => void server.requests.splice(0));

  it('sends the stable layers as a cached system block, then the volatile rest, then the user message', async () => {
    const llm = createAnthropicLlm({ apiKey: KEY, baseURL: server.origin, model: 'claude-test' });
    const request = llmRequestOf({ stable: '# System\nYou help.\n\n# Profile\nname: Li\n\n', volatile: '# Tasks\n- report (todo, due 17:00)\n' });
    await expect(llm(request)).resolves.toBe('Your weekly report is due at 17:00.');
    const sent = server.requests[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.url).toBe('/v1/messages');
    // SDK 1.x authenticates an API key with a bearer header (0.x sent `x-api-key`); accept either
    expect(sent.headers.authorization === `Bearer ${KEY}` || sent.headers['x-api-key'] === KEY).toBe(true);
    expect(sent.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(sent.body).toEqual({
      model: 'claude-test',
      max_tokens: 1024,
      system: [
        { type: 'text', text: '# System\nYou help.\n\n# Profile\nname: Li\n\n', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: '# Tasks\n- report (todo, due 17:00)\n' },
      ],
      messages: [{ role: 'user', content: 'what is left today?' }],
    });
    // the two blocks are exactly the context text, split after the stable layers
    const blocks = (sent.body as { system: { text: string }[] }).system;
    expect(blocks.map((b) => b.text).join('')).toBe(request.context.text);
  });

  it('keeps the cached block byte-identical across turns while only the volatile layers change', async () => {
    const llm = createAnthropicLlm({ apiKey: KEY, baseURL: server.origin, model: 'claude-test', maxTokens: 300 });
    await llm(llmRequestOf({ volatile: '# Tasks\n- a\n', userMessage: 'one' }));
    await llm(llmRequestOf({ volatile: '# Tasks\n- a\n- b\n', userMessage: 'two' }));
    const [first, second] = server.requests.map((r) => r.body as { system: unknown[]; max_tokens: number });
    expect(second!.system[0]).toEqual(first!.system[0]);
    expect(second!.system[1]).not.toEqual(first!.system[1]);
    expect(first!.max_tokens).toBe(300);
  });

  it('joins the text blocks of the reply', async () => {
    const llm = createAnthropicLlm({ apiKey: KEY, baseURL: server.origin, model: 'claude-test' });
    const reply = anthropicReply('Hello') as { content: unknown[] };
    reply.content.push({ type: 'text', text: ', world' });
    server.enqueue({ body: reply });
    await expect(llm(llmRequestOf())).resolves.toBe('Hello, world');
  });

  it('retries after a 529 (overloaded) and a 429, then succeeds', async () => {
    const llm = createAnthropicLlm({ apiKey: KEY, baseURL: server.origin, model: 'claude-test', maxRetries: 2 });
    server.enqueue(
      { status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, headers: { 'retry-after-ms': '10' } },
      { status: 429, body: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }, headers: { 'retry-after-ms': '10' } },
    );
    await expect(llm(llmRequestOf())).resolves.toBe('Your weekly report is due at 17:00.');
    expect(server.requests).toHaveLength(3);
  });

  it('times out an attempt after timeoutMs', async () => {
    const llm = createAnthropicLlm({ apiKey: KEY, baseURL: server.origin, model: 'claude-test', timeoutMs: 150, maxRetries: 0 });
    server.enqueue({ delayMs: 3000, body: anthropicReply('too late') });
    await expect(llm(llmRequestOf())).rejects.toMatchObject({ code: 'E_LLM', reason: 'timeout', provider: 'anthropic' });
  });

  it('on a 401 names provider, model, base URL and status — and never the key', async () => {
    const llm = createAnthropicLlm({ apiKey: KEY, baseURL: server.origin, model: 'claude-test' });
    server.enqueue({
      status: 401,
      body: { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${KEY}` } },
      headers: { 'request-id': 'req_abc' },
    });
    const error = (await llm(llmRequestOf()).catch((e: unknown) => e)) as LlmError;
    expect(server.requests).toHaveLength(1);
    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({ code: 'E_LLM', provider: 'anthropic', model: 'claude-test', baseURL: server.origin, status: 401, requestId: 'req_abc' });
    expect(error.message).toMatch(/^anthropic model "claude-test" at http:\/\/127\.0\.0\.1:\d+: HTTP 401: authentication_error: invalid x-api-key \*\*\*$/);
    expect(error.hint).toMatch(/ANTHROPIC_API_KEY/);
    const everything = [error.message, error.hint, error.stack, String((error.cause as Error)?.message), JSON.stringify(error)].join('\n');
    expect(everything).not.toContain(KEY);
  });

  it('requires a key and checks its options', () => {
    expect(() => createAnthropicLlm({ apiKey: '', model: 'm' })).toThrow(/apiKey/);
    expect(() => createAnthropicLlm({ apiKey: KEY, model: 'm', maxTokens: 0 })).toThrow(/maxTokens/);
  });
});

describe('systemBlocks', () => {
  it('puts everything in one cached block when the whole context is stable', () => {
    expect(systemBlocks({ text: 'abc', stablePrefixChars: 3 })).toEqual([{ type: 'text', text: 'abc', cache_control: { type: 'ephemeral' } }]);
  });
  it('sends one uncached block when nothing is stable', () => {
    expect(systemBlocks({ text: 'abc', stablePrefixChars: 0 })).toEqual([{ type: 'text', text: 'abc' }]);
  });
  it('leaves out blank blocks and clamps the split point', () => {
    expect(systemBlocks({ text: '', stablePrefixChars: 0 })).toEqual([]);
    expect(systemBlocks({ text: 'ab\n\n', stablePrefixChars: 2 })).toEqual([{ type: 'text', text: 'ab', cache_control: { type: 'ephemeral' } }]);
    expect(systemBlocks({ text: 'ab', stablePrefixChars: 99 })).toHaveLength(1);
  });
});
