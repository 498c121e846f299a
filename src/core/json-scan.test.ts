import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keyText, parseSlice, scanArray, scanObject, skipValue } from './json-scan.js';

describe('structural JSON scanning', () => {
  it('finds every member of an object and every element of an array as JSON.parse sees them (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (obj) => {
        const b = Buffer.from(JSON.stringify(obj, null, Math.random() < 0.5 ? 1 : undefined));
        // Entries, not an object: a key such as "__proto__" must stay a plain member.
        const seen: [string, unknown][] = [];
        expect(scanObject(b, 0, b.length, (m) => void seen.push([keyText(b, m), parseSlice(b, m.valueStart, m.valueEnd)]))).toBe(b.length);
        expect(seen).toEqual(Object.entries(JSON.parse(b.toString('utf8'))));
        const arr = Buffer.from(JSON.stringify(Object.values(obj)));
        const items: unknown[] = [];
        expect(scanArray(arr, 0, arr.length, (s, e) => items.push(parseSlice(arr, s, e)))).toBe(arr.length);
        expect(items).toEqual(JSON.parse(arr.toString('utf8')));
      }),
      { numRuns: 300, examples: [[{ ['__proto__']: [] }], [JSON.parse('{"__proto__":{"a":1},"b":2}') as Record<string, unknown>]] },
    );
  });

  it('skips long strings with escapes to their real end', () => {
    const b = Buffer.from(JSON.stringify({ s: 'a\\"b\\\\' + 'x'.repeat(5000) + '\\', n: 1 }));
    const keys: string[] = [];
    expect(scanObject(b, 0, b.length, (m) => void keys.push(keyText(b, m)))).toBe(b.length);
    expect(keys).toEqual(['s', 'n']);
    expect(skipValue(b, 0, b.length)).toBe(b.length);
  });

  it('rejects broken structure', () => {
    for (const bad of ['{"a":1', '{"a" 1}', '{"a":[1,2}', '{"a":"x}', '{"a":tru}', '{"a":{"b":1]}', '{a:1}', '{"a":1,}x']) {
      const b = Buffer.from(bad);
      expect(scanObject(b, 0, b.length, () => {}), bad).toBe(-1);
    }
  });
});
