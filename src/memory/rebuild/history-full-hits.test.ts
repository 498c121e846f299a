import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenCounter } from '../../text/tokens.js';
import { createSearchAnalyzer } from '../analyzer.js';
import type { RebuiltContext } from '../context.js';
import { openMemoryStore, type SqlMemoryStore } from '../store/sql-memory-store.js';
import { rebuildContext } from './rebuild.js';
import type { RebuildOptions } from './options.js';

const T0 = Date.UTC(2024, 4, 6, 9, 0);
const tokens = createTokenCounter();
const analyzer = createSearchAnalyzer();
let dir: string;
let store: SqlMemoryStore;

// Three long turns about one trip, far apart (no turn is another's neighbour), each with one
// sentence the query names and others it does not.
const TURNS = [
  'We finally booked the kayak trip for the lake. The cabin has a wood stove and no internet at all. My sister will bring her dog, who hates water, so that should be interesting to watch.',
  'Bought a new paddle for the kayak trip today. The shop also had hiking boots on sale, but I resisted. Then I spent the evening fixing the bike lights that broke last winter.',
  'The kayak trip got moved to the first weekend of June. Work has been hectic with the quarterly review coming up, and the printer on our floor jammed twice this morning.',
];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ctxvm-full-hits-'));
  store = await openMemoryStore({ db: join(dir, 'memory.db'), analyzer });
  const filler = (i: number) => ({ id: `f${i}`, role: 'assistant' as const, speaker: null, text: `Noted, item ${i}.`, atMs: T0 + i * 60_000, sessionId: null });
  const turns = [];
  for (let i = 0; i < 30; i++) turns.push(filler(i));
  for (const [k, text] of TURNS.entries()) turns.push({ id: `k${k}`, role: 'user' as const, speaker: null, text, atMs: T0 + (100 + k * 50) * 60_000, sessionId: null });
  await store.forUser('dana').addTurns(turns);
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const hitsIn = (ctx: RebuiltContext) => ctx.layers.find((l) => l.name === 'history')!.items.filter((i) => i.id.startsWith('k'));

describe('history layer: hits that start in full', () => {
  it('fits at least as many distinct hits with one full hit (the default) as with three, and more at some budget', async () => {
    const opts = (budgetTokens: number, extra: Partial<RebuildOptions> = {}): RebuildOptions => ({
      tokens, analyzer, now: T0 + 86_400_000, timeZone: 'UTC', touch: false, clock: false, budgetTokens, neighbourTurns: 0,
      layerShares: { system: 0, profile: 0, project: 0, tasks: 0, memories: 0 }, ...extra,
    });
    const user = store.forUser('dana');
    let moreSomewhere = false;
    for (let budget = 40; budget <= 200; budget += 4) {
      const one = hitsIn(await rebuildContext(user, 'kayak trip', opts(budget)));
      const three = hitsIn(await rebuildContext(user, 'kayak trip', opts(budget, { history: { fullHits: 3 } })));
      expect(one.length).toBeGreaterThanOrEqual(three.length);
      if (one.length > three.length) moreSomewhere = true;
      // Whatever is compressed still carries the sentence the query names.
      for (const item of one.filter((i) => i.compressed)) expect(item.text.toLowerCase()).toContain('kayak trip');
    }
    expect(moreSomewhere).toBe(true);
  });
});
