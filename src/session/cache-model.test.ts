/**
 * The prompt-caching cost model, checked against costs worked out by hand from its stated
 * assumptions: every call sends the whole context plus `growth`; the previous call's prompt is
 * cached; the untrimmed prefix is cached at the start only when "warm".
 */
import { describe, expect, it } from 'vitest';
import { cacheScenarios, trimEconomics } from './cache-model.js';
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

describe('trimEconomics (closed form of the warm-cache case)', () => {
  // Sonnet 5m: write 3.75, read 0.30 USD/MTok. 100k → 20k tokens: the first call writes 20k
  // (0.075) instead of reading 100k (0.030), 0.045 more; each later call reads 80k fewer (0.024
  // less). Cumulative difference: +0.045, +0.021, -0.003 -> the third call.
  it('breaks even on the call where cumulative savings cover the cache write: 100k → 20k on Sonnet', () => {
    const e = trimEconomics({ beforeTokens: 100_000, afterTokens: 20_000, price: sonnet, ttl: '5m' });
    expect(e.cacheWriteUsd).toBeCloseTo(0.075, 9);
    expect(e.firstCallExtraUsd).toBeCloseTo(0.045, 9);
    expect(e.perTurnSavingUsd).toBeCloseTo(0.024, 9);
    expect(e.breakEvenTurn).toBe(3);
  });

  it('prices the 1-hour cache write at 2x input: 0.120 for 20k tokens, break-even on call 5', () => {
    // extra 0.120 - 0.030 = 0.090, then -0.024 a call: +0.066, +0.042, +0.018, -0.006
    const e = trimEconomics({ beforeTokens: 100_000, afterTokens: 20_000, price: sonnet, ttl: '1h' });
    expect(e.cacheWriteUsd).toBeCloseTo(0.12, 9);
    expect(e.breakEvenTurn).toBe(5);
  });

  it('never breaks even when nothing is removed, or when the trim grew the context', () => {
    expect(trimEconomics({ beforeTokens: 50_000, afterTokens: 50_000, price: sonnet, ttl: '5m' })).toMatchObject({ perTurnSavingUsd: 0, breakEvenTurn: null });
    const grew = trimEconomics({ beforeTokens: 50_000, afterTokens: 50_100, price: sonnet, ttl: '5m' });
    expect(grew.perTurnSavingUsd).toBeLessThan(0);
    expect(grew.breakEvenTurn).toBeNull();
  });

  it('pays from the first call when the trimmed prefix costs less to write than the untrimmed one to read', () => {
    // 5k written at 3.75 = 0.01875 < 100k read at 0.30 = 0.030
    const e = trimEconomics({ beforeTokens: 100_000, afterTokens: 5_000, price: sonnet, ttl: '5m' });
    expect(e.firstCallExtraUsd).toBeCloseTo(-0.01125, 9);
    expect(e.breakEvenTurn).toBe(1);
  });

  it('a whole ratio does not round past itself: extra exactly two savings breaks even on call 3', () => {
    // write 3.75x, read 0.3x: after·3.75 − before·0.3 = 2·(before − after)·0.3 → after = before·0.9/4.35
    const before = 4_350_000;
    const e = trimEconomics({ beforeTokens: before, afterTokens: 900_000, price: sonnet, ttl: '5m' });
    expect(e.firstCallExtraUsd / e.perTurnSavingUsd).toBeCloseTo(2, 9);
    expect(e.breakEvenTurn).toBe(3);
  });

  it('uses OpenAI prices for Codex models: no write premium, cached input at a tenth', () => {
    const gpt5 = priceFor('gpt-5.1-codex');
    expect(gpt5).toMatchObject({ matched: true, input: 1.25, cacheWrite5m: 1.25, cacheRead: 0.125 });
    // 60k → 20k: write 0.025 vs read 0.0075: extra 0.0175; saving 0.005 -> 1 + 4
    expect(trimEconomics({ beforeTokens: 60_000, afterTokens: 20_000, price: gpt5, ttl: '5m' }).breakEvenTurn).toBe(5);
  });

  it('agrees with the simulation of the warm-cache scenario', () => {
    for (const after of [2_000, 10_000, 35_000, 60_000, 70_000]) {
      for (const ttl of ['5m', '1h'] as const) {
        const closed = trimEconomics({ beforeTokens: 80_000, afterTokens: after, price: sonnet, ttl });
        const simulated = cacheScenarios({ beforeTokens: 80_000, afterTokens: after, growthTokens: 1500, outputTokens: 400, price: sonnet, turns: 400 }).find((x) => x.ttl === ttl && x.untrimmedCacheWarm)!;
        expect(simulated.breakEvenTurn).toBe(closed.breakEvenTurn);
        expect(simulated.coldStartCostUsd).toBeCloseTo(closed.firstCallExtraUsd, 5);
        expect(simulated.perTurnSavingUsd).toBeCloseTo(closed.perTurnSavingUsd, 5);
      }
    }
  });
});
