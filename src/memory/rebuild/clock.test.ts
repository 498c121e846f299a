import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLruHotCache } from '../../store/drivers/hot-lru.js';
import { createTokenCounter } from '../../text/tokens.js';
import { createSearchAnalyzer } from '../analyzer.js';
import type { UserMemoryStore } from '../memory-store.js';
import { openMemoryStore, type SqlMemoryStore } from '../store/sql-memory-store.js';
import { clockBlock, clockReserveTokens } from './clock.js';
import type { RebuildOptions } from './options.js';
import { rebuildContext } from './rebuild.js';

const T0 = Date.parse('2026-12-02T07:03:00Z'); // Wednesday; 15:03 in Shanghai
const tokens = createTokenCounter();
const analyzer = createSearchAnalyzer();
let dir: string;
let store: SqlMemoryStore;
let user: UserMemoryStore;

const base = (extra: Partial<RebuildOptions> = {}): RebuildOptions => ({ tokens, analyzer, now: T0, timeZone: 'Asia/Shanghai', touch: false, systemPrompt: 'You are a helpful assistant.', ...extra });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ctxvm-clock-'));
  store = await openMemoryStore({ db: join(dir, 'memory.db'), analyzer, now: () => T0 - 3_600_000 });
  user = store.forUser('u1');
  await user.addTurns([{ id: 't1', role: 'user', speaker: null, text: '记得下午三点要开项目评审会。', atMs: T0 - 3_600_000, sessionId: null }]);
  await user.setFact({ kind: 'preference', key: 'timeZone', text: 'Asia/Shanghai', sourceTurnIds: ['t1'] });
  const project = await user.ensureProject('Apollo', 't1');
  await user.addDecision({ text: 'Use PostgreSQL', rationale: null, projectId: project.id, sourceTurnIds: ['t1'] });
  await user.createTask({ title: '开项目评审会', dueAtMs: Date.parse('2026-12-03T07:00:00Z'), sourceTurnIds: ['t1'] });
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the clock block', () => {
  it('states the date, weekday, time and zone in the user’s zone, right after the stable prefix', async () => {
    const ctx = await rebuildContext(user, '下午后还有啥要做', base());
    const line = '# Now: 2026-12-02 15:03 Wed, Asia/Shanghai (UTC+08:00); all times here are in this zone';
    expect(ctx.text.slice(ctx.stablePrefixChars)).toMatch(new RegExp(`^\\n${line.replace(/[()+.;]/g, '\\$&')}\\n\\n# Open tasks\\n`));
    expect(ctx.text).toContain('- [todo] 开项目评审会 · due 2026-12-03 15:00 Thu');
    expect(ctx.text).not.toContain('07:00');
    expect(ctx.clock).toEqual({ text: `${line}\n`, tokens: expect.any(Number), at: '2026-12-02T07:03:00.000Z', timeZone: 'Asia/Shanghai' });
    expect(ctx.tokens).toBe(tokens.count(ctx.text));
  });

  it('keeps the stable prefix byte-identical across turns at different times while the clock moves', async () => {
    const times = [T0, T0 + 61_000, T0 + 5 * 3_600_000, T0 + 3 * 86_400_000 + 1234];
    const contexts = await Promise.all(times.map((now) => rebuildContext(user, 'what is left?', base({ now }))));
    const prefix = contexts[0]!.text.slice(0, contexts[0]!.stablePrefixChars);
    expect(prefix).toContain('# Active project');
    expect(prefix).not.toContain('# Now:');
    for (const ctx of contexts) expect(ctx.text.slice(0, ctx.stablePrefixChars)).toBe(prefix);
    expect(contexts.map((c) => /# Now: (.+?),/.exec(c.text)![1])).toEqual(['2026-12-02 15:03 Wed', '2026-12-02 15:04 Wed', '2026-12-02 20:03 Wed', '2026-12-05 15:03 Sat']);
  });

  it('names a fixed offset and follows summer time', () => {
    expect(clockBlock(Date.parse('2026-07-01T12:00:00Z'), 'America/New_York')).toContain('# Now: 2026-07-01 08:00 Wed, America/New_York (UTC-04:00);');
    expect(clockBlock(Date.parse('2026-01-01T12:00:00Z'), 'America/New_York')).toContain('(UTC-05:00)');
    expect(clockBlock(Date.parse('2026-01-01T12:00:00Z'), 330)).toContain('# Now: 2026-01-01 17:30 Thu, UTC+05:30;');
    expect(clockBlock(Date.parse('2026-01-01T12:00:00Z'), 'UTC')).toBe('# Now: 2026-01-01 12:00 Thu, UTC; all times here are in this zone\n');
  });

  it('costs a single line of tokens, so a small budget keeps its memories', () => {
    // The two-line sentence it replaced cost 39-41 tokens; the reserve is what every budget loses.
    expect(clockReserveTokens('UTC', tokens)).toBeLessThanOrEqual(28);
    expect(clockReserveTokens('Asia/Shanghai', tokens)).toBeLessThanOrEqual(36);
    expect(clockBlock(T0, 'Asia/Shanghai').split('\n')).toHaveLength(2);
  });

  it('serves a cached rebuild at a later minute with a fresh clock, exactly as a rebuild would', async () => {
    const cache = createLruHotCache();
    const first = await rebuildContext(user, 'review meeting', base({ cache }));
    const later = await rebuildContext(user, 'review meeting', base({ cache, now: T0 + 10 * 60_000 }));
    const fresh = await rebuildContext(user, 'review meeting', base({ now: T0 + 10 * 60_000 }));
    expect(first.cached).toBe(false);
    expect(later.cached).toBe(true);
    expect(later.text).toContain('15:13 Wed');
    expect({ ...later, cached: false }).toEqual(fresh);
    await cache.close();
  });

  it('counts its tokens exactly and stays within the budget, whatever the budget, zone and prompt', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 20, max: 400 }),
        fc.constantFrom('UTC', 'Asia/Shanghai', 'America/Los_Angeles', 345, -210),
        fc.constantFrom('', 'You help.', '  leading space prompt'),
        fc.integer({ min: 0, max: 400 * 86_400_000 }),
        async (budgetTokens, timeZone, systemPrompt, offset) => {
          const ctx = await rebuildContext(user, '评审会', base({ budgetTokens, timeZone, systemPrompt, now: T0 + offset }));
          expect(ctx.tokens).toBe(tokens.count(ctx.text));
          expect(ctx.tokens).toBeLessThanOrEqual(budgetTokens);
          expect(ctx.clock !== undefined).toBe(clockReserveTokens(timeZone, tokens) <= budgetTokens);
          if (ctx.clock) expect(ctx.clock.tokens).toBeLessThanOrEqual(clockReserveTokens(timeZone, tokens));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('is left out when asked', async () => {
    const ctx = await rebuildContext(user, 'what is left?', base({ clock: false }));
    expect(ctx.clock).toBeUndefined();
    expect(ctx.text).not.toContain('# Now:');
  });
});
