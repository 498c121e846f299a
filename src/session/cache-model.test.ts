/**
 * The prompt-caching cost model, checked against costs worked out by hand from its stated
 * assumptions: every call sends the whole context plus `growth`; the previous call's prompt is
 * cached; the untrimmed prefix is cached at the start only when "warm".
 */
import { describe, expect, it } from 'vitest';
import { cacheScenarios } from './cache-model.js';
import { priceFor } from './pricing.js';

const sonnet = priceFor('claude-sonnet-4-5-20250929');
const usd = (tokens: number, perMTok: number) => (tokens * perMTok) / 1_000_000;

describe('cacheScenarios', () => {
  it('prices Sonnet at 3/15 USD per MTok with 1.25x / 2x cache writes and 0.1x reads; unknown models are flagged', () => {
    expect(sonnet).toMatchObject({ matched: true, input: 3, output: 15, cacheWrite5m: 3.75, cacheWrite1h: 6 });
    expect(sonnet.cacheRead).toBeCloseTo(0.3, 12);
    expect(priceFor('some-local-model').matched).toBe(false);
    // the longest prefix wins
    expect(priceFor('claude-opus-4-1-20250805').input).toBe(15);
    expect(priceFor('claude-opus-4-5-20251101').input).toBe(5);
  });

  it('warm untrimmed cache: the cold start costs write(after) - read(before), each later call saves read(before - after)', () => {
    const before = 100_000;
    const after = 20_000;
    const s = cacheScenarios({ beforeTokens: before, afterTokens: after, growthTokens: 2000, outputTokens: 500, price: sonnet, turns: 10 });
    const warm5m = s.find((x) => x.ttl === '5m' && x.untrimmedCacheWarm)!;
    const coldStart = usd(after, sonnet.cacheWrite5m) - usd(before, sonnet.cacheRead);
    const saving = usd(before - after, sonnet.cacheRead);
    expect(warm5m.coldStartCostUsd).toBeCloseTo(coldStart, 6);
    expect(warm5m.perTurnSavingUsd).toBeCloseTo(saving, 6);
    expect(warm5m.breakEvenTurn).toBe(1 + Math.ceil(coldStart / saving));
    expect(warm5m.cumulativeUsd.untrimmed).toHaveLength(10);
  });

  it('cold untrimmed cache: trimming is cheaper from the first call', () => {
    const s = cacheScenarios({ beforeTokens: 100_000, afterTokens: 20_000, growthTokens: 2000, outputTokens: 500, price: sonnet });
    for (const x of s.filter((y) => !y.untrimmedCacheWarm)) {
      const write = x.ttl === '5m' ? sonnet.cacheWrite5m : sonnet.cacheWrite1h;
      expect(x.coldStartCostUsd).toBeCloseTo(-usd(80_000, write), 6);
      expect(x.breakEvenTurn).toBe(1);
    }
  });

  it('nothing trimmed: no cost, no saving, and a warm cache never pays back', () => {
    const s = cacheScenarios({ beforeTokens: 50_000, afterTokens: 50_000, growthTokens: 1000, outputTokens: 300, price: sonnet, turns: 5 });
    const cold = s.find((x) => x.ttl === '1h' && !x.untrimmedCacheWarm)!;
    expect(cold.coldStartCostUsd).toBe(0);
    expect(cold.cumulativeUsd.trimmed).toEqual(cold.cumulativeUsd.untrimmed);
    const warm = s.find((x) => x.ttl === '1h' && x.untrimmedCacheWarm)!;
    expect(warm.coldStartCostUsd).toBeGreaterThan(0);
    expect(warm.perTurnSavingUsd).toBeCloseTo(0, 9);
    expect(warm.breakEvenTurn).toBeNull();
    expect(warm.hitRate.untrimmed).toBeGreaterThan(warm.hitRate.trimmed);
  });
});
