/**
 * The usage a log records, set against the estimate of what each request sent: the request's
 * prefix is the context before the reply it produced; the system prompt and tools are the first
 * request's bill minus its messages; Codex reasoning is billed while its turn is current only; a
 * change of the system prompt or tools starts over; usage that cannot be right gives "unknown".
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenCounter } from '../text/tokens.js';
import { tempDir, Transcript, text, thinking, writeTranscript, type Line } from '../../test/support/claude-transcript.js';
import { AGENT_BILLING } from './billing-model.js';
import { claudeDriver } from './claude/driver.js';
import { RolloutBuilder } from './codex/testing.js';
import { readLoggedUsage } from './logged-usage.js';
import { calibrationParams, claudeUsageProfile, codexUsageProfile, currentSegment, loggedContext, readLoggedContext } from './usage-profile.js';

const raw = createTokenCounter();
const claudeCounter = createTokenCounter({ model: 'claude-sonnet-4-5' });
const k = claudeCounter.calibration;
let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir('ctxvm-usage-')));
afterAll(() => cleanup());

/** Sets the usage of every assistant line of reply `id` (Claude Code repeats it on each). */
function setUsage(t: Transcript, id: string, input: number, cacheRead = 0, cacheWrite = 0): void {
  for (const l of t.lines) {
    const m = l.message as { id?: string; usage?: unknown } | undefined;
    if (l.type === 'assistant' && m?.id === id) m.usage = { input_tokens: input, cache_read_input_tokens: cacheRead, cache_creation_input_tokens: cacheWrite, output_tokens: 7 };
  }
}

const SYSTEM = 12_000;

describe('Claude usage', () => {
  it('reads each reply once, without sidechain replies, and knows the last compact boundary', async () => {
    const t = new Transcript();
    t.user('hello');
    t.reply('msg_1', [text('a'), text('b')]);
    t.assistant('msg_side', text('subagent'), { isSidechain: true });
    const { boundary } = t.compact('summary of before');
    t.user('next');
    t.reply('msg_2', [text('c')]);
    setUsage(t, 'msg_1', 100, 200, 300);
    setUsage(t, 'msg_side', 50);
    setUsage(t, 'msg_2', 400);
    const file = await writeTranscript(dir, t, 'usage-lines.jsonl');
    const usage = await readLoggedUsage(file, 'claude');
    expect(usage.requests).toEqual([
      { line: 2, inputTokens: 600 },
      { line: t.lineOf(t.lines[t.lines.length - 1]!.uuid as string), inputTokens: 400 },
    ]);
    expect(usage.lastResetLine).toBe(t.lineOf(boundary));
  });

  it('takes the system prompt and tools from the first request, and checks the last against the estimate', async () => {
    const t = new Transcript();
    t.user('please fix the failing test');
    t.reply('msg_1', [thinking('summary', 'x'.repeat(400)), text('Looking at it now.')]);
    t.user('it is in test/a.test.ts');
    t.reply('msg_2', [text('Fixed.')]);
    const p1 = raw.count('please fix the failing test');
    const p2 = p1 + raw.count('Looking at it now.') + raw.count('it is in test/a.test.ts');
    const signatureTokens = 400 * AGENT_BILLING.claude.encryptedTokensPerChar;
    // a bill 1% above the estimate on the last request
    setUsage(t, 'msg_1', 3, SYSTEM + Math.round(k * p1) - 3);
    const lastBill = Math.round((SYSTEM + Math.round(k * p2 + signatureTokens)) * 1.01);
    setUsage(t, 'msg_2', 1, 0, lastBill - 1);
    const file = await writeTranscript(dir, t, 'usage-system.jsonl');
    const loaded = await claudeDriver.load(file);
    const logged = await readLoggedContext(file, loaded.context, claudeCounter);
    expect(logged.requests).toBe(2);
    expect(logged.systemAndTools).toBe(SYSTEM);
    expect(logged.first).toEqual({ line: 2, inputTokens: SYSTEM + Math.round(k * p1), messagesEstimate: Math.round(k * p1) });
    expect(logged.last!.inputTokens).toBe(lastBill);
    expect(logged.last!.estimate).toBe(SYSTEM + Math.round(k * p2 + signatureTokens));
    expect(logged.last!.error).toBeCloseTo(1 / 1.01 - 1, 3);
  });

  it('says "unknown" when the log records no usage, or usage below its own messages', async () => {
    const t = new Transcript();
    t.user('word '.repeat(500));
    t.reply('msg_1', [text('ok')]);
    const file = await writeTranscript(dir, t, 'usage-low.jsonl');
    const loaded = await claudeDriver.load(file);
    // the builder's usage (10 input tokens) is less than the 500-word prompt
    expect((await readLoggedContext(file, loaded.context, claudeCounter)).systemAndTools).toBeNull();
    for (const l of t.lines as Line[]) delete (l.message as { usage?: unknown } | undefined)?.usage;
    const bare = await writeTranscript(dir, t, 'usage-none.jsonl');
    const none = await readLoggedContext(bare, (await claudeDriver.load(bare)).context, claudeCounter);
    expect(none).toEqual({ requests: 0, systemAndTools: null });
  });

  it('only counts replies after the last compact boundary', async () => {
    const t = new Transcript();
    t.user('old question');
    t.reply('msg_old', [text('old answer')]);
    t.compact('what happened before');
    t.user('new question');
    t.reply('msg_new', [text('new answer')]);
    setUsage(t, 'msg_old', 90_000);
    setUsage(t, 'msg_new', SYSTEM + 500);
    const file = await writeTranscript(dir, t, 'usage-compact.jsonl');
    const loaded = await claudeDriver.load(file);
    const profile = await claudeUsageProfile(file, loaded.context);
    expect(profile.requests.map((r) => r.inputTokens)).toEqual([SYSTEM + 500]);
  });
});

