import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenCounter } from '../../text/tokens.js';
import { createSearchAnalyzer } from '../analyzer.js';
import type { RebuiltContext } from '../context.js';
import type { UserMemoryStore } from '../memory-store.js';
import type { Task } from '../model.js';
import { openMemoryStore, type SqlMemoryStore } from '../store/sql-memory-store.js';
import type { RebuildOptions } from './options.js';
import { rebuildContext } from './rebuild.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2024, 4, 6, 9, 0);
const tokens = createTokenCounter();
const analyzer = createSearchAnalyzer();
const SUBJECTS = ['budget', 'roadmap', 'invoice', 'hiring', 'offsite', 'audit', 'migration', 'newsletter'];

let dir: string;
let store: SqlMemoryStore;
let user: UserMemoryStore;
let clock = T0 - 60 * DAY;
let named: Task;

const base = (extra: Partial<RebuildOptions> = {}): RebuildOptions => ({ tokens, analyzer, now: T0, timeZone: 'UTC', touch: false, ...extra });
const placed = (ctx: RebuiltContext, layer: string) => ctx.layers.find((l) => l.name === layer)!.items.map((i) => i.id);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ctxvm-pools-'));
  store = await openMemoryStore({ db: join(dir, 'memory.db'), analyzer, now: () => clock });
  user = store.forUser('bob');
  // 1,000 open tasks, most overdue and recently updated; the one the query names is among the
  // oldest, undated and never used, so no ordering of the pool would pick it.
  named = await user.createTask({ title: 'Renew the zeppelin license', sourceTurnIds: [] });
  for (let i = 0; i < 1000; i++) {
    clock += 60_000;
    await user.createTask({ title: `Review the ${SUBJECTS[i % SUBJECTS.length]} draft ${i}`, dueAtMs: T0 - DAY + i * 60_000, priority: i % 7 === 0 ? 'high' : 'normal', sourceTurnIds: [] });
  }
  for (let i = 0; i < 300; i++) {
    clock += 60_000;
    await user.setFact({ kind: 'fact', text: `Note ${i} about the ${SUBJECTS[i % SUBJECTS.length]} plan`, sourceTurnIds: [] });
  }
  clock = T0;
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('bounded candidate pools', () => {
  it('never drops an open task the query names, even among 1,000 open tasks', async () => {
    for (const budgetTokens of [300, 2000]) {
      const ctx = await rebuildContext(user, 'did I renew the zeppelin license?', base({ budgetTokens }));
      expect(placed(ctx, 'tasks')).toContain(named.id);
      expect(ctx.dropped.map((d) => d.id)).not.toContain(named.id);
    }
  });

  it('holds every open task `about` accepts, whatever the orderings pick', async () => {
    const without = await user.recordPool!({ perOrder: 10, tasks: { perOrder: 10 } });
    expect(without.tasks!.map((t) => t.id)).not.toContain(named.id);
    const withAbout = await user.recordPool!({ perOrder: 10, tasks: { perOrder: 10, about: (t) => t.title.includes('zeppelin') } });
    expect(withAbout.tasks!.map((t) => t.id)).toContain(named.id);
  });

  it('builds at most taskPool tasks besides the protected ones, and reports every one not placed', async () => {
    const ctx = await rebuildContext(user, 'what is on my plate?', base({ budgetTokens: 600, taskPool: 30 }));
    const shown = placed(ctx, 'tasks');
    const dropped = ctx.dropped.filter((d) => d.layer === 'tasks');
    expect(shown.length).toBeGreaterThan(0);
    // Every candidate is either placed or reported, never both, and there are taskPool of them.
    expect(new Set([...shown, ...dropped.map((d) => d.id)]).size).toBe(shown.length + dropped.length);
    expect(shown.length + dropped.length).toBe(30);
    for (const d of dropped) expect(d.tokens).toBeGreaterThan(0);
  });

  it('bounds the memories layer the same way', async () => {
    const ctx = await rebuildContext(user, 'what about the roadmap plan?', base({ budgetTokens: 600, memoryCandidates: 25 }));
    const shown = placed(ctx, 'memories');
    const dropped = ctx.dropped.filter((d) => d.layer === 'memories');
    expect(shown.length + dropped.length).toBe(25);
    expect(new Set([...shown, ...dropped.map((d) => d.id)]).size).toBe(25);
  });

  it('places the same tasks as a store without a pool when the pool holds them all', async () => {
    // A store without recordPool reads every task: with a pool and cap larger than the open
    // tasks, both see the same candidates and render the same text.
    const plain: UserMemoryStore = { ...user, recordPool: undefined } as UserMemoryStore;
    const opts = base({ budgetTokens: 1500, taskPool: 2000, memoryPool: 2000, memoryCandidates: 2000 });
    const [pooled, full] = [await rebuildContext(user, 'the budget draft', opts), await rebuildContext(plain, 'the budget draft', opts)];
    expect(pooled.text).toBe(full.text);
    expect(pooled.dropped.length).toBe(full.dropped.length);
  });

  it('reads access statistics with the pool, as accessStats reports them', async () => {
    const tasks = await user.listTasks({ status: ['todo'], limit: 5 });
    await user.touch('task', tasks.map((t) => t.id), T0 - DAY);
    await user.touch('task', [tasks[0]!.id], T0);
    const pool = await user.recordPool!({ perOrder: 10, tasks: { perOrder: 10, ids: tasks.map((t) => t.id) }, withAccess: true });
    const stats = await user.accessStats('task', tasks.map((t) => t.id));
    for (const t of tasks) expect(pool.access!.get(`task:${t.id}`)).toEqual(stats.get(t.id));
    expect(pool.access!.get(`task:${tasks[0]!.id}`)).toEqual({ count: 2, lastMs: T0 });
    // Every pool task is open (closed ones were not asked for) and none is listed twice.
    expect(pool.tasks!.every((t) => t.status === 'todo' || t.status === 'doing')).toBe(true);
    expect(new Set(pool.tasks!.map((t) => t.id)).size).toBe(pool.tasks!.length);
  });
});
