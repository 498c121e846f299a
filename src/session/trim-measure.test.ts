/**
 * A measured trim (the numbers `ctxvm session trim` prints): its counts are what counting each
 * file on its own gives, and the counting phase reports its progress.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemoClaudeSession } from '../demo/claude-session.js';
import { createFsObjectStore } from '../store/drivers/objects-fs.js';
import { createTokenCounter } from '../text/tokens.js';
import { analyzeSession, loadSession, trimSession } from './session.js';
import { countContextTokens } from './token-breakdown.js';
import { readLoggedContext } from './usage-profile.js';

let dir: string;
let input: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-trim-measure-'));
  input = join(dir, 'in.jsonl');
  // usage as a real log records it: the system prompt and tools (about 20k) plus the messages so far
  let billed = 20_000;
  const lines = buildDemoClaudeSession({ turns: 12 }).map((text) => {
    const line = JSON.parse(text) as { type?: string; message?: { usage?: Record<string, number> } };
    if (line.type === 'assistant' && line.message?.usage) line.message.usage = { ...line.message.usage, input_tokens: (billed += 400) };
    return JSON.stringify(line);
  });
  await writeFile(input, `${lines.join('\n')}\n`);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Tokens of a file counted on its own, with a fresh counter for its model. */
async function countedAlone(file: string) {
  const loaded = await loadSession(file);
  const counter = createTokenCounter(loaded.context.model ? { model: loaded.context.model } : {});
  return { loaded, counter, counted: countContextTokens(loaded.context, counter) };
}

describe('a measured trim', () => {
  it('counts each file as counting it alone does, and reports the counting as it goes', async () => {
    const output = join(dir, 'out.jsonl');
    const shares: number[] = [];
    const report = await trimSession({ input, output, store: createFsObjectStore({ root: join(dir, 'objects') }), onCountProgress: (share) => shares.push(share) });

    const before = await countedAlone(input);
    const after = await countedAlone(output);
    expect(report.input.tokens).toBe(before.counted.tokens);
    expect(report.input.breakdown).toEqual(before.counted.breakdown);
    expect(report.output.tokens).toBe(after.counted.tokens);
    expect(report.output.breakdown).toEqual(after.counted.breakdown);
    expect(report.output.tokens!).toBeLessThan(report.input.tokens!);
    const logged = await readLoggedContext(input, before.loaded.context, before.counter);
    expect(logged.systemAndTools).not.toBeNull();
    expect(report.request?.systemAndTools).toBe(logged.systemAndTools);

    // 0 when the load for counting starts, the first half while it reads, the second while it counts, 1 at the end
    expect(shares[0]).toBe(0);
    expect(shares.at(-1)).toBe(1);
    for (let i = 1; i < shares.length; i++) expect(shares[i]!).toBeGreaterThanOrEqual(shares[i - 1]!);
    expect(shares.some((x) => x > 0 && x <= 0.5)).toBe(true);
    expect(shares.some((x) => x > 0.5 && x < 1)).toBe(true);
  });

  it('is not reported when the trim does not measure', async () => {
    const calls: number[] = [];
    const report = await trimSession({ input, output: join(dir, 'unmeasured.jsonl'), store: createFsObjectStore({ root: join(dir, 'objects') }), measure: false, onCountProgress: (share) => calls.push(share) });
    expect(report.input.tokens).toBeUndefined();
    expect(calls).toEqual([]);
  });

  it('gives analyze the counts and the logged context that counting alone gives', async () => {
    const report = await analyzeSession(input);
    const before = await countedAlone(input);
    expect(report.tokens).toBe(before.counted.tokens);
    expect(report.perMessage).toEqual(before.counted.perEntry);
    expect(report.logged).toEqual(await readLoggedContext(input, before.loaded.context, before.counter));
  });

  it('gives analyze the numbers the trim itself prints', async () => {
    // tool output whose estimate passes the default threshold calibrated for Claude (x1.31) but
    // not as the trim decides it, uncalibrated
    const lines = buildDemoClaudeSession({ turns: 12 }).map((text) => {
      const line = JSON.parse(text) as { message?: { content?: unknown } };
      const content = line.message?.content;
      if (Array.isArray(content)) for (const b of content as { type?: string; content?: unknown }[]) if (b.type === 'tool_result') b.content = 'lorem ipsum dolor sit amet '.repeat(31);
      return JSON.stringify(line);
    });
    const file = join(dir, 'borderline.jsonl');
    await writeFile(file, `${lines.join('\n')}\n`);
    const trimmed = await trimSession({ input: file, output: join(dir, 'borderline-out.jsonl'), store: createFsObjectStore({ root: join(dir, 'objects') }) });
    const analyzed = await analyzeSession(file);
    expect(analyzed.model).toMatch(/^claude/);
    expect(analyzed.tokens).toBe(trimmed.input.tokens);
    expect(analyzed.trimmed.tokens).toBe(trimmed.output.tokens);
    expect(analyzed.trimmed.breakdown).toEqual(trimmed.output.breakdown);
  });
});