describe('Codex usage', () => {
  const S = 3000;
  /** A two-turn rollout whose token_count events bill S + the exact estimate (framing included). */
  function rollout(): { b: RolloutBuilder; bills: number[] } {
    const e = AGENT_BILLING.codex.entryTokens;
    const b = new RolloutBuilder().meta().turnContext().user('find the bug');
    const u1 = raw.count('find the bug') + e;
    b.tokenCount(); // running totals only: no request
    b.reasoning('look at main', 'ENC1').call('shell', { command: 'cat main.c' });
    b.tokenCount({ inputTokens: S + u1, reasoningTokens: 300 });
    b.repeatTokenCount(); // Codex repeats the last call at a turn's start
    b.output('int main(){}');
    // the call's output: the call, its output and the turn's reasoning (300 tokens) are billed
    const u2 = u1 + raw.count('shell {"command":"cat main.c"}') + raw.count('int main(){}') + 300 + 3 * e;
    b.reasoning('found it', 'ENC2').assistant('the bug is in main');
    b.tokenCount({ inputTokens: S + u2, reasoningTokens: 50 });
    b.user('thanks');
    // a new turn: the reasoning of the first is dropped
    const u3 = u2 - 300 - e + raw.count('the bug is in main') + e + raw.count('thanks') + e;
    b.assistant('you are welcome');
    b.tokenCount({ inputTokens: S + u3 });
    return { b, bills: [S + u1, S + u2, S + u3] };
  }

  it('reads each call once and bills reasoning of the current turn only', async () => {
    const { b, bills } = rollout();
    const file = join(dir, 'rollout-usage.jsonl');
    await writeFile(file, b.toString());
    const usage = await readLoggedUsage(file, 'codex');
    expect(usage.requests.map((r) => r.inputTokens)).toEqual(bills);
    expect(usage.requests.map((r) => r.reasoningTokens)).toEqual([300, 50, 0]);
    const profile = await codexUsageProfile(file);
    const params = calibrationParams('codex', raw);
    const logged = loggedContext(profile, params);
    expect(logged.systemAndTools).toBe(S);
    expect(logged.last).toMatchObject({ inputTokens: bills[2], estimate: bills[2], error: 0 });
    expect(profile.requests[1]!.features.fixedTokens).toBe(300);
    expect(profile.requests[2]!.features.fixedTokens).toBe(0);
  });

  it('starts over when the billed input falls further than the messages it sent', async () => {
    const { b } = rollout();
    // the tools shrank: the same messages plus a prompt now bill 2,500 tokens less
    b.user('one more');
    b.assistant('sure');
    const file = join(dir, 'rollout-tools-changed.jsonl');
    b.tokenCount({ inputTokens: 1000 + 40 });
    await writeFile(file, b.toString());
    const profile = await codexUsageProfile(file);
    const params = calibrationParams('codex', raw);
    expect(profile.requests).toHaveLength(4);
    expect(currentSegment(profile, params)).toHaveLength(1);
    expect(loggedContext(profile, params).requests).toBe(1);
  });
});
