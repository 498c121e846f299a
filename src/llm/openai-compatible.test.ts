import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CtxvmError } from '../errors.js';
import { LlmError } from './llm-error.js';
import { createOpenAiCompatibleLlm } from './openai-compatible.js';
import { llmRequestOf, openAiReply, startProviderTestServer, type ProviderTestServer } from './testing.js';

const KEY = 'sk-test-0123456789abcdefSECRET';

describe('createOpenAiCompatibleLlm against a local chat-completions server', () => {
  let server: ProviderTestServer;
  let baseURL: string;
  beforeAll(async () => {
    server = await startProviderTestServer(() => ({ body: openAiReply('You have one task left: the weekly report.') }));
    baseURL = `${server.origin}/v1`;
  });
  afterAll(() => server.close());
  beforeEach(() => void server.requests.splice(0));

  it('sends the model, the context as system message and the user message, with bearer auth', async () => {
    const llm = createOpenAiCompatibleLlm({ apiKey: KEY, baseURL, model: 'gpt-test', temperature: 0.2 });
    const request = llmRequestOf();
    const reply = await llm(request);
    expect(reply).toBe('You have one task left: the weekly report.');
    expect(server.requests).toHaveLength(1);
    const sent = server.requests[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent.headers['content-type']).toMatch(/application\/json/);
    expect(sent.body).toEqual({
      model: 'gpt-test',
      temperature: 0.2,
      messages: [
        { role: 'system', content: request.context.text },
        { role: 'user', content: 'what is left today?' },
      ],
    });
  });

  it('sends no Authorization header to a keyless server (Ollama, vLLM) and no temperature unless asked', async () => {
    const llm = createOpenAiCompatibleLlm({ baseURL, model: 'qwen2.5:7b' });
    await llm(llmRequestOf());
    const sent = server.requests[0]!;
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).not.toHaveProperty('temperature');
    expect((sent.body as { model: string }).model).toBe('qwen2.5:7b');
  });

  it('retries after a 500 and after a 429, then succeeds', async () => {
    const llm = createOpenAiCompatibleLlm({ apiKey: KEY, baseURL, model: 'gpt-test', maxRetries: 2 });
    server.enqueue(
      { status: 500, body: { error: { message: 'boom', type: 'server_error' } }, headers: { 'retry-after-ms': '10' } },
      { status: 429, body: { error: { message: 'slow down', type: 'rate_limit' } }, headers: { 'retry-after-ms': '10' } },
    );
    await expect(llm(llmRequestOf())).resolves.toBe('You have one task left: the weekly report.');
    expect(server.requests).toHaveLength(3);
    // the same body every attempt
    expect(server.requests[2]!.body).toEqual(server.requests[0]!.body);
  });

  it('gives up after maxRetries with the status in the error', async () => {
    const llm = createOpenAiCompatibleLlm({ apiKey: KEY, baseURL, model: 'gpt-test', maxRetries: 1 });
    const overloaded = { status: 503, body: { error: { message: 'overloaded' } }, headers: { 'retry-after-ms': '5' } };
    server.enqueue(overloaded, overloaded);
    const error = await llm(llmRequestOf()).catch((e: unknown) => e);
    expect(server.requests).toHaveLength(2);
    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({ code: 'E_LLM', status: 503, reason: 'http' });
    expect((error as Error).message).toContain('HTTP 503');
    expect((error as Error).message).toContain('retried up to 1 time)');
  });

  it('does not retry a 400', async () => {
    const llm = createOpenAiCompatibleLlm({ apiKey: KEY, baseURL, model: 'gpt-test' });
    server.enqueue({ status: 400, body: { error: { message: 'bad request: messages', type: 'invalid_request_error' } } });
    await expect(llm(llmRequestOf())).rejects.toMatchObject({ code: 'E_LLM', status: 400 });
    expect(server.requests).toHaveLength(1);
  });

  it('times out an attempt after timeoutMs', async () => {
    const llm = createOpenAiCompatibleLlm({ apiKey: KEY, baseURL, model: 'gpt-test', timeoutMs: 150, maxRetries: 0 });
    server.enqueue({ delayMs: 3000, body: openAiReply('too late') });
    const started = Date.now();
    const error = await llm(llmRequestOf()).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(2500);
    expect(error).toMatchObject({ code: 'E_LLM', reason: 'timeout' });
    expect((error as Error).message).toMatch(/timed out/);
  });

  it('on a 401 names provider, model, base URL and status — and never the key', async () => {
    const llm = createOpenAiCompatibleLlm({ apiKey: KEY, baseURL, model: 'gpt-test' });
    server.enqueue({
      status: 401,
      body: { error: { message: `Incorrect API key provided: ${KEY}. You can find your API key at https://platform.openai.com.`, type: 'invalid_request_error', code: 'invalid_api_key' } },
      headers: { 'x-request-id': 'req_123' },
    });
    const error = (await llm(llmRequestOf()).catch((e: unknown) => e)) as LlmError;
    expect(server.requests).toHaveLength(1); // 401 is not retried
    expect(CtxvmError.is(error)).toBe(true);
    expect(error).toMatchObject({ code: 'E_LLM', provider: 'openai-compatible', model: 'gpt-test', baseURL, status: 401, requestId: 'req_123' });
    expect(error.message).toContain('openai-compatible');
    expect(error.message).toContain('"gpt-test"');
    expect(error.message).toContain(baseURL);
    expect(error.message).toContain('HTTP 401');
    expect(error.hint).toMatch(/OPENAI_API_KEY/);
    const everything = [error.message, error.hint, error.stack, String((error.cause as Error)?.message), JSON.stringify(error)].join('\n');
    expect(everything).not.toContain(KEY);
  });

  it('reports a refused connection', async () => {
    const closed = await startProviderTestServer(() => ({}));
    const url = `${closed.origin}/v1`;
    await closed.close();
    const llm = createOpenAiCompatibleLlm({ apiKey: KEY, baseURL: url, model: 'gpt-test', maxRetries: 0 });
    await expect(llm(llmRequestOf())).rejects.toMatchObject({ code: 'E_LLM', reason: 'connection' });
  });

  it('rejects a reply without text', async () => {
    const llm = createOpenAiCompatibleLlm({ apiKey: KEY, baseURL, model: 'gpt-test' });
    const empty = openAiReply('') as { choices: { message: { content: string | null }; finish_reason: string }[] };
    empty.choices[0]!.message.content = null;
    empty.choices[0]!.finish_reason = 'length';
    server.enqueue({ body: empty });
    await expect(llm(llmRequestOf())).rejects.toMatchObject({ code: 'E_LLM', reason: 'response', message: expect.stringContaining('finish_reason length') });
  });

  it('checks its options', () => {
    expect(() => createOpenAiCompatibleLlm({ model: '' })).toThrow(/model/);
    expect(() => createOpenAiCompatibleLlm({ model: 'm', timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => createOpenAiCompatibleLlm({ model: 'm', maxRetries: -1 })).toThrow(/maxRetries/);
    expect(() => createOpenAiCompatibleLlm({ model: 'm', baseURL: 'localhost:11434' })).toThrow(/baseURL/);
  });
});
