/**
 * Excerpts of long payloads are read from the ends of the text (stub.ts `excerptOfLong`): they must
 * be exactly what quoting every line gives (`excerptQuotingEveryLine`, the plain way, which
 * shorter texts take).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { excerpt, excerptQuotingEveryLine as eagerExcerpt, type ExcerptShape } from './stub.js';

const piece = fc.constantFrom(
  'ok\n',
  '\n',
  '   \n',
  '            deeply indented line\n',
  'Error: something failed\n',
  'E   assert x == y\n',
  'e lowercase start\n',
  'errorless word\n',
  'an errorX word\n',
  '\u001b[31mfail\u001b[0med red\n',
  '✗ test two\n',
  'x'.repeat(300) + ' error at the end of a long line\n',
  'y'.repeat(158) + 'error\n',
  // a keyword that ends where a long line is cut (at 160): the cut makes its closing boundary
  'y'.repeat(154) + ' errorX more\n',
  'plain text, nothing wrong here\n',
  '中文输出 第二行\n',
);
const longText = fc.oneof(
  fc.array(piece, { minLength: 1, maxLength: 2500 }).map((ps) => {
    let t = ps.join('');
    while (t.length <= 17 * 1024) t = `${t}filler line ${t.length}\n`;
    return t;
  }),
  // long, but few lines worth quoting: head and tail meet
  fc.tuple(fc.array(piece, { minLength: 1, maxLength: 8 }), fc.integer({ min: 17 * 1024, max: 40 * 1024 })).map(([ps, blank]) => ps.map((p, i) => (i === 1 ? `${'\n'.repeat(blank)}${p}` : p)).join('') + '\n'.repeat(ps.length < 2 ? blank : 0)),
);

describe('excerpts of long payloads', () => {
  it('are what quoting every line gives, for every shape and budget', () => {
    fc.assert(
      fc.property(longText, fc.integer({ min: 0, max: 400 }), fc.constantFrom<ExcerptShape>('head', 'tail', 'head-tail'), fc.boolean(), (text, chars, shape, trailing) => {
        const t = trailing ? text : text.trimEnd();
        expect(excerpt(t, chars, shape)).toBe(eagerExcerpt(t, chars, shape));
      }),
      { numRuns: 300 },
    );
  });

  it('find the error line however far down, and quote head and tail of what is left', () => {
    const text = `${'line of output\n'.repeat(5000)}fatal: the build broke\n${'more output\n'.repeat(5000)}`;
    const e = excerpt(text, 120, 'head-tail');
    expect(e).toBe(eagerExcerpt(text, 120, 'head-tail'));
    expect(e.startsWith('fatal: the build broke')).toBe(true);
  });
});
