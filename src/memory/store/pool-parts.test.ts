import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MemoryKind } from '../model.js';
import type { PendingTouch } from './access.js';
import { keepFirst, mostRecent } from './pool-parts.js';

describe('keepFirst', () => {
  it('keeps the n first items of a sort, in any order (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -50, max: 50 })), fc.integer({ min: 1, max: 60 }), (xs, n) => {
        const list = [...xs];
        keepFirst(list, n, (a, b) => a - b);
        expect(list.sort((a, b) => a - b)).toEqual([...xs].sort((a, b) => a - b).slice(0, n));
      }),
    );
  });
});

describe('mostRecent', () => {
  it('gives the n latest pending touches of each kind asked, ties by id (property)', () => {
    const touch = fc.record({ kind: fc.constantFrom<MemoryKind>('task', 'fact', 'decision', 'project'), id: fc.string({ minLength: 1, maxLength: 3 }), lastMs: fc.integer({ min: 0, max: 5 }) });
    fc.assert(
      fc.property(fc.array(touch, { maxLength: 40 }), fc.integer({ min: 1, max: 8 }), (touches, n) => {
        const pending = new Map<string, PendingTouch>();
        for (const t of touches) pending.set(`${t.kind}:${t.id}`, { ...t, count: 1 });
        const kinds: MemoryKind[] = ['fact', 'decision'];
        const expected = kinds.flatMap((kind) =>
          [...pending.values()]
            .filter((p) => p.kind === kind)
            .sort((a, b) => b.lastMs - a.lastMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
            .slice(0, n)
            .map((p) => `${kind}:${p.id}`),
        );
        // (ids of two kinds may be equal strings: compare the picks kind by kind)
        const got = kinds.flatMap((kind) => mostRecent(pending, [kind], n).map((id) => `${kind}:${id}`));
        expect(got.sort()).toEqual(expected.sort());
      }),
    );
  });
});
