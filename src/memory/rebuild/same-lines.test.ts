import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenCounter } from '../../text/tokens.js';
import { createSearchAnalyzer } from '../analyzer.js';
import { openMemoryStore, type SqlMemoryStore } from '../store/sql-memory-store.js';
import { rebuildContext } from './rebuild.js';

const DAY_MS = 86_400_000;
const T0 = Date.UTC(2024, 4, 6, 9, 0);
const tokens = createTokenCounter();
const analyzer = createSearchAnalyzer();
let dir: string;
let store: SqlMemoryStore;
let clock = T0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ctxvm-same-lines-'));
  store = await openMemoryStore({ db: join(dir, 'memory.db'), analyzer, now: () => clock });
  const user = store.forUser('bart');
  // One event stored three times on one day (as an import or two extractions can), the same
  // words on another day (a different event), and an unrelated memory.
  for (const source of ['M1', 'M2', 'M3']) await user.setFact({ kind: 'fact', text: 'Bart got a new bicycle from his mother.', importance: 0.5, sourceTurnIds: [source] });
  clock = T0 + 3 * DAY_MS;
  await user.setFact({ kind: 'fact', text: 'Bart got a new bicycle from his mother.', importance: 0.5, sourceTurnIds: ['M4'] });
  await user.setFact({ kind: 'fact', text: 'Lisa planted sunflowers in the garden.', importance: 0.5, sourceTurnIds: ['M5'] });
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('memories layer: records that render as one line', () => {
  it('names the year once, in a heading, and each line its month and day', async () => {
    clock = Date.UTC(2025, 0, 2);
    await store.forUser('ann').setFact({ kind: 'fact', text: 'Ann adopted a kitten.', importance: 0.5, sourceTurnIds: ['A1'] });
    clock = Date.UTC(2025, 6, 9);
    await store.forUser('ann').setFact({ kind: 'fact', text: 'Ann took the kitten to the vet.', importance: 0.5, sourceTurnIds: ['A2'] });
    clock = Date.UTC(2026, 1, 3);
    await store.forUser('ann').setFact({ kind: 'fact', text: 'Ann moved to Lyon.', importance: 0.5, sourceTurnIds: ['A3'] });
    const ctx = await rebuildContext(store.forUser('ann'), 'kitten', { tokens, analyzer, now: Date.UTC(2026, 2, 1), timeZone: 'UTC', touch: false, clock: false });
    expect(ctx.text).toBe('# Other memories\n## 2025\n01-02 Ann adopted a kitten.\n07-09 Ann took the kitten to the vet.\n## 2026\n02-03 Ann moved to Lyon.\n');
    expect(ctx.tokens).toBe(tokens.count(ctx.text));
  });

  it('shows a repeated line once, with every source, and keeps the same words on another day', async () => {
    const ctx = await rebuildContext(store.forUser('bart'), 'bicycle', { tokens, analyzer, now: T0 + 10 * DAY_MS, timeZone: 'UTC', touch: false, clock: false });
    const lines = ctx.text.split('\n').filter((l) => l.includes('bicycle') || l.startsWith('## '));
    expect(lines).toEqual(['## 2024', '05-06 Bart got a new bicycle from his mother.', '05-09 Bart got a new bicycle from his mother.']);
    const items = ctx.layers.find((l) => l.name === 'memories')!.items.filter((i) => i.text.includes('bicycle'));
    expect(items.map((i) => [...i.sources].sort())).toEqual([['M1', 'M2', 'M3'], ['M4']]);
    expect(ctx.text).toContain('Lisa planted sunflowers');
    expect(ctx.tokens).toBe(tokens.count(ctx.text));
  });

  it('dates each line by its own local day in a zone whose offset is not whole quarter hours', async () => {
    // +00:07: 23:50 UTC is 23:57 on Jan 1 there, 23:55 UTC is 00:02 on Jan 2 (one UTC quarter hour)
    clock = Date.UTC(2025, 0, 1, 23, 50);
    await store.forUser('cy').setFact({ kind: 'fact', text: 'Cy booked the ferry.', importance: 0.5, sourceTurnIds: ['C1'] });
    clock = Date.UTC(2025, 0, 1, 23, 55);
    await store.forUser('cy').setFact({ kind: 'fact', text: 'Cy booked the ferry.', importance: 0.5, sourceTurnIds: ['C2'] });
    const ctx = await rebuildContext(store.forUser('cy'), 'ferry', { tokens, analyzer, now: Date.UTC(2025, 1, 1), timeZone: '+00:07', touch: false, clock: false });
    expect(ctx.text.split('\n').filter((l) => l.includes('ferry'))).toEqual(['01-01 Cy booked the ferry.', '01-02 Cy booked the ferry.']);
  });
});
