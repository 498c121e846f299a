import { describe, expect, it } from 'vitest';
import { parseInt8, parseNumeric, warmTypes } from './pg-types.js';

describe('PostgreSQL value parsers', () => {
  it('reads int8 as a number when safe, as an exact bigint beyond 2^53', () => {
    expect(parseInt8('0')).toBe(0);
    expect(parseInt8('-42')).toBe(-42);
    expect(parseInt8('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseInt8('9007199254740993')).toBe(9007199254740993n);
    expect(parseInt8('-9223372036854775808')).toBe(-9223372036854775808n);
  });

  it('reads numeric integers like int8 and fractions as floats', () => {
    expect(parseNumeric('12')).toBe(12);
    expect(parseNumeric('123456789012345678901234567890')).toBe(123456789012345678901234567890n);
    expect(parseNumeric('2.5000000000000000')).toBe(2.5);
    expect(parseNumeric('NaN')).toBeNaN();
  });

  it('overrides only int8 and numeric in text format', () => {
    const fallback = (oid: number, format?: string) => `default ${oid} ${format ?? 'text'}`;
    const types = warmTypes(fallback);
    expect(types.getTypeParser(20)).toBe(parseInt8);
    expect(types.getTypeParser(1700, 'text')).toBe(parseNumeric);
    expect(types.getTypeParser(20, 'binary')).toBe('default 20 binary');
    expect(types.getTypeParser(23)).toBe('default 23 text');
  });
});
