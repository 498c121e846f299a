import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { useTempMemoryStore } from './store-test-kit.js';

const temp = useTempMemoryStore('ctxvm-turns-');

describe('turnNeighbourhoods', () => {
  it('gives each turn the neighbourhood turnNeighbours gives it, whatever the gaps between the turns asked for (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        // instants with ties (then creation order decides), ids asked for with repeats and unknowns
        fc.array(fc.integer({ min: 0, max: 12 }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.integer({ min: 0, max: 45 }), { maxLength: 15 }),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 0, max: 4 }),
        async (instants, asked, before, after) => {
          const u = temp.store.forUser(`u${Math.random().toString(36).slice(2)}`);
          await u.addTurns(instants.map((t, i) => ({ id: `t${i}`, role: 'user', speaker: null, text: `turn ${i}`, atMs: 1_000 + t, sessionId: null })));
          const ids = asked.map((i) => `t${i}`);
          const many = await u.turnNeighbourhoods!(ids, before, after);
          const known = [...new Set(ids)].filter((id) => Number(id.slice(1)) < instants.length);
          expect([...many.keys()].sort()).toEqual(known.sort());
          for (const id of known) expect(many.get(id)).toEqual(await u.turnNeighbours(id, before, after));
        },
      ),
      { numRuns: 150 },
    );
  });
});
