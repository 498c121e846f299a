/**
 * Conformance suite for `MemoryStore` implementations (SQLite today, PostgreSQL in Step 5). A
 * driver's test file runs it in a few lines:
 *
 *   memoryStoreContract('sqlite', async ({ now }) => ({ store: createX({ now }), cleanup }));
 *
 * The store must use the `now` clock it is given (record and history times are checked), and
 * its default analyzer must segment Chinese (周报 is found in "下班前把周报发给我").
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFixedClock, type FixedClock } from '../../src/core/clock.js';
import type { MemoryStore, UserMemoryStore } from '../../src/memory/memory-store.js';
import type { MemoryKind, Turn } from '../../src/memory/model.js';

export interface MemoryStoreHarness {
  store: MemoryStore;
  cleanup(): Promise<void>;
}

/** What the suite gives a factory. */
export interface MemoryStoreFactoryOptions {
  /** The clock the store must use, Unix ms. */
  now: () => number;
}

export type MemoryStoreFactory = (options: MemoryStoreFactoryOptions) => Promise<MemoryStoreHarness>;

const T0 = Date.UTC(2025, 5, 1, 9, 0, 0);

export function turn(id: string, text: string, atMs: number, extra: Partial<Turn> = {}): Omit<Turn, 'userId'> {
  return { id, role: 'user', speaker: null, text, atMs, sessionId: null, ...extra };
}

