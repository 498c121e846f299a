import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isBinaryPackedRefs, parseBinaryPackedRefs, serializeBinaryPackedRefs, type Refs } from './objects-fs-packed-refs.js';

const hash = (n: number) => createHash('sha256').update(String(n)).digest('hex');

function sample(): Refs {
  // ten snapshots of a growing session: each holds the first 60 + 10k objects; a trim holds a few
  const refs: Refs = new Map();
  for (let k = 1; k <= 10; k++) refs.set(`snapshot:${k}`, new Set(Array.from({ length: 60 + 10 * k }, (_, i) => hash(i))));
  refs.set('trim:ä-unicode holder', new Set([hash(3), hash(500)]));
  return refs;
}

describe('binary packed references', () => {
  it('round-trips every holder and hash, each hash stored once', () => {
    const refs = sample();
    const file = serializeBinaryPackedRefs(refs);
    expect(isBinaryPackedRefs(file)).toBe(true);
    expect(parseBinaryPackedRefs(file, '/r/packed.x')).toEqual(refs);
    // 161 distinct hashes at 32 bytes; the 1,152 references take about a byte each
    expect(file.length).toBeGreaterThan(161 * 32);
    expect(file.length).toBeLessThan(161 * 32 + 1152 * 1.2 + 400);
    expect(isBinaryPackedRefs(Buffer.from('"snapshot:1"\tabc\n'))).toBe(false);
  });

  it('drops holders without references and reads an empty file as no references', () => {
    const refs: Refs = new Map([['snapshot:empty', new Set()]]);
    expect(parseBinaryPackedRefs(serializeBinaryPackedRefs(refs), 'p')).toEqual(new Map());
  });

  it('throws on any damage rather than reading fewer references', () => {
    const file = serializeBinaryPackedRefs(sample());
    for (const at of [4, 6, 200, file.length - 20, file.length - 1]) {
      const bad = Buffer.from(file);
      bad[at]! ^= 0x10;
      expect(() => parseBinaryPackedRefs(bad, '/r/packed.x')).toThrow(/\/r\/packed\.x/);
    }
    expect(() => parseBinaryPackedRefs(file.subarray(0, file.length - 9), '/r/packed.x')).toThrow(/damaged packed reference file/);
  });
});
