import { describe, expect, it } from 'vitest';
import { decodeIdList, encodeIdList } from './id-list.js';

describe('id lists', () => {
  it('round-trips any set of safe non-negative integers, sorted and distinct', () => {
    const ids = [0, 1, 2, 127, 128, 129, 16_383, 16_384, 2 ** 31, 2 ** 40 + 7, Number.MAX_SAFE_INTEGER];
    const shuffled = [...ids].reverse().concat([128, 0]);
    expect(decodeIdList(encodeIdList(shuffled), 'test')).toEqual(ids);
    expect(decodeIdList(encodeIdList([]), 'test')).toEqual([]);
    expect(decodeIdList(null, 'test')).toEqual([]);
  });

  it('takes one byte an id when ids are dense', () => {
    const dense = Array.from({ length: 1000 }, (_, i) => 5000 + i * 3);
    expect(encodeIdList(dense).length).toBe(1000 + 1); // the first delta (5000) takes two bytes
  });

  it('refuses ids that are not non-negative safe integers, and damaged lists', () => {
    expect(() => encodeIdList([-1])).toThrow(RangeError);
    expect(() => encodeIdList([1.5])).toThrow(RangeError);
    expect(() => decodeIdList(Buffer.from([0x81]), 'list of snapshot x')).toThrow(/list of snapshot x: damaged object list \(it ends inside a varint\)/);
    expect(() => decodeIdList(Buffer.alloc(10, 0xff), 'list')).toThrow(/longer than 8 bytes/);
  });
});
