import { describe, expect, it } from 'vitest';
import { idRandomBytes } from './id-random.js';

describe('idRandomBytes', () => {
  it('gives fresh bytes of the length asked for, across pool refills, never the same run twice', () => {
    const seen = new Set<string>();
    // 3 000 x 10 bytes: the 4 KiB pool is refilled several times
    for (let i = 0; i < 3000; i++) {
      const b = idRandomBytes(10);
      expect(b).toHaveLength(10);
      seen.add(b.toString('hex'));
    }
    expect(seen.size).toBe(3000);
  });

  it('hands out copies: changing one does not change the next', () => {
    const a = idRandomBytes(16);
    const before = Buffer.from(a);
    a.fill(0);
    const b = idRandomBytes(16);
    expect(b.equals(Buffer.alloc(16))).toBe(false);
    expect(before.equals(Buffer.alloc(16))).toBe(false);
  });

  it('spreads its bytes evenly (each byte value about as often as any other)', () => {
    const counts = new Array<number>(256).fill(0);
    const n = 256 * 400;
    for (let i = 0; i < n / 64; i++) for (const byte of idRandomBytes(64)) counts[byte]!++;
    // mean 400 per value, standard deviation ~20: a value off by 150 is a broken source
    expect(Math.min(...counts)).toBeGreaterThan(250);
    expect(Math.max(...counts)).toBeLessThan(550);
  });

  it('refuses a size it cannot give', () => {
    expect(() => idRandomBytes(5000)).toThrow(RangeError);
    expect(() => idRandomBytes(-1)).toThrow(RangeError);
    expect(() => idRandomBytes(1.5)).toThrow(RangeError);
  });
});
