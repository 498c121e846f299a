import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { skimJson, SkippedString } from './json-skim.js';

describe('skimJson', () => {
  it('equals JSON.parse when no string is long (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        expect(skimJson(Buffer.from(text), 1 << 30)).toEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  it('skips long strings with their exact byte range, escapes and all', () => {
    const long = 'a"b\\\\c\\"' + 'é'.repeat(3000) + '\\';
    const line = Buffer.from(JSON.stringify({ short: 'x\ty', long, after: [1, 2.5e3, null, true] }));
    const v = skimJson(line, 100) as Record<string, unknown>;
    expect(v.short).toBe('x\ty');
    expect(v.after).toEqual([1, 2500, null, true]);
    const s = v.long as SkippedString;
    expect(s).toBeInstanceOf(SkippedString);
    expect(JSON.parse(`"${line.toString('utf8', s.start, s.end)}"`)).toBe(long);
  });

  it('rejects what JSON.parse rejects structurally', () => {
    for (const bad of ['{"a":1', '{"a" 1}', '[1,]x', '{"a":tru}', '"unterminated', '{"a":01}', '{"a":"\u0001"}', '[1] 2']) {
      expect(() => skimJson(Buffer.from(bad)), bad).toThrow(SyntaxError);
    }
  });
});
