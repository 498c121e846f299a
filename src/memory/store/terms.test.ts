import { describe, expect, it } from 'vitest';
import { newRecordId } from './ids.js';
import { MAX_QUERY_CHARS, MAX_QUERY_TERMS, queryTerms } from './search.js';
import { analyzeTerms, indexTerms } from './terms.js';

const words = (text: string) => text.split(/\s+/).filter(Boolean);

describe('search terms', () => {
  it('splits analyzer tokens on any whitespace or control character and lower-cases ASCII', () => {
    const analyzer = () => ['New York', 'a\tb\u0000c', 'ÉCOLE', 'C++', '', '　', '周报\u3000会议'];
    expect(analyzeTerms(analyzer, 'ignored')).toEqual(['new', 'york', 'a', 'b', 'c', 'École'.replace('é', 'É'), 'c++', '周报', '会议']);
    expect(indexTerms(analyzer, 'x')).toBe('new york a b c ÉCOLE c++ 周报 会议'.replace('ÉCOLE', 'École'.replace('é', 'É')));
  });

  it('uses the first distinct terms of a query, and at most a bounded prefix of its text', () => {
    const seen: number[] = [];
    const analyzer = (text: string) => {
      seen.push(text.length);
      return words(text);
    };
    expect(queryTerms(analyzer, 'b a b c a')).toEqual(['b', 'a', 'c']);
    expect(queryTerms(analyzer, '')).toEqual([]);
    const many = Array.from({ length: 500 }, (_, i) => `w${i}`).join(' ');
    expect(queryTerms(analyzer, many)).toEqual(Array.from({ length: MAX_QUERY_TERMS }, (_, i) => `w${i}`));
    queryTerms(analyzer, 'x'.repeat(2_000_000));
    expect(seen.at(-1)).toBe(MAX_QUERY_CHARS);
    // a surrogate pair straddling the cut is dropped whole, not split
    queryTerms(analyzer, 'a'.repeat(MAX_QUERY_CHARS - 1) + '😀'.repeat(10));
    expect(seen.at(-1)).toBe(MAX_QUERY_CHARS - 1);
  });

  it('generates prefixed, unique, time-ordered record ids', () => {
    const a = newRecordId('task', 1_000);
    const b = newRecordId('task', 2_000);
    expect(a).toMatch(/^task_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(a < b).toBe(true);
    expect(newRecordId('fact', 0)).toMatch(/^fact_0{10}/);
    const many = new Set(Array.from({ length: 10_000 }, () => newRecordId('decision', 5)));
    expect(many.size).toBe(10_000);
    expect(newRecordId('project', Number.NaN)).toMatch(/^proj_0{10}/);
  });
});
