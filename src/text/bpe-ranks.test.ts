import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { loadO200kRanks } from './bpe-ranks.js';

describe('o200k_base ranks from the tiktoken file', () => {
  const ranks = loadO200kRanks();

  it('gives every token of gpt-tokenizer\'s own table its rank', () => {
    const require = createRequire(import.meta.url);
    const table = (require('gpt-tokenizer/bpeRanks/o200k_base') as { default: readonly (string | readonly number[] | undefined)[] }).default;
    let checked = 0;
    const wrong: number[] = [];
    for (let rank = 0; rank < table.length; rank++) {
      const token = table[rank];
      if (token === undefined) continue;
      const bytes = typeof token === 'string' ? Buffer.from(token, 'utf8').toString('latin1') : String.fromCharCode(...token);
      // inside a longer string too: lookups take a range
      const framed = `\u00ff${bytes}\u00fe`;
      if (ranks.rankOf(framed, 1, framed.length - 1) !== rank) wrong.push(rank);
      checked++;
    }
    expect(wrong.slice(0, 10)).toEqual([]);
    expect(checked).toBeGreaterThan(199_000);
  });

  it('finds no rank for bytes that are not a token', () => {
    for (const s of ['\u00ff\u00fe\u00fd', 'qzxjvqzxjvqzxjv', 'x'.repeat(200), '']) expect(ranks.rankOf(s, 0, s.length)).toBe(-1);
    expect(ranks.pairs[(0xff << 8) | 0xfe]).toBe(-1);
  });
});
