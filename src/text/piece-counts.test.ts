import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PieceCounts } from './piece-counts.js';

describe('PieceCounts', () => {
  it('finds a piece by its characters wherever it lies in a text', () => {
    const counts = new PieceCounts(16, 8);
    expect(counts.lookup('xx hello', 2, 8)).toBe(-1);
    counts.remember('xx hello', 2, 8, 3);
    expect(counts.lookup(' hello world', 0, 6)).toBe(3);
    expect(counts.lookup(' hellp', 0, 6)).toBe(-1);
    expect(counts.lookup(' hell', 0, 5)).toBe(-1);
  });

  it('answers as a map would, however often it fills and starts over', () => {
    fc.assert(
      // few letters: pieces are often prefixes of one another, and share hash slots
      fc.property(fc.array(fc.tuple(fc.string({ unit: fc.constantFrom('a', 'b', '\u00e9', '\ud83d'), minLength: 1, maxLength: 6 }), fc.nat(50)), { maxLength: 200 }), (pairs) => {
        // room for a few entries and few characters: both limits are reached
        const counts = new PieceCounts(5, 6);
        const model = new Map<string, number>();
        for (const [piece, count] of pairs) {
          const text = `<${piece}>`;
          const found = counts.lookup(text, 1, text.length - 1);
          if (found >= 0) expect(found).toBe(model.get(piece));
          else {
            counts.remember(text, 1, text.length - 1, model.get(piece) ?? count);
            expect(counts.lookup(text, 1, text.length - 1)).toBe(model.get(piece) ?? count);
          }
          if (!model.has(piece)) model.set(piece, count);
        }
      }),
      { numRuns: 2_000 },
    );
  });
});
