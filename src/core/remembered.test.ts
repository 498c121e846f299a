import { describe, expect, it } from 'vitest';
import { remembered } from './remembered.js';

describe('remembered', () => {
  it('computes a key once, and empties the memo when it is full', () => {
    const memo = new Map<string, number>();
    let calls = 0;
    const length = (s: string) => (calls++, s.length);
    expect(remembered(memo, 'abc', 2, length)).toBe(3);
    expect(remembered(memo, 'abc', 2, length)).toBe(3);
    expect(calls).toBe(1);
    remembered(memo, 'de', 2, length);
    expect(memo.size).toBe(2);
    expect(remembered(memo, 'f', 2, length)).toBe(1); // full: emptied, then 'f' kept
    expect([...memo.keys()]).toEqual(['f']);
    expect(calls).toBe(3);
  });
});
