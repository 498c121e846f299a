import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlmFromEnv, DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL } from './from-env.js';
import { anthropicReply, llmRequestOf, openAiReply, startProviderTestServer, type ProviderTestServer } from './testing.js';

describe('createLlmFromEnv', () => {
  let server: ProviderTestServer;
  beforeAll(async () => {
    server = await startProviderTestServer((r) => ({ body: r.url.endsWith('/messages') ? anthropicReply('from anthropic') : openAiReply('from openai') }));
  });
  afterAll(() => server.close());

  it('is offline by default', async () => {
    const chosen = createLlmFromEnv({});
    expect(chosen).toMatchObject({ name: 'offline', model: null, baseURL: null });
    expect(typeof (await chosen.llm(llmRequestOf()))).toBe('string');
  });

  it('prefers Anthropic when ANTHROPIC_API_KEY is set, with a default model', async () => {
    const chosen = createLlmFromEnv({ ANTHROPIC_API_KEY: 'sk-ant-x', OPENAI_API_KEY: 'sk-x', ANTHROPIC_BASE_URL: server.origin });
    expect(chosen).toMatchObject({ name: 'anthropic', model: DEFAULT_ANTHROPIC_MODEL, baseURL: server.origin });
    await expect(chosen.llm(llmRequestOf())).resolves.toBe('from anthropic');
  });

  it('uses OpenAI with OPENAI_API_KEY (default model on api.openai.com)', () => {
    expect(createLlmFromEnv({ OPENAI_API_KEY: 'sk-x' })).toMatchObject({ name: 'openai', model: DEFAULT_OPENAI_MODEL, baseURL: 'https://api.openai.com/v1' });
    expect(createLlmFromEnv({ OPENAI_API_KEY: 'sk-x', CTXVM_LLM_MODEL: 'gpt-4.1' }).model).toBe('gpt-4.1');
  });

  it('talks to a keyless OpenAI-compatible server (Ollama) named by OPENAI_BASE_URL and CTXVM_LLM_MODEL', async () => {
    const chosen = createLlmFromEnv({ OPENAI_BASE_URL: `${server.origin}/v1`, CTXVM_LLM_MODEL: 'qwen2.5:7b', CTXVM_LLM_MAX_RETRIES: '0' });
    expect(chosen).toMatchObject({ name: 'openai', model: 'qwen2.5:7b' });
    await expect(chosen.llm(llmRequestOf())).resolves.toBe('from openai');
    const sent = server.requests.at(-1)!;
    expect(sent.headers.authorization).toBeUndefined();
    expect((sent.body as { model: string }).model).toBe('qwen2.5:7b');
  });

  it('needs a model for a non-OpenAI base URL', () => {
    expect(() => createLlmFromEnv({ OPENAI_BASE_URL: 'http://localhost:11434/v1' })).toThrow(/CTXVM_LLM_MODEL/);
  });

  it('CTXVM_LLM forces a choice, and says what is missing', () => {
    expect(createLlmFromEnv({ CTXVM_LLM: 'offline', ANTHROPIC_API_KEY: 'sk-ant-x' }).name).toBe('offline');
    expect(createLlmFromEnv({ CTXVM_LLM: 'openai', ANTHROPIC_API_KEY: 'sk-ant-x', OPENAI_API_KEY: 'sk-x' }).name).toBe('openai');
    expect(() => createLlmFromEnv({ CTXVM_LLM: 'anthropic' })).toThrow(/ANTHROPIC_API_KEY/);
    expect(() => createLlmFromEnv({ CTXVM_LLM: 'openai' })).toThrow(/OPENAI_API_KEY/);
    expect(() => createLlmFromEnv({ CTXVM_LLM: 'gemini' })).toThrow(/offline, openai or anthropic/);
    expect(() => createLlmFromEnv({ OPENAI_API_KEY: 'sk-x', CTXVM_LLM_TIMEOUT_MS: 'soon' })).toThrow(/CTXVM_LLM_TIMEOUT_MS/);
  });

  it('treats empty variables as unset and never exposes the key', () => {
    expect(createLlmFromEnv({ ANTHROPIC_API_KEY: '', OPENAI_API_KEY: ' ' }).name).toBe('offline');
    const chosen = createLlmFromEnv({ OPENAI_API_KEY: 'sk-very-secret-key' });
    expect(JSON.stringify(chosen)).not.toContain('sk-very-secret-key');
  });
});
