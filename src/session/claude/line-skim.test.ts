/**
 * The pass-1 skimmer (line-skim.ts) against JSON.parse: on every line of the corpus and of
 * generated sessions, the index record and the lean view it gives are those of the parsed line.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { leanClaudeLine } from './lean-line.js';
import { skimClaudeForTrim } from './line-skim.js';
import { describeLine } from './scan.js';
import type { ClaudeLine } from './types.js';
import { Transcript, text, thinking, toolResult, toolUse, writeTranscript } from '../../../test/support/claude-transcript.js';
import { claudeMainSessions, generateClaudeSession, generatorSkipReason } from '../../../test/support/corpus.js';

const root = mkdtempSync(join(tmpdir(), 'ctxvm-skim-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Checks every JSON object line of `file`; returns how many. */
function checkFile(file: string): number {
  let lines = 0;
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return;
      const bytes = Buffer.from(line);
      const parsed = JSON.parse(line) as ClaudeLine;
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
        expect(skimClaudeForTrim(bytes)).toBeUndefined();
        return;
      }
      const where = `${file}:${i + 1}`;
      const skeleton = skimClaudeForTrim(bytes, true)!;
      const exact = describeLine(parsed, i + 1, 0, bytes.length);
      const skimmed = describeLine(skeleton, i + 1, 0, bytes.length);
      expect(skimmed.payloadChars, where).toBeGreaterThanOrEqual(exact.payloadChars);
      expect({ ...skimmed, payloadChars: 0 }, where).toEqual({ ...exact, payloadChars: 0 });
      expect(leanClaudeLine(skeleton as Record<string, unknown>, bytes), where).toEqual(leanClaudeLine(parsed as Record<string, unknown>));
      for (const key of ['sessionId', 'cwd', 'version'] as const) expect(skeleton[key], where).toEqual(parsed[key]);
      lines++;
    });
  return lines;
}

describe('the pass-1 skimmer', () => {
  it('reads hand-built lines as JSON.parse does: long, escaped, empty and odd values', async () => {
    const t = new Transcript();
    t.user([text(`say "hi" ${'é'.repeat(400)}\n${'x'.repeat(3000)}`)]);
    t.assistant('m1', [thinking('t'.repeat(5000), 's'.repeat(600)), text(''), toolUse('a1', 'Bash', { command: `echo "${'y'.repeat(500)}"`, nested: { deep: ['z'.repeat(900)] }, n: 1.5e3 })]);
    t.user([toolResult('a1', [{ type: 'text', text: 'r'.repeat(7000) }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'A'.repeat(5000) } }])]);
    t.assistant('m2', [toolUse('a2', 'Read', { file_path: `/a/${'d'.repeat(400)}.ts` })]);
    t.user([toolResult('a2', ' '.repeat(5000))]);
    t.user('a plain string content '.repeat(40));
    const file = await writeTranscript(root, t, 'hand.jsonl');
    expect(checkFile(file)).toBeGreaterThanOrEqual(6);
  });

  const files = [
    ...claudeMainSessions(),
    ...(generatorSkipReason()
      ? []
      : [
          generateClaudeSession(join(root, 'a.jsonl'), { turns: 30, seed: 51, compactions: 2, edgeCases: true, images: true }),
          generateClaudeSession(join(root, 'b.jsonl'), { turns: 20, seed: 52, compactions: 1, edgeCases: true, profile: 'heavy-tools' }),
        ]),
  ];
  it.skipIf(files.length === 0)('reads every corpus and generated line as JSON.parse does (payload sizes never smaller)', () => {
    let lines = 0;
    for (const file of files) lines += checkFile(file);
    expect(lines).toBeGreaterThan(100);
  }, 120_000);

  it('leaves non-objects to JSON.parse and rejects broken structure', () => {
    expect(skimClaudeForTrim(Buffer.from('[1,2]'))).toBeUndefined();
    expect(skimClaudeForTrim(Buffer.from(' "x"'))).toBeUndefined();
    for (const bad of ['{"type":"user","message":{"role":', '{"type":"user"} x', '{"a":tru}', '{"a":1,}', '{"a" 1}', '{"type":"\\q"}', '{"a":[1 2]}', '{"toolUseResult":{"x":1,,}}']) {
      expect(() => skimClaudeForTrim(Buffer.from(bad)), bad).toThrow(SyntaxError);
    }
  });

  it('keeps "__proto__" an own property, as JSON.parse does', () => {
    const line = '{"type":"user","message":{"role":"user","content":[{"type":"text","text":"x","__proto__":{"polluted":1}}]},"__proto__":{"y":2}}';
    const skeleton = skimClaudeForTrim(Buffer.from(line))!;
    const block = (skeleton.message!.content as Record<string, unknown>[])[0]!;
    expect(Object.getPrototypeOf(block)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(block, '__proto__')).toBe(true);
  });
});
