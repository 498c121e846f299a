import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenCounter } from '../../text/tokens.js';
import { createSearchAnalyzer } from '../analyzer.js';
import type { RebuiltContext } from '../context.js';
import { openMemoryStore, type SqlMemoryStore } from '../store/sql-memory-store.js';
import { leadOf } from './compress.js';
import type { RebuildOptions } from './options.js';
import { rebuildContext } from './rebuild.js';

const DAY_MS = 86_400_000;
const T0 = Date.UTC(2024, 4, 6);
const tokens = createTokenCounter();
const analyzer = createSearchAnalyzer();
let dir: string;
let store: SqlMemoryStore;
let clock = T0;

// Events first, feelings and outcomes after: what a memory archive writes.
const MEMORIES = [
  'Bart在学校的绘画比赛中获得优胜奖，感到非常开心。',
  'Bart的宠物狗狗阿拉斯加发烧了，Bart非常焦虑，最后找了兽医治好了它。',
  'Bart在学校和好朋友Jimmy因为抢一本漫画书发生争执，感到非常焦虑，最后Bart率先提出沟通并与Jimmy和好了。',
  'Bart took the kitten to the vet on Friday. He was worried all week, but the vet said it was only a cold and nothing to fear.',
];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ctxvm-memory-leads-'));
  store = await openMemoryStore({ db: join(dir, 'memory.db'), analyzer, now: () => clock });
  for (const [i, text] of MEMORIES.entries()) {
    clock = T0 + i * DAY_MS;
    await store.forUser('bart').setFact({ kind: 'fact', text, importance: 0.5, sourceTurnIds: [`M${i}`] });
  }
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const options = (budgetTokens: number): RebuildOptions => ({ tokens, analyzer, now: T0 + 30 * DAY_MS, timeZone: 'UTC', touch: false, clock: false, budgetTokens });
const memoryItems = (ctx: RebuiltContext) => ctx.layers.find((l) => l.name === 'memories')?.items ?? [];

describe('memories layer: each memory starts as its lead', () => {
  it('cuts a memory to its first sentence or clause, never to a feeling alone', () => {
    expect(leadOf(MEMORIES[0]!)).toBe('Bart在学校的绘画比赛中获得优胜奖');
    expect(leadOf(MEMORIES[1]!)).toBe('Bart的宠物狗狗阿拉斯加发烧了');
    expect(leadOf(MEMORIES[3]!)).toBe('Bart took the kitten to the vet on Friday.');
    // Too short to be worth cutting, or one unit only.
    expect(leadOf('Bart去游泳，很开心。')).toBeUndefined();
    expect(leadOf('Bart moved to Lyon with his parents and his two older sisters last spring.')).toBeUndefined();
  });

  it('fits every memory as its lead where not all fit in full, and shows them in full when they do', async () => {
    const user = store.forUser('bart');
    const roomy = await rebuildContext(user, '焦虑 vet 比赛', options(2000));
    expect(memoryItems(roomy).map((i) => i.compressed ?? false)).toEqual([false, false, false, false]);
    const fullTokens = roomy.tokens;
    let tight: RebuiltContext | undefined;
    for (let budget = fullTokens - 1; budget > 0 && !tight; budget--) {
      const ctx = await rebuildContext(user, '焦虑 vet 比赛', options(budget));
      if (memoryItems(ctx).some((i) => i.compressed)) tight = ctx;
    }
    expect(tight).toBeDefined();
    // Below the full size, the four memories are all still there, some as their leads.
    const items = memoryItems(tight!);
    expect(items).toHaveLength(4);
    for (const item of items.filter((i) => i.compressed)) {
      const text = item.text.slice('05-06 '.length);
      expect(MEMORIES.map((m) => leadOf(m))).toContain(text);
    }
    expect(tight!.tokens).toBeLessThan(fullTokens);
    expect(tight!.tokens).toBe(tokens.count(tight!.text));
  });
});
