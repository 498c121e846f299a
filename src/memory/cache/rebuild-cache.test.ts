// The rebuild cache must be invisible: across random writes and clock ticks, a rebuild served
// from the hot tier (through the cached memory store, as the manager reads) is byte-identical to
// a fresh rebuild from the warm store for the same memory, query and `now`. Access statistics
// are left out (`touch: false`): they change on every rebuild by design and are not memory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLruHotCache } from '../../store/drivers/hot-lru.js';
import { createTokenCounter } from '../../text/tokens.js';
import { createSearchAnalyzer } from '../analyzer.js';
import { createCachedMemoryStore } from '../cached-memory-store.js';
import type { RebuiltContext } from '../context.js';
import { rebuildContext } from '../rebuild/rebuild.js';
import type { RebuildOptions } from '../rebuild/options.js';
import { openMemoryStore, type SqlMemoryStore } from '../store/sql-memory-store.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 0, 5, 8, 30);
const tokens = createTokenCounter();
const analyzer = createSearchAnalyzer();
const QUERIES = ['what are my open tasks?', 'what did we discuss on 6 January?', 'when is the budget review?', '周报什么时候交？', 'what is due today?', 'what did we decide about the release?', '我明天有什么任务？'];

let dir: string;
let store: SqlMemoryStore;
let clock = T0;

// One step of the property: a write, a clock tick or a rebuild. Due times fall just ahead of
// `now` and of `now` + 48 h, so tasks turn "overdue" and "due soon" as the clock moves between
// writes; ticks run from a second to hours (past task thresholds, local midnight for the date
// words — at :30 past a UTC hour in Asia/Kolkata — and the hourly scoring clock).
const op = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('task' as const), title: fc.constantFrom('write the budget review', 'review 周报', '准备 the release notes'), dueInMs: fc.oneof(fc.integer({ min: 0, max: 90 * MINUTE }), fc.integer({ min: 48 * HOUR, max: 48 * HOUR + 90 * MINUTE })) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('done' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('fact' as const), text: fc.constantFrom('tea', 'coffee') }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('turn' as const), text: fc.constantFrom('the budget review moved', '周报下周交', 'release notes are done', 'lunch was good') }) },
  { weight: 36, arbitrary: fc.record({ op: fc.constant('tick' as const), ms: fc.constantFrom(1_000, 20_000, 59_000, 61_000, 3 * MINUTE, 5 * MINUTE, 13 * MINUTE, 5 * HOUR) }) },
  { weight: 55, arbitrary: fc.record({ op: fc.constant('rebuild' as const), query: fc.constantFrom(...QUERIES) }) },
);

const base = (now: number): RebuildOptions => ({ tokens, analyzer, now, timeZone: 'Asia/Kolkata', touch: false, systemPrompt: 'You remember things.', budgetTokens: 600 });
const comparable = (c: RebuiltContext) => ({ ...c, cached: undefined });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ctxvm-rebuild-cache-'));
  store = await openMemoryStore({ db: join(dir, 'memory.db'), analyzer, now: () => clock });
});

afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('rebuild cache', () => {
  it('serves exactly what a fresh rebuild renders, across writes and clock ticks', async () => {
    let run = 0;
    let steps = 0;
    let hits = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 20, maxLength: 120 }), async (ops) => {
        const hot = createLruHotCache({ maxEntries: 10_000 });
        const cached = createCachedMemoryStore({ store, hot });
        const userId = `prop-${run++}`;
        const warm = store.forUser(userId);
        const viaCache = cached.forUser(userId);
        let now = T0;
        clock = now;
        await warm.addTurns([{ id: 't0', role: 'user', speaker: null, text: 'we discussed the budget review and the release notes', atMs: T0 - DAY, sessionId: null }]);
        try {
          for (const [i, o] of ops.entries()) {
            if (o.op === 'task') {
              await viaCache.createTask({ title: `${o.title} ${i}`, dueAtMs: now + o.dueInMs });
            } else if (o.op === 'done') {
              const open = await viaCache.listTasks({ status: ['todo', 'doing'] });
              if (open.length) await viaCache.updateTask(open[o.pick % open.length]!.id, { status: 'done' });
            } else if (o.op === 'fact') {
              await viaCache.setFact({ kind: 'preference', key: 'drink', text: o.text });
            } else if (o.op === 'turn') {
              await viaCache.addTurns([{ id: `t${i + 1}`, role: 'user', speaker: null, text: o.text, atMs: now, sessionId: null }]);
            } else if (o.op === 'tick') {
              now += o.ms;
              clock = now;
            } else {
              const fromCache = await rebuildContext(viaCache, o.query, { ...base(now), cache: hot });
              const fresh = await rebuildContext(warm, o.query, base(now));
              expect(comparable(fromCache), `${o.query} at ${new Date(now).toISOString()}`).toEqual(comparable(fresh));
              steps++;
              if (fromCache.cached) hits++;
            }
          }
        } finally {
          await hot.close();
        }
      }),
      { numRuns: 25, seed: 20260105 },
    );
    // The property is only tested if the cache was actually used, across ticks too.
    expect(hits).toBeGreaterThan(steps / 4);
  });

  it('does not serve a context past the minute its task tiers change', async () => {
    const hot = createLruHotCache({ maxEntries: 100 });
    const user = store.forUser('tier-user');
    const due = T0 + 2 * HOUR + 30_000; // 10:30:30 UTC
    await user.createTask({ title: 'Send the budget review', dueAtMs: due });
    const at = (now: number) => rebuildContext(user, 'what are my open tasks?', { ...base(now), cache: hot });
    const before = await at(due - 5 * MINUTE);
    expect(before.text).not.toContain('(overdue)');
    expect((await at(due - MINUTE)).cached).toBe(true); // same hour, same tiers
    const after = await at(due + MINUTE);
    expect(after.cached).toBe(false);
    expect(after.text).toContain('(overdue)');
    await hot.close();
  });
});
