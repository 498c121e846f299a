import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { claudeMainSessions, corpusSkipReason, printSkipReason } from '../../test/support/corpus.js';
import { o200kPieceEnd } from './ascii-pieces.js';

const require = createRequire(import.meta.url);
const { O200K_TOKEN_SPLIT_REGEX } = require('gpt-tokenizer/encodingParams/constants') as { O200K_TOKEN_SPLIT_REGEX: RegExp };

/** The pieces as the regex alone gives them. */
function regexPieces(text: string): string[] {
  return text.match(new RegExp(O200K_TOKEN_SPLIT_REGEX.source, O200K_TOKEN_SPLIT_REGEX.flags)) ?? [];
}

/** The pieces as tokens.ts takes them: by hand over ASCII, from the regex elsewhere. */
function mixedPieces(text: string): string[] {
  const regex = new RegExp(O200K_TOKEN_SPLIT_REGEX.source, O200K_TOKEN_SPLIT_REGEX.flags);
  const out: string[] = [];
  for (let at = 0; at < text.length; ) {
    const end = o200kPieceEnd(text, at, regex);
    if (end < 0) throw new Error(`no piece starts at ${at}`);
    out.push(text.slice(at, end));
    at = end;
  }
  return out;
}

// every class the alternatives tell apart, ASCII or not: capitals, small letters, contraction
// letters, digits (and non-ASCII ones), blanks, line breaks, punctuation, slashes, Unicode spaces,
// letters and marks, astral characters and a lone surrogate
const ALPHABET = ['a', 'Z', 'q', 'S', 's', 't', 'l', 'L', 'v', 'e', 'E', 'r', 'd', 'm', "'", "'", ' ', ' ', ' ', '\t', '\r', '\n', '\n', '\v', '\f', '.', ',', '/', '!', '0', '7', '9', 'é', 'É', '\u00a0', '\u3000', '中', '😀', '\u0301', '\ud800', '²', '٣', '\u2028', '\u007f', '\u0000'];

describe('the ASCII pre-tokenizer', () => {
  it('gives the regex\'s pieces on any mix of the classes it tells apart', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...ALPHABET), { maxLength: 60 }), (chars) => {
        const text = chars.join('');
        expect(mixedPieces(text)).toEqual(regexPieces(text));
      }),
      { numRuns: 20_000 },
    );
  });

  it('gives the regex\'s pieces on words, contractions and code', () => {
    for (const text of ["I'm sure they'll say it's DON'T, we've, you'RE", '  leading\n\n  \tindent\r\n', 'x = f(a, b) // note\n\treturn 12345678;', 'ABCdef ABC def! ?? ...\n/path/to/x', ' \n ', ' 1', '   ', "'s", 'end ']) {
      expect(mixedPieces(text)).toEqual(regexPieces(text));
    }
  });

  const skip = corpusSkipReason();
  printSkipReason(skip);
  it.skipIf(skip !== undefined)('gives the regex\'s pieces on the texts of the Claude Code corpus', () => {
    let chars = 0;
    for (const file of claudeMainSessions()) {
      const text = readFileSync(file, 'utf8');
      expect(mixedPieces(text)).toEqual(regexPieces(text));
      chars += text.length;
      if (chars > 8_000_000) break;
    }
    expect(chars).toBeGreaterThan(0);
  });
});
