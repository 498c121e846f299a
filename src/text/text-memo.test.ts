import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTextMemo } from './text-memo.js';
import { createTokenCounter } from './tokens.js';

describe('createTextMemo', () => {
  it('remembers short texts and forgets the oldest first once over its character budget', () => {
    const memo = createTextMemo<number>({ maxTextChars: 4, maxTotalChars: 8 });
    memo.set('aaaa', 1);
    memo.set('bbbb', 2);
    expect([memo.get('aaaa'), memo.get('bbbb'), memo.size]).toEqual([1, 2, 2]);
    memo.set('cc', 3); // 10 chars: the oldest goes
    expect([memo.get('aaaa'), memo.get('bbbb'), memo.get('cc'), memo.size]).toEqual([undefined, 2, 3, 2]);
    memo.set('toolong', 4);
    expect(memo.get('toolong')).toBeUndefined();
    memo.set('cc', 5); // a known text keeps its first value
    expect(memo.get('cc')).toBe(3);
  });

  it('counts the size of values when told how', () => {
    const memo = createTextMemo<string[]>({ maxTextChars: 10, maxTotalChars: 10 }, (v) => v.join('').length);
    memo.set('ab', ['abcd']); // 6
    memo.set('cd', ['cd']); // 4: 10 in all
    expect(memo.size).toBe(2);
    memo.set('e', []); // 11: 'ab' goes
    expect([memo.get('ab'), memo.get('cd'), memo.get('e')]).toEqual([undefined, ['cd'], []]);
  });
});

describe('TokenCounter memo', () => {
  it('gives the same counts with and without it, cold or warm', () => {
    const memo = createTokenCounter();
    const plain = createTokenCounter({ memo: false });
    const scaled = createTokenCounter({ calibration: 1.3, memo: { maxTotalChars: 64 } });
    const scaledPlain = createTokenCounter({ calibration: 1.3, memo: false });
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), fc.integer({ min: 0, max: 40 }), (text, limit) => {
        for (let round = 0; round < 2; round++) {
          expect(memo.count(text)).toBe(plain.count(text));
          expect(scaled.count(text)).toBe(scaledPlain.count(text));
          expect(memo.isWithin(text, limit)).toBe(plain.isWithin(text, limit));
        }
      }),
      { numRuns: 300 },
    );
    expect(() => memo.count(42 as unknown as string)).toThrow(expect.objectContaining({ code: 'E_USAGE' }));
    expect(() => plain.count(42 as unknown as string)).toThrow(expect.objectContaining({ code: 'E_USAGE' }));
  });
});
