/**
 * Lean loads (lean-line.ts) must find exactly what full loads find: on hand-built lines whose
 * long texts are blank, tagged or empty, on the corpus, and on generated sessions with edge cases.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeDriver } from './driver.js';
import { leanClaudeLine, standIn } from './lean-line.js';
import { Transcript, tempDir, text, thinking, toolResult, toolUse, writeTranscript } from '../../../test/support/claude-transcript.js';
import { claudeMainSessions, corpusSkipReason, generateClaudeSession, generatorSkipReason, printSkipReason } from '../../../test/support/corpus.js';

async function sameFindings(file: string): Promise<number> {
  const full = await claudeDriver.load(file);
  const lean = await claudeDriver.load(file, { lean: true });
  expect(lean.findings, file).toEqual(full.findings);
  expect(lean.lines, file).toBe(full.lines);
  return full.findings.length;
}

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir('ctxvm-lean-')));
afterAll(() => cleanup());

describe('standIn', () => {
  const long = (s: string) => s.padEnd(5000, 'x');
  it('keeps short strings, and what a long one is empty, blank or starts with', () => {
    expect(standIn('')).toBe('');
    expect(standIn('short')).toBe('short');
    expect(standIn(' '.repeat(5000))).toBe(' ');
    expect(standIn(' '.repeat(5000)).trim()).toBe('');
    const tagged = standIn(long('<local-command-stdout>'));
    expect(tagged.startsWith('<local-command-stdout>')).toBe(true);
    expect(tagged.length).toBeLessThan(300);
    const slash = standIn(`${' '.repeat(4000)}/model opus${' '.repeat(2000)}`);
    expect(slash.trim().startsWith('/model')).toBe(true);
    expect(standIn(`${' '.repeat(3000)}x${' '.repeat(3000)}`).trim()).not.toBe('');
  });

  it('drops tool inputs, the toolUseResult side channel and usage, keeps ids and flags', () => {
    const line = {
      type: 'assistant',
      uuid: 'u1',
      toolUseResult: { stdout: 'x'.repeat(10_000) },
      message: { id: 'm1', model: 'claude-x', role: 'assistant', usage: { input_tokens: 3 }, content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }, { type: 'thinking', thinking: 'y'.repeat(9000), signature: 'z'.repeat(900) }] },
    };
    const lean = leanClaudeLine(line) as Record<string, any>;
    expect(lean.toolUseResult).toBeUndefined();
    expect(lean.message.usage).toBeUndefined();
    expect(lean.message.content[0]).toEqual({ type: 'tool_use', id: 't1', name: 'Bash', input: {} });
    expect(lean.message.content[1].signature.length).toBeGreaterThan(0);
    expect(lean.message.content[1].thinking).toBeUndefined();
    expect(lean.uuid).toBeUndefined();
    expect(line.message.content[0]!.input).toEqual({ command: 'ls' }); // the parsed line is left alone
  });
});

describe('lean and full loads find the same', () => {
  it('on long blank, tagged and empty texts, unsigned thinking and unanswered calls', async () => {
    const t = new Transcript();
    t.user([text(' '.repeat(6000))]);
    t.assistant('m1', [thinking('t'.repeat(5000), ''), text('ok')]);
    t.user([text(`<local-command-stdout>${'o'.repeat(5000)}</local-command-stdout>`)]);
    t.assistant('m2', [toolUse('a1', 'Bash', { command: 'x'.repeat(6000) })]);
    t.user([toolResult('a1', 'r'.repeat(7000))]);
    t.assistant('m3', [text('(no content)'), toolUse('a2', 'Read', { file_path: '/f' })]);
    t.user([text('next'), toolResult('a2', ' '.repeat(5000))]);
    t.assistant('m4', [text(' '.repeat(4000))]);
    // the unsigned thinking and the unanswered call at least
    expect(await sameFindings(await writeTranscript(dir, t, 'edge.jsonl'))).toBeGreaterThanOrEqual(2);
  });

  const corpusSkip = corpusSkipReason();
  printSkipReason(corpusSkip);
  it.skipIf(corpusSkip !== undefined)('on every corpus session', async () => {
    for (const file of claudeMainSessions()) await sameFindings(file);
  }, 300_000);

  const genSkip = generatorSkipReason();
  printSkipReason(genSkip);
  it.skipIf(genSkip !== undefined)('on generated sessions with edge cases and compactions', async () => {
    for (const [seed, compactions] of [[3, 0], [5, 2]] as const) {
      await sameFindings(generateClaudeSession(join(dir, `gen-${seed}.jsonl`), { turns: 60, seed, compactions, edgeCases: true, profile: 'mixed-tools' }));
    }
  }, 120_000);
});
