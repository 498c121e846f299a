import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLruHotCache } from '../../store/drivers/hot-lru.js';
import { createTokenCounter } from '../../text/tokens.js';
import { createSearchAnalyzer } from '../analyzer.js';
import type { RebuiltContext } from '../context.js';
import type { UserMemoryStore } from '../memory-store.js';
import { openMemoryStore, type SqlMemoryStore } from '../store/sql-memory-store.js';
import { toChatMessages } from './chat.js';
import { rebuildContext } from './rebuild.js';
import type { RebuildOptions } from './options.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2024, 4, 6, 9, 0); // Monday 2024-05-06 09:00 UTC
const tokens = createTokenCounter();
const analyzer = createSearchAnalyzer();

let dir: string;
let store: SqlMemoryStore;
let user: UserMemoryStore;
let clock = T0 - 30 * DAY;

const base = (extra: Partial<RebuildOptions> = {}): RebuildOptions => ({ tokens, analyzer, now: T0, timeZone: 'UTC', touch: false, systemPrompt: 'You are a helpful assistant.', ...extra });
const itemsOf = (ctx: RebuiltContext, layer: string) => ctx.layers.find((l) => l.name === layer)!.items;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ctxvm-rebuild-'));
  store = await openMemoryStore({ db: join(dir, 'memory.db'), analyzer, now: () => clock });
  user = store.forUser('alice');
  const turns = [
    ['t1', 'user', 'My name is Alice and I live in Berlin.'],
    ['t2', 'assistant', 'Nice to meet you, Alice.'],
    ['t3', 'user', 'We decided to use PostgreSQL for the Apollo project because the team knows it.'],
    ['t4', 'user', 'Remind me to write the weekly report by Friday.'],
    ['t5', 'user', 'I adopted a cat called Miso last spring. She loves sunny windows. Also she hates the vacuum cleaner and hides under the bed whenever it runs, which is funny.'],
    ['t6', 'assistant', 'Miso sounds lovely!'],
    ['t7', 'user', 'Book the dentist appointment.'],
    ['t8', 'user', 'The budget review slides are finished.'],
  ] as const;
  await user.addTurns(turns.map(([id, role, text], i) => ({ id, role, speaker: role === 'user' ? 'Alice' : null, text, atMs: T0 - (20 - i) * DAY, sessionId: null })));
  await user.setFact({ kind: 'preference', key: 'timeZone', text: 'Europe/Berlin', importance: 0.9, sourceTurnIds: ['t1'] });
  await user.setFact({ kind: 'fact', key: 'name', text: 'Alice', importance: 0.8, sourceTurnIds: ['t1'] });
  await user.setFact({ kind: 'fact', text: 'Alice has a cat called Miso', importance: 0.6, sourceTurnIds: ['t5'] });
  const apollo = await user.ensureProject('Apollo', 't3');
  await user.addDecision({ text: 'Use PostgreSQL', rationale: 'the team knows it', projectId: apollo.id, sourceTurnIds: ['t3'] });
  await user.createTask({ title: 'Write the weekly report', dueAtMs: T0 + 4 * DAY, projectId: apollo.id, sourceTurnIds: ['t4'] });
  await user.createTask({ title: 'Book the dentist appointment', dueAtMs: T0 - DAY, sourceTurnIds: ['t7'] });
  await user.createTask({ title: 'Prepare budget review slides', status: 'done', sourceTurnIds: ['t8'] });
  clock = T0;
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('rebuildContext', () => {
  it('builds the six layers within the budget, with sources', async () => {
    const ctx = await rebuildContext(user, 'What is my cat called?', base());
    expect(ctx.layers.map((l) => l.name)).toEqual(['system', 'profile', 'project', 'tasks', 'history', 'memories']);
    expect(ctx.tokens).toBe(tokens.count(ctx.text));
    expect(ctx.tokens).toBeLessThanOrEqual(2000);
    expect(ctx.text.startsWith('You are a helpful assistant.\n\n# User profile\n')).toBe(true);
    expect(itemsOf(ctx, 'profile').map((i) => i.text)).toEqual(['- name: Alice', '- timeZone: Europe/Berlin']);
    expect(itemsOf(ctx, 'project').map((i) => i.text)).toEqual(['Project: Apollo', '- Decided 2024-04-06: Use PostgreSQL (because the team knows it)']);
    expect(itemsOf(ctx, 'history').map((i) => i.sources)).toContainEqual(['t5']);
    expect(itemsOf(ctx, 'memories').map((i) => [i.id, i.sources])).toEqual([[expect.any(String), ['t5']]]);
    for (const item of itemsOf(ctx, 'tasks')) expect(item.sources.length).toBe(1);
    expect(ctx.cached).toBe(false);
    expect(ctx.memoryVersion).toBe(await user.version());
  });

  it('puts overdue tasks first and leaves done tasks out unless asked', async () => {
    const ctx = await rebuildContext(user, 'anything new?', base());
    const tasks = itemsOf(ctx, 'tasks').map((i) => i.text);
    expect(tasks).toEqual(['- [todo] Book the dentist appointment · due 2024-05-05 09:00 Sun (overdue)', expect.stringMatching(/^- \[todo\] Write the weekly report · due 2024-05-10/)]);
    const asked = await rebuildContext(user, 'Which tasks have I finished? the budget review slides?', base());
    expect(itemsOf(asked, 'tasks').map((i) => i.text)).toContainEqual('- [done] Prepare budget review slides');
  });

  it('renders byte-identical text for the same memory and query, and a query-independent stable prefix', async () => {
    const a = await rebuildContext(user, 'When is the weekly report due?', base({ touch: true }));
    const b = await rebuildContext(user, 'When is the weekly report due?', base({ touch: true }));
    expect(b.text).toBe(a.text);
    const c = await rebuildContext(user, 'Tell me about Miso', base());
    expect(a.stablePrefixChars).toBeGreaterThan(0);
    expect(c.text.slice(0, c.stablePrefixChars)).toBe(a.text.slice(0, a.stablePrefixChars));
  });

  it('never drops an open task the query is about, compressing it if it must', async () => {
    const ctx = await rebuildContext(user, 'weekly report', base({ budgetTokens: 60, clock: false, systemPrompt: '' }));
    expect(ctx.tokens).toBeLessThanOrEqual(60);
    expect(itemsOf(ctx, 'tasks').map((i) => i.text)).toContainEqual(expect.stringContaining('Write the weekly report'));
    expect(ctx.dropped.length).toBeGreaterThan(0);
    expect(ctx.dropped.every((d) => d.reason === 'budget')).toBe(true);
  });

  it('compresses a long turn to its key sentence before dropping it', async () => {
    const ctx = await rebuildContext(user, 'vacuum cleaner', base({ budgetTokens: 50, clock: false, systemPrompt: '', layerShares: { system: 0, profile: 0, project: 0, tasks: 0, memories: 0 } }));
    const turn = itemsOf(ctx, 'history').find((i) => i.id === 't5');
    expect(turn).toMatchObject({ compressed: true, sources: ['t5'] });
    expect(turn!.text).toContain('vacuum cleaner');
    expect(turn!.text.length).toBeLessThan(120);
  });

  it("renders each user's own turn where two users share a turn id, and each query's own key sentence", async () => {
    const historyOnly = base({ budgetTokens: 50, clock: false, systemPrompt: '', layerShares: { system: 0, profile: 0, project: 0, tasks: 0, memories: 0 } });
    const bob = store.forUser('bob-shares-turn-ids');
    const text =
      'I adopted a dog called Rex last spring. He loves long walks by the river on Sunday mornings with the whole family. Also he barks at the vacuum cleaner and the mail carrier every single morning, which wakes the street.';
    await bob.addTurns([{ id: 't5', role: 'user', speaker: 'Bob', text, atMs: T0 - DAY, sessionId: null }]);
    const t5 = async (who: UserMemoryStore, query: string) => itemsOf(await rebuildContext(who, query, historyOnly), 'history').find((i) => i.id === 't5')!;
    // (rendered turns are remembered between rebuilds: asked twice, each answer must stay its user's)
    for (let round = 0; round < 2; round++) {
      expect((await t5(user, 'vacuum cleaner')).text).toContain('hides under the bed');
      const bobs = await t5(bob, 'vacuum cleaner');
      expect(bobs.text).toMatch(/^Bob: /);
      expect(bobs.text).toContain('barks at the vacuum cleaner');
      const walks = await t5(bob, 'long walks by the river');
      expect(walks).toMatchObject({ compressed: true });
      expect(walks.text).toContain('long walks by the river');
      expect(walks.text).not.toContain('vacuum');
    }
  });

  it('records the records it used, which then weigh more', async () => {
    await rebuildContext(user, 'What is my cat called?', base({ touch: true, now: T0 + HOUR }));
    const facts = await user.listFacts();
    const stats = await user.accessStats('fact', facts.map((f) => f.id));
    expect([...stats.values()].every((s) => s.count >= 1 && s.lastMs === T0 + HOUR)).toBe(true);
  });

  it('serves repeated rebuilds from the hot cache until memory changes', async () => {
    const cache = createLruHotCache();
    const first = await rebuildContext(user, 'weekly report', base({ cache }));
    const second = await rebuildContext(user, 'weekly report', base({ cache }));
    expect(first.cached).toBe(false);
    expect(second.cached).toBe(true);
    expect(second.text).toBe(first.text);
    const other = await rebuildContext(user, 'weekly report', base({ cache, budgetTokens: 500 }));
    expect(other.cached).toBe(false);
    await user.addTurns([{ id: 't9', role: 'user', speaker: 'Alice', text: 'The weekly report needs charts.', atMs: T0, sessionId: null }]);
    const after = await rebuildContext(user, 'weekly report', base({ cache }));
    expect(after.cached).toBe(false);
    expect(after.memoryVersion).toBeGreaterThan(first.memoryVersion);
    await cache.close();
  });

  it('shapes chat messages with the cache breakpoint after the stable layers', async () => {
    const ctx = await rebuildContext(user, 'weekly report', base());
    expect(toChatMessages(ctx, 'When is it due?', 'openai')).toEqual([
      { role: 'system', content: ctx.text },
      { role: 'user', content: 'When is it due?' },
    ]);
    const anthropic = toChatMessages(ctx, 'When is it due?', 'anthropic');
    expect(anthropic.system).toEqual([
      { type: 'text', text: ctx.text.slice(0, ctx.stablePrefixChars), cache_control: { type: 'ephemeral' } },
      { type: 'text', text: ctx.text.slice(ctx.stablePrefixChars) },
    ]);
    expect(anthropic.system.map((b) => b.text).join('')).toBe(ctx.text);
    expect(anthropic.messages).toEqual([{ role: 'user', content: 'When is it due?' }]);
  });
});

describe('rebuildContext over a store without the optional batch reads', () => {
  it('builds the same context through the fallbacks (list methods, one search and one neighbour read at a time)', async () => {
    const { turnNeighbourhoods, searchMany, recordPool, ...rest } = user;
    expect([turnNeighbourhoods, searchMany, recordPool].every((m) => typeof m === 'function')).toBe(true);
    const plain: UserMemoryStore = rest;
    for (const query of ['What did Alice decide about PostgreSQL for Apollo?', 'what is finished? the budget review', 'Miso the cat', '周报']) {
      for (const budgetTokens of [120, 400, 2000]) {
        const fast = await rebuildContext(user, query, base({ budgetTokens }));
        const slow = await rebuildContext(plain, query, base({ budgetTokens }));
        expect(slow, `${query} @ ${budgetTokens}`).toEqual(fast);
      }
    }
  });
});
