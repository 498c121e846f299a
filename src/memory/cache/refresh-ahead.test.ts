import { describe, expect, it } from 'vitest';
import { createRefreshAhead, type RefreshQuestion } from './refresh-ahead.js';

/** A rebuild that records what it was asked to rebuild (and can be made to fail or wait). */
function recorder(behaviour: { fail?: (q: RefreshQuestion) => boolean; during?: (q: RefreshQuestion) => void } = {}) {
  const calls: string[] = [];
  const rebuild = async (userId: string, q: RefreshQuestion) => {
    calls.push(`${userId}:${q.query}:${q.budgetTokens}`);
    behaviour.during?.(q);
    await new Promise((r) => setImmediate(r));
    if (behaviour.fail?.(q)) throw new Error('warm store down');
  };
  return { calls, rebuild };
}

const ask = (r: ReturnType<typeof createRefreshAhead>, user: string, query: string, times: number, budgetTokens = 2000) => {
  for (let i = 0; i < times; i++) r.asked(user, { query, budgetTokens });
};

describe('refresh-ahead', () => {
  it('rebuilds the most asked questions of the user who wrote, at least minAsks times asked, top perUser', async () => {
    const { calls, rebuild } = recorder();
    const r = createRefreshAhead(rebuild, { perUser: 2, minAsks: 2 });
    ask(r, 'a', 'tasks?', 5);
    ask(r, 'a', 'budget?', 3);
    ask(r, 'a', 'report?', 2);
    ask(r, 'a', 'once', 1);
    ask(r, 'b', 'tasks?', 9);
    r.wrote('a');
    await r.settled();
    expect(calls).toEqual(['a:tasks?:2000', 'a:budget?:2000']);
    expect(r.stats()).toEqual({ passes: 1, rebuilds: 2, failed: 0 });
  });

  it('keeps questions with different budgets apart', async () => {
    const { calls, rebuild } = recorder();
    const r = createRefreshAhead(rebuild);
    ask(r, 'a', 'tasks?', 2, 500);
    ask(r, 'a', 'tasks?', 2, 4000);
    r.wrote('a');
    await r.settled();
    expect(calls.sort()).toEqual(['a:tasks?:4000', 'a:tasks?:500']);
  });

  it('runs nothing for a user it never served, and one pass for many writes in one tick', async () => {
    const { calls, rebuild } = recorder();
    const r = createRefreshAhead(rebuild);
    r.wrote('stranger');
    ask(r, 'a', 'tasks?', 2);
    r.wrote('a');
    r.wrote('a');
    r.wrote('a');
    expect(calls).toEqual([]); // off the caller's path: nothing ran synchronously
    await r.settled();
    expect(calls).toEqual(['a:tasks?:2000']);
  });

  it('starts over when the user writes during a pass, so no refresh is built from stale memory last', async () => {
    let wroteOnce = false;
    const r = createRefreshAhead(
      async (userId, q) => {
        calls.push(`${userId}:${q.query}`);
        if (!wroteOnce) {
          wroteOnce = true;
          r.wrote('a');
        }
        await new Promise((res) => setImmediate(res));
      },
      { perUser: 3, minAsks: 1 },
    );
    const calls: string[] = [];
    ask(r, 'a', 'q1', 3);
    ask(r, 'a', 'q2', 2);
    ask(r, 'a', 'q3', 1);
    r.wrote('a');
    await r.settled();
    // first pass stops after q1 (the user wrote meanwhile), the second does all three
    expect(calls).toEqual(['a:q1', 'a:q1', 'a:q2', 'a:q3']);
    expect(r.stats().passes).toBe(2);
  });

  it('counts failures and goes on; a write after settling schedules a new pass', async () => {
    const { calls, rebuild } = recorder({ fail: (q) => q.query === 'bad' });
    const r = createRefreshAhead(rebuild, { minAsks: 1 });
    ask(r, 'a', 'bad', 3);
    ask(r, 'a', 'good', 2);
    r.wrote('a');
    await r.settled();
    expect(r.stats()).toEqual({ passes: 1, rebuilds: 1, failed: 1 });
    r.wrote('a');
    await r.settled();
    expect(calls).toHaveLength(4);
  });

  it('stop() ends scheduling: later writes run nothing', async () => {
    const { calls, rebuild } = recorder();
    const r = createRefreshAhead(rebuild, { minAsks: 1 });
    ask(r, 'a', 'q', 1);
    r.stop();
    r.wrote('a');
    await r.settled();
    expect(calls).toEqual([]);
  });

  it('forgets the least recently asking user beyond `users`, and the least asked question beyond `questionsPerUser`', async () => {
    const { calls, rebuild } = recorder();
    const r = createRefreshAhead(rebuild, { users: 2, questionsPerUser: 2, minAsks: 1, perUser: 5 });
    ask(r, 'a', 'q', 1);
    ask(r, 'b', 'q', 1);
    ask(r, 'a', 'q', 1); // a is now the most recent
    ask(r, 'c', 'q', 1); // b is forgotten
    ask(r, 'a', 'often', 3);
    ask(r, 'a', 'rare', 1); // a tracks two questions: 'q' (asked twice) is the least asked and goes
    for (const u of ['a', 'b', 'c']) r.wrote(u);
    await r.settled();
    expect(calls.sort()).toEqual(['a:often:2000', 'a:rare:2000', 'c:q:2000']);
  });
});
