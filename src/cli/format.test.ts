import { describe, expect, it } from 'vitest';
import { displayWidth, table } from './format.js';

describe('table', () => {
  it('lines up columns holding Chinese text (two terminal columns a character)', () => {
    const t = table(['id', 'title', 'tokens'], [['a', '把周报发给我', '1,035'], ['bb', 'send the report', '17,916']]).split('\n');
    expect(t).toEqual([
      'id  title            tokens',
      '--  ---------------  ------',
      'a   把周报发给我      1,035',
      'bb  send the report  17,916',
    ]);
    // every row ends at the same terminal column
    expect(new Set(t.map(displayWidth)).size).toBe(1);
  });

  it('right-aligns numbers (with short units) and left-aligns text', () => {
    const t = table(['what', 'size'], [['x', '27.3 KiB'], ['yy', '162.6 KiB']]).split('\n');
    expect(t.slice(2)).toEqual(['x      27.3 KiB', 'yy    162.6 KiB']);
  });

  it('counts wide, full-width and combining characters', () => {
    expect(displayWidth('abc')).toBe(3);
    expect(displayWidth('周报')).toBe(4);
    expect(displayWidth('ＡＢ')).toBe(4);
    expect(displayWidth('e\u0301')).toBe(1);
  });
});
