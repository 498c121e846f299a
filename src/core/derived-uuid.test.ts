import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { deriveUuidBytes, uuidBytes, uuidDeriver, uuidText } from './derived-uuid.js';

describe('derived uuids', () => {
  it('are canonical v4 uuids, stable for a seed and source, different across seeds and sources', () => {
    const seed = randomUUID();
    const derive = uuidDeriver(seed, () => 'fallback');
    const sources = Array.from({ length: 200 }, () => randomUUID());
    const derived = sources.map((s) => derive(s));
    for (const d of derived) expect(d).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(derived).size).toBe(sources.length);
    expect(sources.map((s) => derive(s))).toEqual(derived);
    const other = uuidDeriver(randomUUID(), () => 'fallback');
    expect(sources.map((s) => other(s)).filter((d, i) => d === derived[i])).toEqual([]);
    expect(derived.filter((d, i) => d === sources[i])).toEqual([]);
  });

  it('fall back for a source that is not a canonical uuid, and round-trip text and bytes', () => {
    const derive = uuidDeriver(randomUUID(), () => 'fallback');
    expect(derive('ABCDEF00-0000-4000-8000-000000000000')).toBe('fallback');
    expect(derive(undefined)).toBe('fallback');
    const u = randomUUID();
    expect(uuidText(uuidBytes(u)!)).toBe(u);
    expect(uuidText(deriveUuidBytes(uuidBytes(u)!, uuidBytes(u)!))).toBe(uuidDeriver(u, () => '')(u));
  });
});
