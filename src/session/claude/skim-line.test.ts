import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { contentRegions } from '../trim/lift.js';
import { describeLine } from './scan.js';
import { skimClaudeBookkeeping, skimClaudeLine } from './skim-line.js';
import type { ClaudeLine } from './types.js';
import { claudeMainSessions, generateClaudeSession, generatorSkipReason } from '../../../test/support/corpus.js';

const root = mkdtempSync(join(tmpdir(), 'ctxvm-skim-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const files = [
  ...claudeMainSessions(),
  ...(generatorSkipReason()
    ? []
    : [
        generateClaudeSession(join(root, 'a.jsonl'), { turns: 30, seed: 51, compactions: 2, edgeCases: true, images: true }),
        generateClaudeSession(join(root, 'b.jsonl'), { turns: 20, seed: 52, compactions: 1, edgeCases: true, profile: 'heavy-tools' }),
      ]),
];

describe.skipIf(files.length === 0)('the pass-1 skimmer', () => {
  it('indexes every line as describeLine(JSON.parse(line)) does (payload sizes never smaller)', () => {
    let lines = 0;
    for (const file of files) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((text, i) => {
          if (!text.trim()) return;
          const bytes = Buffer.from(text);
          const parsed = JSON.parse(text) as ClaudeLine;
          if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return;
          const exact = describeLine(parsed, i + 1, 0, bytes.length);
          const skimmed = describeLine(skimClaudeLine(bytes)!, i + 1, 0, bytes.length);
          const where = `${file}:${i + 1}`;
          expect(skimmed.payloadChars, where).toBeGreaterThanOrEqual(exact.payloadChars);
          expect({ ...skimmed, payloadChars: 0 }, where).toEqual({ ...exact, payloadChars: 0 });
          const book = skimClaudeBookkeeping(bytes)!;
          expect({ type: book.type, uuid: book.uuid, parentUuid: book.parentUuid }, where).toEqual({ type: parsed.type, uuid: parsed.uuid, parentUuid: parsed.parentUuid });
          expect(book.toolUseIds, where).toEqual(exact.toolUses.map((u) => u.id));
          expect(book.regions, where).toEqual(contentRegions(bytes));
          lines++;
        });
    }
    expect(lines).toBeGreaterThan(100);
  });

  it('leaves non-objects to JSON.parse and rejects broken structure', () => {
    expect(skimClaudeLine(Buffer.from('[1,2]'))).toBeUndefined();
    expect(skimClaudeBookkeeping(Buffer.from(' "x"'))).toBeUndefined();
    expect(() => skimClaudeLine(Buffer.from('{"type":"user","message":{"role":'))).toThrow(SyntaxError);
    expect(() => skimClaudeBookkeeping(Buffer.from('{"type":"user"} x'))).toThrow(SyntaxError);
  });
});
