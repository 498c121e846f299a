/**
 * `ctxvm session analyze` as issue 22 asks: the system prompt and tools on their own line (read off
 * the log's usage, or "unknown"), the whole request beside the messages, a check of the estimate
 * against the last logged request, and no negative cost anywhere in the cache table.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, Transcript, text, toolResult, toolUse, writeTranscript } from '../support/claude-transcript.js';
import { runCliInProcess } from '../support/run-cli.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir('ctxvm-cli-analyze-')));
afterAll(() => cleanup());

const SYSTEM = 15_000;

/** Big tool output early, so trimming removes most of the messages; usage logged on every reply. */
function session(withUsage: boolean): Transcript {
  const t = new Transcript();
  t.user('summarise the logs');
  for (let i = 0; i < 3; i++) {
    t.assistant(`msg_${i}`, toolUse(`toolu_${i}`, 'Bash', { command: `cat log-${i}.txt` }));
    t.results(toolResult(`toolu_${i}`, Array.from({ length: 400 }, (_, k) => `${k}: request served in ${k % 50} ms`).join('\n')));
  }
  t.assistant('msg_done', text('They look healthy.'));
  t.user('thanks');
  t.assistant('msg_end', text('Any time.'));
  for (const l of t.lines) {
    const m = l.message as { id?: string; usage?: unknown } | undefined;
    if (l.type !== 'assistant' || !m) continue;
    // logged on the first reply (the system prompt and tools plus the 4-word prompt) and the last
    const logged = withUsage && (m.id === 'msg_0' || m.id === 'msg_end');
    m.usage = logged ? { input_tokens: 3, cache_read_input_tokens: m.id === 'msg_0' ? SYSTEM + 2 : SYSTEM + 30_000, cache_creation_input_tokens: 0, output_tokens: 9 } : undefined;
  }
  return t;
}

const run = (...args: string[]) => runCliInProcess(['session', 'analyze', ...args], { CTXVM_HOME: join(dir, 'home') }, dir);

describe('ctxvm session analyze', () => {
  it('prints the system prompt and tools, the whole request and the log check; never a negative cost', async () => {
    const file = await writeTranscript(dir, session(true), 'with-usage.jsonl');
    const r = await run(file);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^system \+ tools\s+[\d,]+\s+[\d,]+$/m);
    expect(r.stdout).toMatch(/^whole request\s+[\d,]+\s+[\d,]+ \(−[\d.]+%\)$/m);
    expect(r.stdout).toMatch(/check: the last logged request \(line \d+\) billed [\d,]+ input tokens; estimate [\d,]+/);
    // the expired-cache scenarios make the first call cheaper: said so, with no minus sign
    expect(r.stdout).toContain('none (saves $');
    expect(r.stdout).not.toMatch(/\$-|-\$|−\$/);
    const json = (await run(file, '--json')).json<{ tokens: number; systemAndTools: number; request: { tokens: number; trimmedTokens: number; reduction: number }; logged: { requests: number } }>();
    expect(json.systemAndTools).toBeGreaterThan(SYSTEM - 50);
    expect(json.systemAndTools).toBeLessThanOrEqual(SYSTEM + 2);
    expect(json.request.tokens).toBe(json.systemAndTools + json.tokens);
    expect(json.logged.requests).toBe(2);
    // trimming the messages is a smaller share of the whole request
    expect(json.request.reduction).toBeGreaterThan(0);
  });

  it('says "unknown" when the log records no usage', async () => {
    const file = await writeTranscript(dir, session(false), 'no-usage.jsonl');
    const r = await run(file);
    expect(r.stdout).toMatch(/^system \+ tools\s+unknown\s+unknown$/m);
    expect(r.stdout).toContain('system + tools: unknown (the log records no usage)');
    expect(r.stdout).not.toContain('whole request');
    expect((await run(file, '--json')).json<{ systemAndTools: null; request: null }>()).toMatchObject({ systemAndTools: null, request: null });
  });
});
