/**
 * What a context costs as the provider bills it: text by the calibrated counter, Claude thinking
 * by its signature (not its summary text), Codex reasoning not at all once its turn is over,
 * Codex items with their framing; the breakdown always sums to the total.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenCounter } from '../text/tokens.js';
import { tempDir, Transcript, text, thinking, toolResult, toolUse, writeTranscript } from '../../test/support/claude-transcript.js';
import { AGENT_BILLING } from './billing-model.js';
import { claudeDriver } from './claude/driver.js';
import { codexDriver } from './codex/driver.js';
import { RolloutBuilder } from './codex/testing.js';
import type { AgentContext } from './context-model.js';
import { countContextTokens } from './token-breakdown.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const counter = createTokenCounter({ calibration: 1.5 });
const raw = createTokenCounter();
let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir('ctxvm-billing-')));
afterAll(() => cleanup());

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

describe('countContextTokens', () => {
  it('bills a Claude thinking block by its signature length, whatever its summary says', async () => {
    const signature = 'S'.repeat(1000);
    const t = new Transcript();
    t.user('why?');
    t.reply('msg_1', [thinking('a long summary of the reasoning '.repeat(20), signature), text('because')]);
    const loaded = await claudeDriver.load(await writeTranscript(dir, t, 'thinking.jsonl'));
    const counted = countContextTokens(loaded.context, counter);
    expect(counted.breakdown.thinking).toBe(Math.round(1000 * AGENT_BILLING.claude.encryptedTokensPerChar));
    expect(counted.breakdown.userText).toBe(counter.count('why?'));
    expect(counted.tokens).toBe(sum(counted.breakdown));
    expect(counted.method).toContain('thinking by signature length');
  });

  it('counts a thinking block without a signature by its text, and a redacted one by its data', () => {
    const ctx: AgentContext = {
      agent: 'claude',
      entries: [
        { role: 'assistant', line: 1, parts: [{ category: 'thinking', text: 'plain reasoning text here' }] },
        { role: 'assistant', line: 2, parts: [{ category: 'thinking', text: 'QUJD'.repeat(50), encryptedChars: 200 }] },
      ],
    };
    const counted = countContextTokens(ctx, counter);
    expect(counted.perEntry.map((e) => e.tokens)).toEqual([counter.count('plain reasoning text here'), Math.round(200 * AGENT_BILLING.claude.encryptedTokensPerChar)]);
  });

  it('does not bill Codex reasoning on resume (summary and encrypted content), and frames every other item', async () => {
    const b = new RolloutBuilder().meta().turnContext().user('list the files');
    b.reasoning('I should run ls', `gAAAAA${'Z'.repeat(4000)}`).call('shell', { command: 'ls' }).output('a.txt\nb.txt').assistant('two files');
    const file = join(dir, 'rollout-reasoning.jsonl');
    await writeFile(file, b.toString());
    const loaded = await codexDriver.load(file);
    const counted = countContextTokens(loaded.context, raw);
    expect(counted.breakdown.thinking).toBe(0);
    const reasoning = loaded.context.entries.find((e) => e.role === 'reasoning')!;
    expect(reasoning.notBilled).toBe(true);
    const framing = AGENT_BILLING.codex.entryTokens;
    const billedEntries = loaded.context.entries.filter((e) => !e.notBilled).length;
    const text = loaded.context.entries.filter((e) => !e.notBilled).flatMap((e) => e.parts).reduce((n, p) => n + raw.count(p.text), 0);
    expect(counted.tokens).toBe(text + framing * billedEntries);
    expect(counted.tokens).toBe(sum(counted.breakdown));
    // the base64 alone would have cost more than everything else together
    expect(raw.count(`gAAAAA${'Z'.repeat(4000)}`)).toBeGreaterThan(counted.tokens);
  });

  it('takes a tool call and its result in their own categories, each text counted once', async () => {
    const t = new Transcript();
    t.user('read it');
    t.reply('msg_1', [toolUse('toolu_1', 'Read', { file_path: '/a' })]);
    t.results(toolResult('toolu_1', 'contents of a'));
    t.reply('msg_2', [text('done')]);
    const loaded = await claudeDriver.load(await writeTranscript(dir, t, 'tools.jsonl'));
    const counted = countContextTokens(loaded.context, counter);
    expect(counted.breakdown.toolResult).toBe(counter.count('contents of a'));
    expect(counted.breakdown.toolInput).toBe(counter.count('Read {"file_path":"/a"}'));
  });
});
