/** A piece of many megabytes without a split point is counted in bounded memory, nearly exactly. */
import { describe, expect, it } from 'vitest';
import { loadO200kCounter } from './bpe.js';
import { LONG_PIECE_CHARS, LONG_PIECE_SLICE_CHARS, createTokenCounter } from './tokens.js';

/** Letters without a repeating period, so no two slices are alike. */
function varied(length: number): string {
  let s = '';
  let x = 12345;
  while (s.length < length) {
    x = (x * 1103515245 + 12345) % 2147483648;
    s += String.fromCharCode(97 + (x % 26));
  }
  return s;
}

describe('long pre-tokenizer pieces', () => {
  it('counts a varied piece over the limit within two tokens a slice of the whole-piece merge', () => {
    const piece = varied(LONG_PIECE_CHARS + 3001);
    const exact = loadO200kCounter().countPiece(piece);
    const sliced = createTokenCounter({ memo: false }).count(piece);
    expect(Math.abs(sliced - exact)).toBeLessThanOrEqual(2 * Math.ceil(piece.length / LONG_PIECE_SLICE_CHARS));
    expect(Math.abs(sliced - exact) / exact).toBeLessThan(0.01);
  });

  it('counts a 64 MiB run of one letter exactly (the whole-piece merge would need gigabytes)', () => {
    const n = 64 * 1024 * 1024;
    // o200k_base's longest run of x is 8 characters, and n is a multiple of 8
    expect(loadO200kCounter().countPiece('x'.repeat(4096))).toBe(512);
    expect(createTokenCounter({ memo: false }).count('x'.repeat(n))).toBe(n / 8);
  });
});
