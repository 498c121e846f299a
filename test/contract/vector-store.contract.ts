/**
 * Conformance suite for `VectorStore` drivers (SQLite with sqlite-vec, PostgreSQL). A driver's
 * test file runs it in a few lines: `vectorStoreContract('sqlite', async () => ({ store, cleanup }))`.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { VectorStore } from '../../src/memory/semantic/vector-store.js';
import { unit } from '../../src/text/embed.js';

export interface VectorStoreHarness {
  store: VectorStore;
  cleanup(): Promise<void>;
}

const v = (...xs: number[]) => unit(xs);

export function vectorStoreContract(name: string, factory: () => Promise<VectorStoreHarness>): void {
  describe(`VectorStore contract: ${name}`, () => {
    let h: VectorStoreHarness;
    beforeEach(async () => {
      h = await factory();
    });
    afterEach(async () => {
      await h.cleanup();
    });

    it('returns the nearest vectors best first, with cosine similarity as the score', async () => {
      await h.store.put('u1', 'm', [
        { kind: 'turn', id: 't1', vector: v(1, 0, 0) },
        { kind: 'turn', id: 't2', vector: v(0, 1, 0) },
        { kind: 'fact', id: 'f1', vector: v(1, 1, 0) },
      ]);
      const hits = await h.store.nearest('u1', v(1, 0.2, 0), { model: 'm' });
      expect(hits.map((x) => x.id)).toEqual(['t1', 'f1', 't2']);
      expect(hits[0]!.score).toBeCloseTo(1 / Math.sqrt(1.04), 4);
      expect(hits[0]!.kind).toBe('turn');
    });

    it('filters by kind and model, and honours the limit', async () => {
      await h.store.put('u1', 'm', [
        { kind: 'turn', id: 't1', vector: v(1, 0) },
        { kind: 'fact', id: 'f1', vector: v(1, 0) },
        { kind: 'task', id: 'k1', vector: v(0.9, 0.1) },
      ]);
      await h.store.put('u1', 'other-model', [{ kind: 'fact', id: 'f9', vector: v(1, 0) }]);
      expect((await h.store.nearest('u1', v(1, 0), { model: 'm', kinds: ['fact', 'task'] })).map((x) => x.id)).toEqual(['f1', 'k1']);
      expect((await h.store.nearest('u1', v(1, 0), { model: 'm', limit: 1 })).length).toBe(1);
      expect((await h.store.nearest('u1', v(1, 0), { model: 'other-model' })).map((x) => x.id)).toEqual(['f9']);
      // a vector of another length (another model's) is never compared
      expect(await h.store.nearest('u1', v(1, 0, 0), { model: 'm' })).toEqual([]);
    });

    it('replaces the vector of the same record', async () => {
      await h.store.put('u1', 'm', [{ kind: 'fact', id: 'f1', vector: v(1, 0) }]);
      await h.store.put('u1', 'm', [{ kind: 'fact', id: 'f1', vector: v(0, 1) }]);
      const hits = await h.store.nearest('u1', v(0, 1), { model: 'm' });
      expect(hits).toHaveLength(1);
      expect(hits[0]!.score).toBeCloseTo(1, 5);
    });

    it('removes one record or all of a user', async () => {
      await h.store.put('u1', 'm', [
        { kind: 'fact', id: 'f1', vector: v(1, 0) },
        { kind: 'fact', id: 'f2', vector: v(0, 1) },
      ]);
      await h.store.put('u2', 'm', [{ kind: 'fact', id: 'f1', vector: v(1, 0) }]);
      await h.store.remove('u1', { kind: 'fact', ids: ['f1'] });
      expect((await h.store.nearest('u1', v(1, 0), { model: 'm' })).map((x) => x.id)).toEqual(['f2']);
      await h.store.remove('u1');
      expect(await h.store.nearest('u1', v(1, 0), { model: 'm' })).toEqual([]);
      expect((await h.store.nearest('u2', v(1, 0), { model: 'm' })).map((x) => x.id)).toEqual(['f1']);
    });

    it('writes a batch atomically: a bad item leaves none of it', async () => {
      const bad = new Float32Array(0);
      await expect(
        h.store.put('u1', 'm', [
          { kind: 'fact', id: 'f1', vector: v(1, 0) },
          { kind: 'fact', id: 'f2', vector: bad },
          // @ts-expect-error a missing id violates NOT NULL
          { kind: 'fact', id: null, vector: v(0, 1) },
        ]),
      ).rejects.toThrow();
      expect(await h.store.nearest('u1', v(1, 0), { model: 'm' })).toEqual([]);
    });

    it('never returns another user\'s vectors (property)', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ user: fc.constantFrom('a', 'b', 'c'), id: fc.constantFrom('x', 'y', 'z'), x: fc.float({ min: -1, max: 1, noNaN: true }), y: fc.float({ min: -1, max: 1, noNaN: true }) }), { maxLength: 12 }),
          fc.constantFrom('a', 'b', 'c'),
          async (rows, asker) => {
            await h.store.remove('a');
            await h.store.remove('b');
            await h.store.remove('c');
            const owned = new Map<string, Set<string>>();
            for (const r of rows) {
              await h.store.put(r.user, 'm', [{ kind: 'turn', id: r.id, vector: v(r.x, r.y, 0.5) }]);
              (owned.get(r.user) ?? owned.set(r.user, new Set()).get(r.user)!).add(r.id);
            }
            const hits = await h.store.nearest(asker, v(1, 1, 0.5), { model: 'm', limit: 10 });
            expect(new Set(hits.map((x) => x.id))).toEqual(owned.get(asker) ?? new Set());
          },
        ),
        { numRuns: 25 },
      );
    });
  });
}
