import { describe, expect, it } from 'vitest';
import { parseZhNumber } from './date-rules-zh.js';

describe('parseZhNumber', () => {
  it.each<[string, number]>([
    ['0', 0],
    ['15', 15],
    ['零', 0],
    ['〇', 0],
    ['两', 2],
    ['九', 9],
    ['十', 10],
    ['十五', 15],
    ['二十', 20],
    ['二十一', 21],
    ['三十一', 31],
  ])('%s is %i', (text, value) => {
    expect(parseZhNumber(text)).toBe(value);
  });

  it.each(['', '百', '一二', '十十', '二十一二', 'x'])('rejects %j', (text) => {
    expect(parseZhNumber(text)).toBeUndefined();
  });
});
