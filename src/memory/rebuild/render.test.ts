import { describe, expect, it } from 'vitest';
import { naturalKey, oneLine } from './render.js';

describe('oneLine', () => {
  it('collapses whitespace runs to one space and trims, whatever the whitespace', () => {
    expect(oneLine('a b')).toBe('a b');
    expect(oneLine('  a \n\t b  ')).toBe('a b');
    expect(oneLine('a\u3000b\u00a0c\ufeff')).toBe('a b c');
    expect(oneLine('跟进项目评审 87')).toBe('跟进项目评审 87');
    expect(oneLine('')).toBe('');
    expect(oneLine(' ')).toBe('');
  });

  it('agrees with replace-and-trim on random strings', () => {
    const alphabet = ['a', '中', ' ', ' ', '\n', '\t', '\r', '\u3000', '\u00a0', '\u2028', '\ufeff', '.'];
    let seed = 11;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    for (let n = 0; n < 20_000; n++) {
      let text = '';
      const len = Math.floor(rnd() * 7);
      for (let i = 0; i < len; i++) text += alphabet[Math.floor(rnd() * alphabet.length)];
      expect(oneLine(text), JSON.stringify(text)).toBe(text.replace(/\s+/g, ' ').trim());
    }
  });
});

describe('naturalKey', () => {
  it('pads digit runs so ids sort by their numbers, the same on every call', () => {
    const ids = ['D1:10', 'D1:9', 'D2:1', 'D10:1', 'task_01J7', 'x', 'a007b'];
    const first = ids.map(naturalKey);
    expect(ids.map(naturalKey)).toEqual(first);
    expect([...ids].sort((a, b) => (naturalKey(a) < naturalKey(b) ? -1 : 1))).toEqual(['D1:9', 'D1:10', 'D2:1', 'D10:1', 'a007b', 'task_01J7', 'x']);
    expect(naturalKey('x')).toBe('x');
    expect(naturalKey('a007b')).toBe(`a${'7'.padStart(12, '0')}b`);
  });

  it('gives the same keys after many distinct ids have passed through', () => {
    const before = naturalKey('D3:12');
    for (let i = 0; i < 60_000; i++) naturalKey(`id${i}`);
    expect(naturalKey('D3:12')).toBe(before);
    expect(naturalKey('id59999')).toBe(`id${'59999'.padStart(12, '0')}`);
  });
});
