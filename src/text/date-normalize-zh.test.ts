import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeChineseDates } from './date-normalize-zh.js';
import { resolveDates } from './dates.js';

const OPTIONS = { now: Date.parse('2026-03-11T09:30:00+08:00'), timeZone: 'Asia/Shanghai' } as const;
// Traditional, Cantonese and Simplified date words, and other text, to build sentences from.
const PIECES = ['下週三', '兩小時後', '聽日', '晏晝三點', '禮拜五', '今個月', '廿號', '開會', '記得', '下午', 'and', ' ', '，', '😀', '老王', '國慶節前', '明天'];

describe('normalizeChineseDates', () => {
  it('converts script and Cantonese words', () => {
    expect(normalizeChineseDates('聽日下晝三點開會')).toBe('明天下午三点开会');
    expect(normalizeChineseDates('宜家')).toBe('现在');
    expect(normalizeChineseDates('plain English stays')).toBe('plain English stays');
  });

  it('keeps the length of any text (offsets stay valid)', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme' }), (s) => normalizeChineseDates(s).length === s.length));
    fc.assert(fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 8 }), (parts) => {
      const s = parts.join('');
      return normalizeChineseDates(s).length === s.length;
    }));
  });

  it('mentions found in Traditional text quote the text as written', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 8 }), (parts) => {
        const s = parts.join('');
        for (const m of resolveDates(s, OPTIONS)) expect(s.slice(m.index, m.index + m.text.length)).toBe(m.text);
      }),
      { numRuns: 200 },
    );
  });
});
