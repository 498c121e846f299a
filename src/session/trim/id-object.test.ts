import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { deriveUuidBytes, uuidBytes } from '../../core/derived-uuid.js';
import { decodeIdObject, encodeIdObject, type IdSource } from './id-object.js';

/** A branch of `n` source uuids: its derived uuids, interleaved with kept ones (not derived). */
function branchOf(n: number) {
  const seed = uuidBytes(randomUUID())!;
  const bySource = new Map<string, Buffer>();
  const entries: Buffer[] = [];
  const sources: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const s = uuidBytes(randomUUID())!;
    const d = deriveUuidBytes(seed, s);
    bySource.set(d.toString('hex'), s);
    sources.push(s);
    entries.push(d, i % 3 === 0 ? randomBytes(16) : d);
  }
  const source: IdSource = { seed, sourceOf: (u) => bySource.get(u.toString('hex')) };
  return { list: Buffer.concat(entries), source, sources };
}

describe('id objects', () => {
  it('round-trip every count of entries, and name derived uuids by their sources', () => {
    for (const n of [1, 2, 7, 8, 9, 40, 41, 300]) {
      const { list, source, sources } = branchOf(n);
      const stored = encodeIdObject(list, source);
      expect(stored.length % 16).not.toBe(0);
      expect(stored.includes(sources[0]!)).toBe(true);
      expect(stored.includes(list.subarray(0, 16))).toBe(false);
      expect(decodeIdObject(stored, 'h').equals(list)).toBe(true);
    }
  });

  it('store a plain list as it is without a source, or when nothing derives from it', () => {
    const { list, source } = branchOf(5);
    expect(encodeIdObject(list, undefined)).toBe(list);
    const unrelated = randomBytes(16 * 20);
    expect(encodeIdObject(unrelated, source)).toBe(unrelated);
    expect(decodeIdObject(unrelated, 'h')).toBe(unrelated);
  });

  it('never names an entry by a source it does not derive from (a wrong map loses nothing)', () => {
    const { list, source } = branchOf(10);
    const lying: IdSource = { seed: source.seed, sourceOf: (u) => source.sourceOf(u) ?? uuidBytes(randomUUID()) };
    expect(decodeIdObject(encodeIdObject(list, lying), 'h').equals(list)).toBe(true);
  });

  it('refuse a damaged object with an integrity error', () => {
    const { list, source } = branchOf(10);
    const stored = encodeIdObject(list, source);
    expect(() => decodeIdObject(stored.subarray(0, stored.length - 3), 'abc')).toThrow(/id object abc: .* do not fit/);
    const noMagic = Buffer.from(stored);
    noMagic[0] = 0x41;
    expect(() => decodeIdObject(noMagic, 'abc')).toThrow(/neither a list/);
  });
});
