/**
 * A provider failure loses nothing: the real manager over a real SQLite store stores the user's
 * message and what was extracted from it before it calls the LLM, so an E_LLM error leaves both
 * in memory and a retry of the call answers from them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFixedClock } from '../core/clock.js';
import { CtxvmError } from '../errors.js';
import { createMemoryManager } from '../memory/manager.js';
import { openMemoryStore } from '../memory/store/sql-memory-store.js';
import type { MemoryStore } from '../memory/memory-store.js';
import { createAnthropicLlm } from './anthropic.js';
import { createOpenAiCompatibleLlm } from './openai-compatible.js';
import { anthropicReply, openAiReply, startProviderTestServer, type ProviderTestServer } from './testing.js';

const KEY = 'sk-test-manager-SECRET-0001';
const T0 = Date.UTC(2026, 2, 10, 9, 0, 0);

describe('a failing LLM behind the real memory manager', () => {
  let dir: string;
  let server: ProviderTestServer;
  let store: MemoryStore;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ctxvm-llm-manager-'));
    server = await startProviderTestServer((r) => ({ body: r.url.endsWith('/messages') ? anthropicReply('Noted.') : openAiReply('Noted.') }));
    store = await openMemoryStore({ db: join(dir, 'ctxvm.db'), now: () => T0 });
  });
  afterAll(async () => {
    await store.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const provider of ['openai-compatible', 'anthropic'] as const) {
    it(`${provider}: the message and the extracted task are stored before the call; the error names the provider, not the key`, async () => {
      const userId = `user-${provider}`;
      const manager = createMemoryManager({ store, clock: createFixedClock(T0), defaultTimeZone: 'UTC' });
      const llm =
        provider === 'anthropic'
          ? createAnthropicLlm({ apiKey: KEY, baseURL: server.origin, model: 'claude-test', maxRetries: 1 })
          : createOpenAiCompatibleLlm({ apiKey: KEY, baseURL: `${server.origin}/v1`, model: 'gpt-test', maxRetries: 1 });
      const before = server.requests.length;
      server.enqueue(
        { status: 500, body: { error: { message: 'internal error' } }, headers: { 'retry-after-ms': '5' } },
        { status: 500, body: { error: { message: 'internal error' } }, headers: { 'retry-after-ms': '5' } },
      );
      const text = 'remind me to submit the quarterly report at 5pm today';
      const error = await manager.processMessage({ userId, text, id: 'turn-1' }, llm).catch((e: unknown) => e);
      expect(server.requests.length - before).toBe(2); // one retry, then the error
      expect(CtxvmError.is(error)).toBe(true);
      expect(error).toMatchObject({ code: 'E_LLM' });
      const message = (error as Error).message;
      expect(message).toContain(provider);
      expect(message).toContain('HTTP 500');
      expect(message).not.toContain(KEY);
      expect((error as { cause?: { status?: number } }).cause?.status).toBe(500);

      // nothing was lost: the turn and the task are in the warm store, no assistant turn yet
      const memory = store.forUser(userId);
      expect((await memory.recentTurns(10)).map((t) => [t.id, t.role, t.text])).toEqual([['turn-1', 'user', text]]);
      const tasks = await memory.listTasks();
      expect(tasks).toHaveLength(1);
      expect(tasks[0]!.title.toLowerCase()).toContain('quarterly report');
      expect(tasks[0]!.sourceTurnIds).toEqual(['turn-1']);

      // the next call (provider back) answers from that memory
      const ok = await manager.processMessage({ userId, text: 'what do I have to do today?', id: 'turn-2' }, llm);
      expect(ok.response).toBe('Noted.');
      const sent = JSON.stringify(server.requests.at(-1)!.body);
      expect(sent.toLowerCase()).toContain('quarterly report');
    });
  }
});
