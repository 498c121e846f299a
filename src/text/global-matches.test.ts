import { describe, expect, it } from 'vitest';
import { globalMatches } from './global-matches.js';

const viaMatchAll = (pattern: RegExp, text: string) => [...text.matchAll(pattern)].map((m) => [m.index, m[0], { ...m.groups }]);
const viaHelper = (pattern: RegExp, text: string) => globalMatches(pattern, text).map((m) => [m.index, m[0], { ...m.groups }]);

describe('globalMatches', () => {
  it('finds what matchAll finds, empty matches and astral characters included, and leaves lastIndex at 0', () => {
    const cases: Array<[RegExp, string]> = [
      [/(?<d>\d+)点/gu, '明天3点和下午5点开会'],
      [/x*/g, 'axxb'],
      [/x*/gu, 'a😀xb😀'],
      [/(?:)/gu, '😀😀'],
      [/(?:)/g, '😀'],
      [/\b(?<w>next|this)\s+week\b/giu, 'next week, This week and nextweek'],
      [/[\p{Script=Han}]+/gu, 'abc'],
    ];
    for (const [pattern, text] of cases) {
      pattern.lastIndex = 3;
      expect(viaHelper(pattern, text)).toEqual(viaMatchAll(pattern, text));
      expect(pattern.lastIndex).toBe(0);
    }
  });

  it('refuses a pattern without the g flag, as matchAll does', () => {
    expect(() => globalMatches(/a/, 'aaa')).toThrow(TypeError);
    expect(() => 'aaa'.matchAll(/a/)).toThrow(TypeError);
  });
});
