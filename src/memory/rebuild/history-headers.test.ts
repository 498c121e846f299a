import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenCounter } from '../../text/tokens.js';
import { createSearchAnalyzer } from '../analyzer.js';
import type { RebuiltContext } from '../context.js';
import { openMemoryStore, type SqlMemoryStore } from '../store/sql-memory-store.js';
import type { RebuildOptions } from './options.js';
import { rebuildContext } from './rebuild.js';

const tokens = createTokenCounter();
const analyzer = createSearchAnalyzer();
// Mon 2024-05-06: two sessions that day; Wed 2024-05-08: one.
const MORNING = Date.UTC(2024, 4, 6, 9, 5);
const EVENING = Date.UTC(2024, 4, 6, 19, 40);
const WEDNESDAY = Date.UTC(2024, 4, 8, 12, 30);
let dir: string;
let store: SqlMemoryStore;

const LONG =
  'The kayak trip is on for the lake next month. The cabin has a wood stove and no internet at all, which my sister says is a feature. ' +
  'Her dog hates water, so that should be interesting to watch from the shore.';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ctxvm-history-headers-'));
  store = await openMemoryStore({ db: join(dir, 'memory.db'), analyzer });
  await store.forUser('dana').addTurns([
    { id: 'a1', role: 'user', speaker: null, text: 'Booked the kayak trip this morning.', atMs: MORNING, sessionId: 's1' },
    { id: 'b1', role: 'user', speaker: null, text: 'Told my sister about the kayak trip tonight.', atMs: EVENING, sessionId: 's2' },
    { id: 'c1', role: 'user', speaker: null, text: LONG, atMs: WEDNESDAY, sessionId: 's3' },
  ]);
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const options = (budgetTokens: number): RebuildOptions => ({
  tokens, analyzer, now: WEDNESDAY + 86_400_000, timeZone: 'UTC', touch: false, clock: false, budgetTokens, neighbourTurns: 0,
  layerShares: { system: 0, profile: 0, project: 0, tasks: 0, memories: 0 },
});
const headers = (ctx: RebuiltContext) => ctx.text.split('\n').filter((l) => l.startsWith('## '));

describe('history layer: session headers and compact lines', () => {
  it('names a session by its day and weekday, with the time only where two sessions share the day', async () => {
    const ctx = await rebuildContext(store.forUser('dana'), 'kayak trip', options(2000));
    expect(headers(ctx)).toEqual(['## 2024-05-06 09:05 Mon', '## 2024-05-06 19:40 Mon', '## 2024-05-08 Wed']);
    expect(ctx.tokens).toBe(tokens.count(ctx.text));
  });

  it('ends a turn cut to its key sentence without a mark, and marks a cut before it', async () => {
    const full = await rebuildContext(store.forUser('dana'), 'kayak trip', options(2000));
    expect(full.text).toContain(`User: ${LONG}`);
    // Too small for the long turn in full: its key sentence (the one naming the query) stays.
    let compact: RebuiltContext | undefined;
    for (let budget = 20; budget <= 120 && !compact; budget += 2) {
      const ctx = await rebuildContext(store.forUser('dana'), 'wood stove dog', options(budget));
      if (ctx.layers.find((l) => l.name === 'history')!.items.some((i) => i.id === 'c1' && i.compressed)) compact = ctx;
    }
    expect(compact).toBeDefined();
    const line = compact!.text.split('\n').find((l) => l.includes('wood stove'))!;
    expect(line).toBe('User: … The cabin has a wood stove and no internet at all, which my sister says is a feature.');
    expect(compact!.tokens).toBeLessThanOrEqual(tokens.count(compact!.text));
  });
});
