import { describe, expect, it } from 'vitest';
import { idList, placeholders } from './rows.js';

/** What idList returned before its fast path: the parser's strings, [] for anything else. */
function parsed(v: string): string[] {
  try {
    const x: unknown = JSON.parse(v);
    return Array.isArray(x) ? x.filter((s): s is string => typeof s === 'string') : [];
  } catch {
    return [];
  }
}

describe('idList', () => {
  it('reads what JSON.stringify wrote, and agrees with JSON.parse on everything else', () => {
    const lists = [[], ['a'], [''], ['b0', 'b1'], ['turn "quoted"'], ['a","b'], ['back\\slash'], ['tab\there', 'new\nline'], ['中文', '😀'], ['x', '', 'y']];
    for (const ids of lists) expect(idList(JSON.stringify(ids))).toEqual(ids);
    const odd = ['["a", "b"]', '[ "a" ]', '["a"],["b"]', '["]', '[""', '["a"', '"a"', '["a",1,"b"]', '[1]', '{"a":1}', 'null', '[', '["a""b"]', '["a\u0001"]', 'not json'];
    for (const v of odd) expect(idList(v)).toEqual(parsed(v));
    expect(idList(null)).toEqual([]);
    expect(idList('')).toEqual([]);
  });

  it('agrees with JSON.parse on random short strings over its special characters', () => {
    const alphabet = ['[', ']', '"', ',', 'a', 'b', ' ', '\\', '\n', '中'];
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    for (let n = 0; n < 20_000; n++) {
      let v = '["';
      const len = Math.floor(rnd() * 8);
      for (let i = 0; i < len; i++) v += alphabet[Math.floor(rnd() * alphabet.length)];
      v += rnd() < 0.8 ? '"]' : ']';
      expect(idList(v), v).toEqual(parsed(v));
    }
  });
});

describe('placeholders', () => {
  it('lists n question marks', () => {
    expect(placeholders(0)).toBe('');
    expect(placeholders(1)).toBe('?');
    expect(placeholders(3)).toBe('?, ?, ?');
    expect(placeholders(3)).toBe('?, ?, ?');
    expect(placeholders(1500).split(', ')).toHaveLength(1500);
  });
});