export function memoryStoreContract(name: string, factory: MemoryStoreFactory): void {
  describe(`MemoryStore contract: ${name}`, () => {
    let h: MemoryStoreHarness;
    let clock: FixedClock;
    let u: UserMemoryStore;
    beforeEach(async () => {
      clock = createFixedClock(T0);
      h = await factory({ now: () => clock.now() });
      u = h.store.forUser('alice');
    });
    afterEach(async () => {
      await h.cleanup();
    });

    it('opens a user only with a non-empty string id', () => {
      expect(typeof h.store.driver).toBe('string');
      for (const bad of ['', 'a\u0000b', undefined, null, 42, {}, ['a']]) {
        expect(() => h.store.forUser(bad as unknown as string)).toThrow(expect.objectContaining({ code: 'E_USAGE' }));
      }
      expect(u.userId).toBe('alice');
      expect(h.store.forUser(' ').userId).toBe(' ');
    });

    it('adds turns once and reads them by id, by recency and in time order', async () => {
      const added = await u.addTurns([turn('a', '第一句', T0), turn('b', 'second', T0 + 1000, { role: 'assistant', speaker: 'Bot', sessionId: 's1' }), turn('c', 'third', T0 + 1000)]);
      expect(added).toEqual({ added: 3 });
      expect(await u.addTurns([turn('a', 'changed', T0 + 5), turn('d', 'fourth', T0 - 1000)])).toEqual({ added: 1 });
      expect(await u.addTurns([])).toEqual({ added: 0 });
      expect(await u.countTurns()).toBe(4);
      const got = await u.getTurns(['c', 'nope', 'a', 'b']);
      expect(got.map((t) => t.id)).toEqual(['c', 'a', 'b']);
      expect(got[1]).toEqual({ id: 'a', userId: 'alice', role: 'user', speaker: null, text: '第一句', atMs: T0, sessionId: null });
      expect(got[2]).toEqual({ id: 'b', userId: 'alice', role: 'assistant', speaker: 'Bot', text: 'second', atMs: T0 + 1000, sessionId: 's1' });
      // time order is atMs, then the order turns were added
      expect((await u.recentTurns(10)).map((t) => t.id)).toEqual(['d', 'a', 'b', 'c']);
      expect((await u.recentTurns(2)).map((t) => t.id)).toEqual(['b', 'c']);
      expect(await u.recentTurns(0)).toEqual([]);
      expect((await u.turnNeighbours('a', 1, 1)).map((t) => t.id)).toEqual(['d', 'a', 'b']);
      expect((await u.turnNeighbours('b', 5, 5)).map((t) => t.id)).toEqual(['d', 'a', 'b', 'c']);
      expect((await u.turnNeighbours('c', 0, 3)).map((t) => t.id)).toEqual(['c']);
      expect((await u.turnNeighbours('d', 2, 0)).map((t) => t.id)).toEqual(['d']);
      expect(await u.turnNeighbours('nope', 2, 2)).toEqual([]);
      expect(await h.store.forUser('bob').getTurns(['a'])).toEqual([]);
      expect(await h.store.forUser('bob').countTurns()).toBe(0);
    });

    it('rejects malformed turns before writing any', async () => {
      await expect(u.addTurns([turn('ok', 'x', T0), turn('', 'y', T0)])).rejects.toMatchObject({ code: 'E_USAGE' });
      await expect(u.addTurns([{ ...turn('r', 'x', T0), role: 'robot' as never }])).rejects.toMatchObject({ code: 'E_USAGE' });
      await expect(u.addTurns([{ ...turn('t', 'x', T0), atMs: Number.NaN }])).rejects.toMatchObject({ code: 'E_USAGE' });
      expect(await u.countTurns()).toBe(0);
    });

    it('creates, updates and deletes tasks with one history entry per changed field', async () => {
      const task = await u.createTask({ title: '下班前把周报发给我', dueAtMs: T0 + 8 * 3600_000, duePhrase: '下班前', confidence: 0.9, sourceTurnIds: ['t0'] }, 't1');
      expect(task).toMatchObject({ userId: 'alice', title: '下班前把周报发给我', status: 'todo', priority: 'normal', dueAtMs: T0 + 8 * 3600_000, duePhrase: '下班前', projectId: null, createdAtMs: T0, updatedAtMs: T0, confidence: 0.9 });
      expect(task.sourceTurnIds).toEqual(['t0', 't1']);
      expect(await u.getTask(task.id)).toEqual(task);
      clock.advance(60_000);
      const updated = await u.updateTask(task.id, { status: 'doing', priority: 'urgent', title: '下班前把周报发给我' }, 't2');
      expect(updated).toMatchObject({ id: task.id, status: 'doing', priority: 'urgent', updatedAtMs: T0 + 60_000, createdAtMs: T0 });
      expect(updated?.sourceTurnIds).toEqual(['t0', 't1', 't2']);
      expect(await u.getTask(task.id)).toEqual(updated);
      const history = await u.history({ kind: 'task', recordId: task.id });
      expect(history.map((e) => [e.field, e.oldValue, e.newValue, e.turnId])).toEqual([
        ['priority', '"normal"', '"urgent"', 't2'],
        ['status', '"todo"', '"doing"', 't2'],
        ['*', null, expect.any(String), 't1'],
      ]);
      expect(JSON.parse(history[2]!.newValue!)).toMatchObject({ id: task.id, title: task.title });
      expect(history[0]).toMatchObject({ userId: 'alice', kind: 'task', recordId: task.id, atMs: T0 + 60_000 });
      expect(history[0]!.seq).toBeGreaterThan(history[1]!.seq);
      // nothing changed: no write, no history
      expect(await u.updateTask(task.id, { status: 'doing' })).toEqual(updated);
      expect(await u.history({ recordId: task.id })).toHaveLength(3);
      expect(await u.updateTask('task_nope', { status: 'done' })).toBeUndefined();
      await expect(u.updateTask(task.id, { status: 'finished' as never })).rejects.toMatchObject({ code: 'E_USAGE' });
      await expect(u.updateTask(task.id, { title: '  ' })).rejects.toMatchObject({ code: 'E_USAGE' });
      const cleared = await u.updateTask(task.id, { dueAtMs: null, duePhrase: null });
      expect(cleared).toMatchObject({ dueAtMs: null, duePhrase: null });
      clock.advance(1000);
      expect(await u.deleteTask(task.id, 't3')).toBe(true);
      expect(await u.getTask(task.id)).toBeUndefined();
      expect(await u.deleteTask(task.id)).toBe(false);
      const last = (await u.history({ recordId: task.id, limit: 1 }))[0]!;
      expect(last).toMatchObject({ field: '*', newValue: null, turnId: 't3', atMs: T0 + 61_000 });
      expect(JSON.parse(last.oldValue!)).toMatchObject({ id: task.id, status: 'doing', priority: 'urgent', dueAtMs: null });
      await expect(u.createTask({ title: '' })).rejects.toMatchObject({ code: 'E_USAGE' });
    });

    it('stamps what a handle opened with atMs writes with that time, and rejects a bad one', async () => {
      const then = T0 - 30 * 86_400_000;
      const past = h.store.forUser('alice', { atMs: then });
      const task = await past.createTask({ title: 'file the March report' }, 't1');
      expect(task).toMatchObject({ createdAtMs: then, updatedAtMs: then });
      const done = await past.updateTask(task.id, { status: 'done' }, 't2');
      expect(done).toMatchObject({ createdAtMs: then, updatedAtMs: then });
      const fact = await past.setFact({ kind: 'fact', text: 'lives in Hangzhou' });
      expect(fact).toMatchObject({ createdAtMs: then, updatedAtMs: then });
      expect((await u.history({ recordId: task.id })).map((e) => e.atMs)).toEqual([then, then]);
      // the plain handle still uses the store's clock
      expect(await u.createTask({ title: 'now' })).toMatchObject({ createdAtMs: T0 });
      expect(() => h.store.forUser('alice', { atMs: Number.NaN })).toThrow(expect.objectContaining({ code: 'E_USAGE' }));
    });

    it('lists open tasks by due time first, then the rest by update time', async () => {
      const undated = await u.createTask({ title: 'undated' });
      clock.advance(1);
      const late = await u.createTask({ title: 'late', dueAtMs: T0 + 3000 });
      clock.advance(1);
      const soon = await u.createTask({ title: 'soon', dueAtMs: T0 + 2000, status: 'doing' });
      clock.advance(1);
      const doneFirst = await u.createTask({ title: 'done first', dueAtMs: T0 + 1000 });
      clock.advance(1);
      const cancelled = await u.createTask({ title: 'cancelled', status: 'cancelled' });
      clock.advance(1);
      await u.updateTask(doneFirst.id, { status: 'done' });
      const ids = (await u.listTasks()).map((t) => t.id);
      expect(ids).toEqual([soon.id, late.id, undated.id, doneFirst.id, cancelled.id]);
      expect((await u.listTasks({ status: ['todo', 'doing'] })).map((t) => t.id)).toEqual([soon.id, late.id, undated.id]);
      expect((await u.listTasks({ status: ['done'] })).map((t) => t.id)).toEqual([doneFirst.id]);
      expect(await u.listTasks({ status: [] })).toEqual([]);
      expect((await u.listTasks({ dueBeforeMs: T0 + 2500 })).map((t) => t.id)).toEqual([soon.id, doneFirst.id]);
      expect((await u.listTasks({ limit: 2 })).map((t) => t.id)).toEqual([soon.id, late.id]);
      expect(await h.store.forUser('bob').listTasks()).toEqual([]);
    });

    it('finds projects by name case-insensitively', async () => {
      const p = await u.ensureProject('Apollo', 't1');
      expect(p).toMatchObject({ userId: 'alice', name: 'Apollo', createdAtMs: T0, sourceTurnIds: ['t1'] });
      const again = await u.ensureProject('  apollo ');
      expect(again.id).toBe(p.id);
      expect(await u.version()).toBe(1);
      const mentioned = await u.ensureProject('APOLLO', 't2');
      expect(mentioned.sourceTurnIds).toEqual(['t1', 't2']);
      const q = await u.ensureProject('北极星');
      expect(await u.getProject(p.id)).toEqual(mentioned);
      expect(await u.getProject('proj_nope')).toBeUndefined();
      expect((await u.listProjects()).map((x) => x.id).sort()).toEqual([p.id, q.id].sort());
      expect((await h.store.forUser('bob').ensureProject('Apollo')).id).not.toBe(p.id);
      expect(await h.store.forUser('bob').getProject(p.id)).toBeUndefined();
      await expect(u.ensureProject(' ')).rejects.toMatchObject({ code: 'E_USAGE' });
    });

    it('records decisions, newest first, by project', async () => {
      const p = await u.ensureProject('Apollo');
      const d1 = await u.addDecision({ text: '用 PostgreSQL', rationale: '团队熟悉', projectId: p.id }, 't1');
      clock.advance(10);
      const d2 = await u.addDecision({ text: 'ship on Friday' });
      expect(d1).toMatchObject({ userId: 'alice', text: '用 PostgreSQL', rationale: '团队熟悉', projectId: p.id, taskId: null, createdAtMs: T0, sourceTurnIds: ['t1'] });
      expect((await u.listDecisions()).map((d) => d.id)).toEqual([d2.id, d1.id]);
      expect((await u.listDecisions({ projectId: p.id })).map((d) => d.id)).toEqual([d1.id]);
      expect((await u.listDecisions({ limit: 1 })).map((d) => d.id)).toEqual([d2.id]);
      expect(await h.store.forUser('bob').listDecisions()).toEqual([]);
      await expect(u.addDecision({ text: '' })).rejects.toMatchObject({ code: 'E_USAGE' });
    });

    it('replaces keyed facts in place and keeps the old value in history', async () => {
      const tz = await u.setFact({ kind: 'preference', key: 'timeZone', text: 'Asia/Shanghai' }, 't1');
      expect(tz).toMatchObject({ userId: 'alice', kind: 'preference', key: 'timeZone', text: 'Asia/Shanghai', importance: 0.5, sourceTurnIds: ['t1'] });
      clock.advance(5);
      const moved = await u.setFact({ kind: 'preference', key: 'timeZone', text: 'Europe/Paris', importance: 0.8 }, 't2');
      expect(moved).toMatchObject({ id: tz.id, text: 'Europe/Paris', importance: 0.8, createdAtMs: T0, updatedAtMs: T0 + 5, sourceTurnIds: ['t1', 't2'] });
      expect(await u.getFactByKey('timeZone')).toEqual(moved);
      expect(await u.getFactByKey('nope')).toBeUndefined();
      const hist = await u.history({ kind: 'fact', recordId: tz.id });
      expect(hist.map((e) => [e.field, e.oldValue, e.newValue])).toEqual([
        ['importance', '0.5', '0.8'],
        ['text', '"Asia/Shanghai"', '"Europe/Paris"'],
        ['*', null, expect.any(String)],
      ]);
      const versionBefore = await u.version();
      expect(await u.setFact({ kind: 'preference', key: 'timeZone', text: 'Europe/Paris', importance: 0.8 })).toEqual(moved);
      expect(await u.version()).toBe(versionBefore);
      const f1 = await u.setFact({ kind: 'fact', text: '我对花生过敏', importance: 1 });
      const f2 = await u.setFact({ kind: 'fact', text: '我对花生过敏' });
      expect(f2.id).not.toBe(f1.id);
      expect((await u.listFacts({ kind: 'fact' })).map((f) => f.id).sort()).toEqual([f1.id, f2.id].sort());
      expect((await u.listFacts({ kind: 'preference' })).map((f) => f.id)).toEqual([tz.id]);
      expect(await u.listFacts()).toHaveLength(3);
      expect(await h.store.forUser('bob').getFactByKey('timeZone')).toBeUndefined();
      await expect(u.setFact({ kind: 'opinion' as never, text: 'x' })).rejects.toMatchObject({ code: 'E_USAGE' });
      await expect(u.setFact({ kind: 'fact', text: 'x', importance: 2 })).rejects.toMatchObject({ code: 'E_USAGE' });
    });

    it('bumps the version on every write and only then', async () => {
      const bob = h.store.forUser('bob');
      expect(await u.version()).toBe(0);
      const steps: [string, () => Promise<unknown>, number][] = [
        ['addTurns', () => u.addTurns([turn('a', 'hello', T0)]), 1],
        ['addTurns (duplicate)', () => u.addTurns([turn('a', 'hello', T0)]), 0],
        ['createTask', () => u.createTask({ title: 'x' }), 1],
        ['ensureProject', () => u.ensureProject('P'), 1],
        ['ensureProject (existing)', () => u.ensureProject('p'), 0],
        ['addDecision', () => u.addDecision({ text: 'd' }), 1],
        ['setFact', () => u.setFact({ kind: 'fact', text: 'f' }), 1],
        ['reads', () => Promise.all([u.listTasks(), u.search('hello'), u.history(), u.recentTurns(3), u.listFacts()]), 0],
        ['touch', () => u.touch('fact', ['x'], T0), 0],
      ];
      let expected = 0;
      let expectedRecords = 0;
      for (const [label, step, bump] of steps) {
        await step();
        expected += bump;
        // the records version moves with every write but a turn append
        if (!label.startsWith('addTurns')) expectedRecords += bump;
        expect([label, await u.version()]).toEqual([label, expected]);
        if (u.versions) expect([label, await u.versions()]).toEqual([label, { all: expected, records: expectedRecords }]);
      }
      const task = (await u.listTasks())[0]!;
      await u.updateTask(task.id, { status: 'done' });
      expect(await u.version()).toBe(expected + 1);
      await u.updateTask(task.id, { status: 'done' });
      await bob.updateTask(task.id, { status: 'todo' });
      expect(await bob.deleteTask(task.id)).toBe(false);
      expect(await u.version()).toBe(expected + 1);
      await u.deleteTask(task.id);
      expect(await u.version()).toBe(expected + 2);
      expect(await bob.version()).toBe(0);
      expect((await u.getTask(task.id)) ?? null).toBeNull();
    });

    it('commits what atomically writes together, and reads inside see it', async () => {
      if (!u.atomically) return; // optional in the interface
      await u.addTurns([turn('t0', 'earlier', T0)]);
      expect(await u.listTasks()).toEqual([]); // a cached store now holds the empty list
      const before = await u.version();
      const seenInside = await u.atomically(async (s) => {
        await s.addTurns([turn('t1', 'remind me to renew the passport', T0 + 1000)]);
        const task = await s.createTask({ title: 'renew the passport', sourceTurnIds: ['t1'] }, 't1');
        const project = await s.ensureProject('Travel', 't1');
        await s.updateTask(task.id, { projectId: project.id }, 't1');
        return { tasks: (await s.listTasks()).map((t) => [t.title, t.projectId]), turns: (await s.recentTurns(5)).map((t) => t.id), project: project.id };
      });
      expect(seenInside).toEqual({ tasks: [['renew the passport', seenInside.project]], turns: ['t0', 't1'], project: seenInside.project });
      expect((await u.listTasks()).map((t) => t.title)).toEqual(['renew the passport']);
      expect((await u.getTurns(['t1'])).map((t) => t.text)).toEqual(['remind me to renew the passport']);
      expect((await u.search('passport')).map((hit) => hit.kind).sort()).toEqual(['task', 'turn']);
      expect(await u.version()).toBeGreaterThan(before);
      expect((await u.history({ kind: 'task' })).length).toBeGreaterThan(0);
    });

    it('rolls back everything atomically wrote when its function throws', async () => {
      if (!u.atomically) return;
      await u.addTurns([turn('t0', 'earlier', T0)]);
      expect(await u.listTasks()).toEqual([]);
      const before = await u.version();
      const failure = new Error('extraction failed');
      await expect(
        u.atomically(async (s) => {
          await s.addTurns([turn('t1', 'remind me to book the ferry', T0 + 1000)]);
          await s.createTask({ title: 'book the ferry' }, 't1');
          await s.setFact({ kind: 'preference', key: 'seat', text: 'window seat' }, 't1');
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect(await u.listTasks()).toEqual([]);
      expect(await u.getTurns(['t1'])).toEqual([]);
      expect(await u.getFactByKey('seat')).toBeUndefined();
      expect(await u.search('ferry')).toEqual([]);
      expect(await u.version()).toBe(before);
      // and the store goes on working
      await u.createTask({ title: 'book the ferry' });
      expect((await u.listTasks()).map((t) => t.title)).toEqual(['book the ferry']);
    });

    it('keeps access statistics out of atomically', async () => {
      if (!u.atomically) return;
      const task = await u.createTask({ title: 'x' });
      await expect(u.atomically((s) => s.touch('task', [task.id], T0))).rejects.toMatchObject({ code: 'E_USAGE' });
      await expect(u.atomically(async (s) => s.accessStats('task', [task.id]))).rejects.toMatchObject({ code: 'E_USAGE' });
      await u.touch('task', [task.id], T0);
      expect((await u.accessStats('task', [task.id])).get(task.id)?.count).toBe(1);
      // a pending touch of a task deleted inside lands before the delete, never after it
      await u.touch('task', [task.id], T0 + 1);
      expect(await u.atomically((s) => s.deleteTask(task.id))).toBe(true);
      await h.store.forUser('alice').accessStats('task', []); // writes whatever is still pending
      expect((await u.accessStats('task', [task.id])).size).toBe(0);
    });

    it('finds two-character Chinese words, English words and every kind of record', async () => {
      await u.addTurns([turn('t1', '下班前把周报发给我', T0), turn('t2', '明天上午十点开会', T0 + 1), turn('t3', 'Please send the budget report by Friday', T0 + 2)]);
      const task = await u.createTask({ title: '整理周报' });
      const project = await u.ensureProject('周报系统');
      const decision = await u.addDecision({ text: '周报改成周五发', rationale: '老板周五看' });
      const fact = await u.setFact({ kind: 'fact', text: '我每周写周报' });
      const hits = await u.search('周报');
      expect(hits.map((x) => `${x.kind}:${x.id}`).sort()).toEqual(
        [`turn:t1`, `task:${task.id}`, `project:${project.id}`, `decision:${decision.id}`, `fact:${fact.id}`].sort(),
      );
      for (const hit of hits) expect(hit.score).toBeGreaterThan(0);
      const scores = hits.map((x) => x.score);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
      expect((await u.search('周报', { kinds: ['turn'] })).map((x) => x.id)).toEqual(['t1']);
      expect((await u.search('周报', { kinds: ['task', 'fact'] })).map((x) => x.kind).sort()).toEqual(['fact', 'task']);
      expect(await u.search('周报', { kinds: [] })).toEqual([]);
      expect(await u.search('周报', { limit: 2 })).toHaveLength(2);
      expect(await u.search('周报', { limit: 0 })).toEqual([]);
      expect((await u.search('BUDGET')).map((x) => x.id)).toEqual(['t3']);
      expect((await u.search('明天开会')).map((x) => x.id)).toEqual(['t2']);
      expect((await u.search('我要发周报给老板'))[0]).toBeDefined();
      expect(await u.search('完全无关的词语')).toEqual([]);
      expect(await h.store.forUser('bob').search('周报')).toEqual([]);
    });

    it('ranks a document matching more of the query higher', async () => {
      await u.addTurns([turn('one', '周报 草稿', T0), turn('both', '周报 发给 老板', T0 + 1), turn('none', '今天天气很好', T0 + 2)]);
      const hits = await u.search('把周报发给老板');
      expect(hits[0]?.id).toBe('both');
      expect(hits.map((x) => x.id)).not.toContain('none');
    });

    it('keeps the index in step with updates and deletes', async () => {
      const task = await u.createTask({ title: '准备季度预算' });
      expect((await u.search('预算')).map((x) => x.id)).toEqual([task.id]);
      await u.updateTask(task.id, { title: '准备年度计划' });
      expect(await u.search('预算')).toEqual([]);
      expect((await u.search('计划')).map((x) => x.id)).toEqual([task.id]);
      await u.updateTask(task.id, { status: 'done' });
      expect((await u.search('计划')).map((x) => x.id)).toEqual([task.id]);
      await u.deleteTask(task.id);
      expect(await u.search('计划')).toEqual([]);
      const fact = await u.setFact({ kind: 'preference', key: 'drink', text: '喜欢咖啡' });
      await u.setFact({ kind: 'preference', key: 'drink', text: '喜欢绿茶' });
      expect(await u.search('咖啡')).toEqual([]);
      expect((await u.search('绿茶')).map((x) => x.id)).toEqual([fact.id]);
    });

    it('treats any query text as words, never as syntax', async () => {
      await u.addTurns([
        turn('q1', 'he said "hello" AND NOT world OR c++ -x NEAR(a b) col:val * ^start', T0),
        turn('q2', "Robert'); DROP TABLE memory_turns;-- 100% _under_ \\back\\slash {braces} [x]", T0 + 1),
        turn('q3', '表情 😀🎉 👍 and émoji café naïve', T0 + 2),
      ]);
      const nasty = [
        '"', '""', '"unterminated', "'", "''", '*', 'NEAR(', 'AND', 'OR', 'NOT', '-', '+', '^', ':', 'col:val', '(', ')', '{', '}', '[', ']',
        'a AND', 'OR b', 'NOT NOT', '"hello" AND', '%', '_', '\\', '\u0000', 'x\u0000y', ';', '--', '/*', "'; DROP TABLE memory_turns; --", 'memory_search_fts',
        '😀', '🎉👍', '\uD83D', '\uDE00', '\u200B', '\uFEFF', ' ', '\t\n', '　', '。，！', '...', '!!!', 'NEAR(a b, 3)', 'c++', 'hello*', '^start', 'rank', 'MATCH',
      ];
      for (const q of nasty) {
        const hits = await u.search(q);
        expect(Array.isArray(hits), JSON.stringify(q)).toBe(true);
      }
      expect(await u.search('')).toEqual([]);
      expect(await u.search('   ')).toEqual([]);
      expect((await u.search('"hello"')).map((x) => x.id)).toEqual(['q1']);
      expect((await u.search('c++')).map((x) => x.id)).toContain('q1');
      expect((await u.search("Robert'); DROP TABLE memory_turns;--")).map((x) => x.id)).toContain('q2');
      expect((await u.search('café')).map((x) => x.id)).toEqual(['q3']);
      expect(await u.countTurns()).toBe(3);
      const huge = '周报'.repeat(200_000) + ' "AND OR NOT ( * '.repeat(20_000);
      expect(huge.length).toBeGreaterThan(700_000);
      expect(Buffer.byteLength(huge)).toBeGreaterThan(1_000_000);
      await expect(u.search(huge)).resolves.toBeInstanceOf(Array);
      await expect(u.search('x'.repeat(1_100_000))).resolves.toEqual([]);
      await expect(u.search(42 as unknown as string)).resolves.toEqual([]);
    });

    it('lists history newest first, filtered by kind, record and limit', async () => {
      const task = await u.createTask({ title: 'a' }, 't1');
      await u.updateTask(task.id, { title: 'b' }, 't2');
      const fact = await u.setFact({ kind: 'fact', text: 'f' });
      const all = await u.history();
      expect(all.map((e) => [e.kind, e.recordId, e.field])).toEqual([
        ['fact', fact.id, '*'],
        ['task', task.id, 'title'],
        ['task', task.id, '*'],
      ]);
      expect(all.map((e) => e.seq)).toEqual([...all.map((e) => e.seq)].sort((a, b) => b - a));
      expect(await u.history({ kind: 'task' })).toHaveLength(2);
      expect(await u.history({ kind: 'project' })).toEqual([]);
      expect(await u.history({ limit: 1 })).toHaveLength(1);
      expect(await u.history({ limit: 0 })).toEqual([]);
      expect(await h.store.forUser('bob').history()).toEqual([]);
    });

    it('counts accesses per record and keeps the latest time', async () => {
      await u.touch('task', ['a', 'b', 'a'], T0 + 10);
      await u.touch('task', ['a'], T0 + 5);
      await u.touch('fact', ['a'], T0 + 20);
      const stats = await u.accessStats('task', ['a', 'b', 'c']);
      expect(Object.fromEntries(stats)).toEqual({ a: { count: 2, lastMs: T0 + 10 }, b: { count: 1, lastMs: T0 + 10 } });
      expect(Object.fromEntries(await u.accessStats('fact', ['a']))).toEqual({ a: { count: 1, lastMs: T0 + 20 } });
      expect((await u.accessStats('task', [])).size).toBe(0);
      expect((await h.store.forUser('bob').accessStats('task', ['a'])).size).toBe(0);
      await expect(u.touch('turn' as never, ['a'], T0)).rejects.toMatchObject({ code: 'E_USAGE' });
    });

    it('touches several kinds at once as touch does one kind at a time', async () => {
      if (!u.touchMany) return;
      await u.touchMany([{ kind: 'task', ids: ['a', 'b', 'a'] }, { kind: 'fact', ids: ['a'] }, { kind: 'task', ids: ['b'] }, { kind: 'decision', ids: [] }], T0 + 10);
      await u.touchMany([{ kind: 'task', ids: ['a'] }], T0 + 5);
      await u.touchMany([], T0);
      expect(Object.fromEntries(await u.accessStats('task', ['a', 'b']))).toEqual({ a: { count: 2, lastMs: T0 + 10 }, b: { count: 1, lastMs: T0 + 10 } });
      expect(Object.fromEntries(await u.accessStats('fact', ['a']))).toEqual({ a: { count: 1, lastMs: T0 + 10 } });
      expect((await h.store.forUser('bob').accessStats('task', ['a'])).size).toBe(0);
      await expect(u.touchMany([{ kind: 'turn' as never, ids: ['a'] }], T0)).rejects.toMatchObject({ code: 'E_USAGE' });
    });

    // Optional methods (turnNeighbourhoods, searchMany, recordPool): a store without them is
    // served by the callers' fallbacks, so these cases only check stores that have them.
    it('reads the open tasks light, in listTasks order', async () => {
      if (!u.openTaskTitles) return;
      const undated = await u.createTask({ title: 'undated', projectId: null });
      clock.advance(1);
      const late = await u.createTask({ title: 'late', dueAtMs: T0 + 3000 });
      clock.advance(1);
      const soon = await u.createTask({ title: 'soon', dueAtMs: T0 + 2000, status: 'doing' });
      clock.advance(1);
      const done = await u.createTask({ title: 'done', dueAtMs: T0 + 1000 });
      await u.updateTask(done.id, { status: 'done' });
      const open = await u.openTaskTitles(10);
      expect(open).toEqual((await u.listTasks({ status: ['todo', 'doing'] })).map((t) => ({ id: t.id, title: t.title, status: t.status, projectId: t.projectId })));
      expect(open.map((t) => t.id)).toEqual([soon.id, late.id, undated.id]);
      expect((await u.openTaskTitles(2)).map((t) => t.id)).toEqual([soon.id, late.id]);
      expect(await u.openTaskTitles(0)).toEqual([]);
      expect(await h.store.forUser('bob').openTaskTitles!(10)).toEqual([]);
    });

    it('reads the neighbourhoods of many turns at once, as turnNeighbours does one by one', async () => {
      if (!u.turnNeighbourhoods) return;
      await u.addTurns([turn('a', 'one', T0), turn('b', 'two', T0 + 1000), turn('c', 'three', T0 + 1000), turn('d', 'four', T0 - 1000), turn('e', 'five', T0 + 5000)]);
      await h.store.forUser('bob').addTurns([turn('x', 'bob', T0 + 500)]);
      for (const [before, after] of [[2, 2], [1, 0], [0, 3], [5, 5]] as const) {
        const ids = ['c', 'a', 'nope', 'e', 'd', 'x'];
        const many = await u.turnNeighbourhoods(ids, before, after);
        expect([...many.keys()].sort()).toEqual(['a', 'c', 'd', 'e']);
        for (const id of ['a', 'c', 'd', 'e']) expect(many.get(id)).toEqual(await u.turnNeighbours(id, before, after));
      }
      expect((await u.turnNeighbourhoods([], 2, 2)).size).toBe(0);
    });

    it('reads overlapping neighbourhoods and those of the first and last turns, as turnNeighbours does', async () => {
      if (!u.turnNeighbourhoods) return;
      // 40 turns, two at each of several instants (ties are broken by creation order)
      await u.addTurns(Array.from({ length: 40 }, (_, i) => turn(`t${i}`, `turn ${i}`, T0 + Math.floor(i / 2) * 1000)));
      const cases: Array<[string[], number, number]> = [
        [['t5', 't6', 't8', 't9'], 2, 2], // overlapping neighbourhoods
        [['t0', 't39'], 1, 1], // the first and last turns: nothing before or after them
        [['t1', 't20', 't38', 't2'], 3, 0],
        [['t39', 't37'], 0, 4],
        [['t10', 't11'], 0, 0],
      ];
      for (const [ids, before, after] of cases) {
        const many = await u.turnNeighbourhoods(ids, before, after);
        expect([...many.keys()].sort()).toEqual([...ids].sort());
        for (const id of ids) expect(many.get(id)).toEqual(await u.turnNeighbours(id, before, after));
      }
    });

    it('answers several searches of one query with the hits of each search alone', async () => {
      if (!u.searchMany) return;
      await u.addTurns([turn('t1', 'send the quarterly report to Dana', T0), turn('t2', '下班前把周报发给我', T0 + 1), turn('t3', 'the report is late', T0 + 2)]);
      await u.createTask({ title: 'write the quarterly report' });
      await u.setFact({ kind: 'fact', text: 'Dana reads every report' });
      const searches = [{ kinds: ['task', 'decision', 'fact'] as const, limit: 5 }, { kinds: ['turn'] as const, limit: 2 }, {}, { limit: 0 }, { kinds: [] }];
      for (const query of ['quarterly report', '周报 Dana', 'nothing matches this', '']) {
        const many = await u.searchMany(query, searches);
        expect(many).toEqual(await Promise.all(searches.map((o) => u.search(query, o))));
      }
    });

    it('selects a bounded pool of facts and decisions: profile, best per ordering, hits and dates', async () => {
      if (!u.recordPool) return;
      const free = [];
      for (let i = 0; i < 5; i++) {
        free.push(await u.setFact({ kind: 'fact', text: `free fact ${i}`, importance: i === 0 ? 0.9 : 0.5 }));
        clock.advance(10);
      }
      const name = await u.setFact({ kind: 'fact', key: 'name', text: 'Alice' });
      const pref = await u.setFact({ kind: 'preference', text: 'short answers' });
      await u.touch('fact', [free[1]!.id], T0 + 1000);
      const p = await u.ensureProject('Apollo');
      const d = [];
      for (let i = 0; i < 4; i++) {
        clock.advance(10);
        d.push(await u.addDecision({ text: `decision ${i}`, ...(i % 2 === 0 ? { projectId: p.id } : {}) }));
      }
      const ids = (xs: readonly { id: string }[]) => xs.map((x) => x.id).sort();
      const pool = await u.recordPool({ perOrder: 2 });
      // newest 2 (4, 3), most important 2 (0, then the newest: 4), most recently used (1)
      expect(ids(pool.facts)).toEqual(ids([name, pref, free[4]!, free[3]!, free[0]!, free[1]!]));
      expect(ids(pool.decisions)).toEqual(ids([d[3]!, d[2]!]));
      expect(Object.fromEntries(pool.lastDecisionMs)).toEqual({ [p.id]: d[2]!.createdAtMs });
      // listFacts and listDecisions order
      expect(pool.facts.map((f) => f.id)).toEqual((await u.listFacts()).filter((f) => ids(pool.facts).includes(f.id)).map((f) => f.id));
      const wider = await u.recordPool({ perOrder: 1, ids: [free[2]!.id, d[0]!.id, 'nope'], createdWithin: [{ startMs: free[1]!.createdAtMs, endMs: free[1]!.createdAtMs + 1 }] });
      expect(ids(wider.facts)).toEqual(ids([name, pref, free[4]!, free[0]!, free[1]!, free[2]!]));
      expect(ids(wider.decisions)).toEqual(ids([d[3]!, d[0]!]));
      const everything = await u.recordPool({ perOrder: 100 });
      expect(ids(everything.facts)).toEqual(ids(await u.listFacts()));
      expect(ids(everything.decisions)).toEqual(ids(await u.listDecisions()));
      const bob = await h.store.forUser('bob').recordPool!({ perOrder: 10, ids: [free[0]!.id] });
      expect([bob.facts, bob.decisions, bob.lastDecisionMs.size]).toEqual([[], [], 0]);
    });

    it('keeps users with look-alike ids apart', async () => {
      const ids = ['a', 'A', 'a ', ' a', 'a\t', '用户', '😀', "' OR 1=1 --", '%', '_', 'a'.repeat(2000)];
      for (const [i, id] of ids.entries()) {
        const s = h.store.forUser(id);
        await s.addTurns([turn('same', `secret${i} 共同话题`, T0 + i)]);
        await s.setFact({ kind: 'fact', key: 'k', text: `value${i}` });
      }
      for (const [i, id] of ids.entries()) {
        const s = h.store.forUser(id);
        expect((await s.getTurns(['same']))[0]?.text).toBe(`secret${i} 共同话题`);
        expect((await s.getFactByKey('k'))?.text).toBe(`value${i}`);
        expect(await s.countTurns()).toBe(1);
        expect((await s.search('共同话题')).map((x) => x.id)).toEqual(['same']);
        for (const j of [0, 1, 5]) {
          if (j !== i) expect(await s.search(`secret${j}`)).toEqual([]);
        }
        expect(await s.version()).toBe(2);
      }
    });

    it('lists users with memory, most recently active first, counts only (listUsers)', async () => {
      if (!h.store.listUsers) return; // optional: a driver without it cannot list users
      expect(await h.store.listUsers()).toEqual([]);
      // carol: turns only, the latest turn is the newest activity of all
      await h.store.forUser('carol').addTurns([turn('c1', 'hello', T0 + 50_000), turn('c2', 'again', T0 + 90_000)]);
      // alice: a task at T0 (history time = the store clock), then a turn at T0 + 10 s
      await u.createTask({ title: 'write the report' });
      await u.addTurns([turn('a1', 'remind me', T0 + 10_000)]);
      // bob: a task and a fact, written when the clock says T0 + 60 s
      clock.set(T0 + 60_000);
      const bob = h.store.forUser('bob');
      await bob.createTask({ title: 'water the plants' });
      await bob.createTask({ title: 'call mum' });
      await bob.setFact({ kind: 'fact', key: 'name', text: 'Bob' });
      // dave: opened, never written: not listed
      await h.store.forUser('dave').listTasks();
      expect(await h.store.listUsers()).toEqual([
        { userId: 'carol', turns: 2, tasks: 0, lastActiveAtMs: T0 + 90_000 },
        { userId: 'bob', turns: 0, tasks: 2, lastActiveAtMs: T0 + 60_000 },
        { userId: 'alice', turns: 1, tasks: 1, lastActiveAtMs: T0 + 10_000 },
      ]);
      expect((await h.store.listUsers({ limit: 1 })).map((x) => x.userId)).toEqual(['carol']);
      await expect(h.store.listUsers({ limit: 0 })).rejects.toMatchObject({ code: 'E_USAGE' });
    });

    it('claims a message id for one owner at a time, atomically, per user (claimMessage)', async () => {
      const never = () => false;
      // ten owners at once: exactly one holds the claim
      const owners = Array.from({ length: 10 }, (_, i) => `host~${1000 + i}~o${i}`);
      const won = await Promise.all(owners.map((o) => u.claimMessage('m1', o, T0, never)));
      expect(won.filter(Boolean)).toHaveLength(1);
      const holder = owners[won.indexOf(true)]!;
      // the holder cannot claim it twice, another owner cannot release it
      expect(await u.claimMessage('m1', holder, T0, never)).toBe(false);
      await u.releaseMessage('m1', 'host~1~someone-else');
      expect(await u.claimMessage('m1', 'host~2~late', T0, never)).toBe(false);
      // another user's id of the same name is free
      expect(await h.store.forUser('bob').claimMessage('m1', 'host~3~bob', T0, never)).toBe(true);
      // released, it is free again
      await u.releaseMessage('m1', holder);
      expect(await u.claimMessage('m1', 'host~4~next', T0 + 1, never)).toBe(true);
      // taken over only when the check gives the held claim up, and by one of several at once
      const seen: unknown[] = [];
      expect(await u.claimMessage('m1', 'host~5~polite', T0 + 2, (held) => (seen.push(held), false))).toBe(false);
      expect(seen).toEqual([{ owner: 'host~4~next', claimedAtMs: T0 + 1 }]);
      const takers = await Promise.all(['a', 'b', 'c', 'd'].map((x) => u.claimMessage('m1', `host~6~${x}`, T0 + 3, (held) => held.owner === 'host~4~next')));
      expect(takers.filter(Boolean)).toHaveLength(1);
      // claims are not memory: no version moves
      expect(await u.version()).toBe(0);
    });

    memoryStoreIsolationContract(() => h.store);
  });
}

// ---------------------------------------------------------------------------------------------
// Isolation: a long random mix of operations over many users, checked against a model of what
// each user wrote. Records of different users share ids (turns), names (projects), keys (facts)
// and words, so a statement that forgot its user filter returns something the model rejects.

const USERS = 50;
const OPS = 10_000;
const WORDS = ['周报', '会议', '预算', '客户', '发布', '测试', 'budget', 'report', 'deploy'];
const PROJECTS = ['Apollo', 'apollo', '北极星', 'Zephyr', 'ZEPHYR'];
const FACT_KEYS = ['timeZone', 'name', 'drink'];
const OP_NAMES = [
  'addTurns', 'addTurns', 'addTurns', 'getTurns', 'recent', 'neighbours', 'count',
  'createTask', 'createTask', 'updateTask', 'updateTask', 'deleteTask', 'getTask', 'listTasks',
  'ensureProject', 'getProject', 'listProjects', 'addDecision', 'listDecisions',
  'setFact', 'setFact', 'getFact', 'listFacts', 'search', 'search', 'search', 'history', 'touch', 'stats', 'version',
] as const;

/** One random operation: a name, a user and numbers each operation reads as it needs. */
type Op = [name: (typeof OP_NAMES)[number], user: number, a: number, b: number, c: number];

interface UserModel {
  turns: Map<string, string>;
  tasks: Map<string, { title: string; status: string }>;
  projects: Map<string, string>;
  decisions: Set<string>;
  facts: Map<string, string>;
  factKeys: Map<string, string>;
  ever: Set<string>;
  touches: Map<string, number>;
  version: number;
}

const marker = (u: number) => `zz${u}q`;

function memoryStoreIsolationContract(store: () => MemoryStore): void {
  it(`never returns a record of another user (${OPS} random operations, ${USERS} users)`, async () => {
    const opArb = fc.tuple(fc.constantFrom(...OP_NAMES), fc.nat(USERS - 1), fc.nat(1_000_000), fc.nat(1_000_000), fc.nat(1_000_000)) as fc.Arbitrary<Op>;
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: OPS, maxLength: OPS }), async (ops) => {
        run++;
        const users = Array.from({ length: USERS }, (_, i) => store().forUser(`run${run}-user${i}`));
        const models: UserModel[] = users.map(() => ({
          turns: new Map(), tasks: new Map(), projects: new Map(), decisions: new Set(), facts: new Map(), factKeys: new Map(), ever: new Set(), touches: new Map(), version: 0,
        }));
        // Every id any user created, with its owner: operations aim at others' records on purpose.
        const owned: { kind: MemoryKind; id: string; owner: number }[] = [];
        const pick = (n: number) => (owned.length ? owned[n % owned.length]! : undefined);
        let clock = T0;
        for (const [step, [name, ui, a, b, c]] of ops.entries()) {
          const s = users[ui]!;
          const m = models[ui]!;
          const where = `step ${step} ${name} user ${ui}`;
          const words = (n: number) => `${n % 3 === 0 ? `${marker(ui)} ` : ''}${WORDS[n % WORDS.length]}${WORDS[(n >> 3) % WORDS.length]}`;
          const liveIds = () => new Set([...m.turns.keys(), ...m.tasks.keys(), ...m.projects.values(), ...m.decisions, ...m.facts.keys()]);
          clock += 1 + (a % 3);
          switch (name) {
            case 'addTurns': {
              const batch = Array.from({ length: 1 + (a % 3) }, (_, i) => turn(`t${(b + i * 7) % 30}`, words(c + i), clock - (c % 5) * 1000));
              const fresh = new Map<string, string>();
              for (const t of batch) if (!m.turns.has(t.id) && !fresh.has(t.id)) fresh.set(t.id, t.text);
              const { added } = await s.addTurns(batch);
              expect(added, where).toBe(fresh.size);
              for (const [id, text] of fresh) m.turns.set(id, text);
              if (fresh.size) m.version++;
              break;
            }
            case 'getTurns': {
              const ids = [`t${a % 30}`, `t${b % 30}`, `t${c % 30}`];
              const got = await s.getTurns(ids);
              expect(got.map((t) => t.id), where).toEqual(ids.filter((id) => m.turns.has(id)));
              for (const t of got) expect(t.text, where).toBe(m.turns.get(t.id));
              break;
            }
            case 'recent':
            case 'neighbours': {
              const got = name === 'recent' ? await s.recentTurns(1 + (a % 8)) : await s.turnNeighbours(`t${a % 30}`, b % 4, c % 4);
              if (name === 'recent') expect(got.length, where).toBe(Math.min(1 + (a % 8), m.turns.size));
              if (name === 'neighbours' && !m.turns.has(`t${a % 30}`)) expect(got, where).toEqual([]);
              for (const t of got) expect([t.userId, t.text], where).toEqual([s.userId, m.turns.get(t.id)]);
              break;
            }
            case 'count':
              expect(await s.countTurns(), where).toBe(m.turns.size);
              break;
            case 'createTask': {
              const task = await s.createTask({ title: words(a) });
              expect(owned.some((o) => o.id === task.id), where).toBe(false);
              m.tasks.set(task.id, { title: task.title, status: task.status });
              m.ever.add(task.id);
              owned.push({ kind: 'task', id: task.id, owner: ui });
              m.version++;
              break;
            }
            case 'updateTask':
            case 'deleteTask':
            case 'getTask': {
              const target = pick(a);
              const id = target?.kind === 'task' ? target.id : `task_missing${a}`;
              const mine = m.tasks.get(id);
              if (name === 'getTask') {
                const got = await s.getTask(id);
                expect(got ? { title: got.title, status: got.status, userId: got.userId } : undefined, where).toEqual(mine ? { ...mine, userId: s.userId } : undefined);
              } else if (name === 'deleteTask') {
                expect(await s.deleteTask(id), where).toBe(mine !== undefined);
                if (mine) {
                  m.tasks.delete(id);
                  m.touches.delete(id);
                  m.version++;
                }
              } else {
                const status = (['todo', 'doing', 'done', 'cancelled'] as const)[b % 4]!;
                const got = await s.updateTask(id, { status });
                expect(got?.title, where).toBe(mine?.title);
                if (mine && mine.status !== status) m.version++;
                if (mine) mine.status = status;
              }
              break;
            }
            case 'listTasks': {
              const got = await s.listTasks();
              expect(got.map((t) => t.id).sort(), where).toEqual([...m.tasks.keys()].sort());
              for (const t of got) expect(t.title, where).toBe(m.tasks.get(t.id)?.title);
              break;
            }
            case 'ensureProject': {
              const pname = PROJECTS[a % PROJECTS.length]!;
              const key = pname.toLowerCase();
              const p = await s.ensureProject(pname);
              const known = m.projects.get(key);
              if (known) expect(p.id, where).toBe(known);
              else {
                expect(owned.some((o) => o.id === p.id), where).toBe(false);
                m.projects.set(key, p.id);
                m.ever.add(p.id);
                owned.push({ kind: 'project', id: p.id, owner: ui });
                m.version++;
              }
              break;
            }
            case 'getProject': {
              const target = pick(a);
              const id = target?.kind === 'project' ? target.id : `proj_missing${a}`;
              const got = await s.getProject(id);
              expect(got?.id, where).toBe([...m.projects.values()].includes(id) ? id : undefined);
              break;
            }
            case 'listProjects':
              expect((await s.listProjects()).map((p) => p.id).sort(), where).toEqual([...m.projects.values()].sort());
              break;
            case 'addDecision': {
              const d = await s.addDecision({ text: words(a) });
              m.decisions.add(d.id);
              m.ever.add(d.id);
              owned.push({ kind: 'decision', id: d.id, owner: ui });
              m.version++;
              break;
            }
            case 'listDecisions':
              expect((await s.listDecisions()).map((d) => d.id).sort(), where).toEqual([...m.decisions].sort());
              break;
            case 'setFact': {
              const key = b % 4 === 3 ? null : FACT_KEYS[b % 3]!;
              const text = words(a % 12);
              const f = await s.setFact({ kind: 'fact', key, text });
              const existing = key ? m.factKeys.get(key) : undefined;
              if (existing) {
                expect(f.id, where).toBe(existing);
                if (m.facts.get(existing) !== text) m.version++;
              } else {
                expect(owned.some((o) => o.id === f.id), where).toBe(false);
                if (key) m.factKeys.set(key, f.id);
                m.ever.add(f.id);
                owned.push({ kind: 'fact', id: f.id, owner: ui });
                m.version++;
              }
              m.facts.set(f.id, text);
              break;
            }
            case 'getFact': {
              const key = FACT_KEYS[a % 3]!;
              const got = await s.getFactByKey(key);
              const id = m.factKeys.get(key);
              expect(got ? [got.id, got.text] : undefined, where).toEqual(id ? [id, m.facts.get(id)] : undefined);
              break;
            }
            case 'listFacts': {
              const got = await s.listFacts();
              expect(got.map((f) => f.id).sort(), where).toEqual([...m.facts.keys()].sort());
              for (const f of got) expect(f.text, where).toBe(m.facts.get(f.id));
              break;
            }
            case 'search': {
              const other = b % USERS;
              const query = a % 2 ? marker(other) : `${marker(other)} ${WORDS[c % WORDS.length]}`;
              const hits = await s.search(query, { limit: 100 });
              const live = liveIds();
              for (const hit of hits) expect([hit.kind, hit.id, live.has(hit.id)], where).toEqual([hit.kind, hit.id, true]);
              if (other !== ui && a % 2) expect(hits, where).toEqual([]);
              break;
            }
            case 'history': {
              const entries = await s.history({ limit: 50 });
              for (const e of entries) expect([e.userId, m.ever.has(e.recordId)], where).toEqual([s.userId, true]);
              break;
            }
            case 'touch':
            case 'stats': {
              const ids = [pick(a), pick(b)].filter((o) => o?.kind === 'task').map((o) => o!.id);
              if (name === 'touch') {
                await s.touch('task', ids, clock);
                for (const id of new Set(ids)) m.touches.set(id, (m.touches.get(id) ?? 0) + 1);
              } else {
                const stats = await s.accessStats('task', ids);
                for (const id of ids) expect(stats.get(id)?.count, where).toBe(m.touches.get(id));
              }
              break;
            }
            case 'version':
              expect(await s.version(), where).toBe(m.version);
              break;
          }
        }
        for (const [i, s] of users.entries()) expect(await s.version(), `user ${i} final version`).toBe(models[i]!.version);
      }),
      { numRuns: 1, endOnFailure: true },
    );
    // 10 000 operations take seconds on SQLite but can take a minute on a busy PostgreSQL.
  }, 300_000);
}
