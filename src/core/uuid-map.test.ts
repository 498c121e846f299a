import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CompactIdMap } from './uuid-map.js';

describe('CompactIdMap', () => {
  it('behaves like a Map for UUIDs and any other keys, through growth and overwrites', () => {
    const map = new CompactIdMap<string | null>();
    const model = new Map<string, string | null>();
    const keys = [...Array.from({ length: 5000 }, () => randomUUID()), 'u1', 'not-a-uuid', randomUUID().toUpperCase(), ''];
    keys.forEach((k, i) => {
      const v = i % 3 === 0 ? null : keys[(i * 7) % keys.length]!;
      map.set(k, v);
      model.set(k, v);
    });
    for (const k of keys.slice(0, 100)) {
      map.set(k, 'again');
      model.set(k, 'again');
    }
    expect(map.size).toBe(model.size);
    for (const [k, v] of model) {
      expect(map.has(k)).toBe(true);
      expect(map.get(k)).toBe(v);
    }
    expect(map.has(randomUUID())).toBe(false);
    expect(map.get('missing')).toBeUndefined();
  });
});
