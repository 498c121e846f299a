/**
 * The memory engine end to end on a real SQLite file: the Step 4 seed conversation in Chinese,
 * English task lifecycle, clarification instead of a write, LLM failure keeps the memory,
 * user isolation and bad input, and a message stored together with what it changed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { zonedTimeToInstant } from '../../src/core/time-zone.js';
import { CtxvmError } from '../../src/errors.js';
import { createMemoryManager, PAIR_WAIT_MS, type MemoryManager } from '../../src/memory/manager.js';
import type { Extraction } from '../../src/memory/extraction.js';
import type { MemoryStore } from '../../src/memory/memory-store.js';
import { createSqlMemoryStore, openMemoryStore } from '../../src/memory/store/sql-memory-store.js';
import { openWarmDatabase } from '../../src/store/warm/open.js';
import type { SqlDatabase } from '../../src/store/warm/sql.js';
import { createLruHotCache } from '../../src/store/drivers/hot-lru.js';
import type { HotCache } from '../../src/store/hot-cache.js';

const ZONE = 'Asia/Shanghai';
const at = (hour: number, minute = 0) => zonedTimeToInstant({ year: 2026, month: 3, day: 10, hour, minute }, ZONE);

let dir: string;
let store: MemoryStore;
let hot: HotCache;
let manager: MemoryManager;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-manager-'));
  store = await openMemoryStore({ db: join(dir, 'memory.db') });
  hot = createLruHotCache();
  manager = createMemoryManager({ store, hot, defaultTimeZone: ZONE });
});

afterEach(async () => {
  await hot.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the seed conversation (Chinese)', () => {
  it('creates two tasks with due times, answers the task question from memory, completes 周报', async () => {
    const u = 'alice';
    const r1 = await manager.processMessage({ userId: u, text: '记得下午三点要开项目评审会。', now: at(9, 30) });
    expect(r1.extraction.intent).toBe('create_task');
    expect(r1.applied).toHaveLength(1);
    const r2 = await manager.processMessage({ userId: u, text: '另外，下班前需要把周报发给我。', now: at(9, 31) });
    expect(r2.extraction.intent).toBe('create_task');

    const open = await manager.user(u).listTasks({ status: ['todo', 'doing'] });
    expect(open).toHaveLength(2);
    const review = open.find((t) => t.title.includes('评审'))!;
    const report = open.find((t) => t.title.includes('周报'))!;
    expect(review.dueAtMs).toBe(at(15));
    expect(report.dueAtMs).toBe(at(18));
    expect(review.sourceTurnIds).toEqual([r1.turnIds.user]);
    // records carry the message's own time, not the wall clock
    expect(review).toMatchObject({ createdAtMs: at(9, 30), updatedAtMs: at(9, 30) });
    expect(report.createdAtMs).toBe(at(9, 31));

    const r3 = await manager.processMessage({ userId: u, text: '下午后还有啥要做到？', now: at(9, 32) });
    expect(r3.extraction.intent).toBe('query_tasks');
    const taskLayer = r3.context.layers.find((l) => l.name === 'tasks')!;
    expect(taskLayer.items.map((i) => i.id).sort()).toEqual([review.id, report.id].sort());
    expect(r3.response).toContain('评审');
    expect(r3.response).toContain('周报');
    expect(r3.context.tokens).toBeLessThanOrEqual(r3.context.budgetTokens);

    const r4 = await manager.processMessage({ userId: u, text: '把写周报标记为完成', now: at(9, 33) });
    expect(r4.extraction.intent).toBe('complete_task');
    expect(r4.applied).toEqual([expect.objectContaining({ action: 'completed', id: report.id })]);
    expect((await manager.user(u).getTask(report.id))!.status).toBe('done');
    const history = await manager.user(u).history({ recordId: report.id });
    expect(history.some((h) => h.field === 'status' && JSON.parse(h.oldValue!) === 'todo' && JSON.parse(h.newValue!) === 'done' && h.turnId === r4.turnIds.user && h.atMs === at(9, 33))).toBe(true);

    // the full-history size is tracked for comparison with the rebuilt context
    expect(r4.metrics.fullHistoryTokens).toBeGreaterThan(0);
    for (const r of [r1, r2, r3, r4]) {
      expect(r.metrics.latencyMs.total).toBeGreaterThan(0);
      expect(r.context.tokens).toBeLessThanOrEqual(r.context.budgetTokens);
    }
  });

  it('ingests a dated conversation with each record stamped at its turn', async () => {
    const t1 = Date.parse('2023-05-08T13:56:00Z');
    const t2 = Date.parse('2023-05-09T08:00:00Z');
    const result = await manager.ingest('dora', [
      { role: 'user', text: 'Remind me to renew my passport by Friday', atMs: t1 },
      { role: 'assistant', text: 'Noted.', atMs: t1 + 1000 },
      { role: 'user', text: 'I finished renewing my passport', atMs: t2 },
    ]);
    expect(result.applied).toBe(2);
    const [task] = await manager.user('dora').listTasks();
    expect(task).toMatchObject({ status: 'done', createdAtMs: t1, updatedAtMs: t2 });
    expect((await manager.user('dora').history({ recordId: task!.id })).map((e) => e.atMs)).toEqual([t2, t1]);
  });

  it('applies an ingested turn once: a turn stored before is neither counted nor applied again', async () => {
    const t1 = Date.parse('2023-05-08T13:56:00Z');
    const turn = { id: 'm1', role: 'user' as const, text: 'Remind me to renew my passport by Friday', atMs: t1 };
    expect(await manager.ingest('dora', [turn])).toMatchObject({ added: 1, applied: 1, byIntent: { create_task: 1 } });
    const version = await manager.user('dora').version();
    expect(await manager.ingest('dora', [turn, { ...turn, id: 'm2', text: 'hello there', atMs: t1 + 1 }])).toMatchObject({ added: 1, applied: 0, byIntent: { chat: 1 } });
    expect(await manager.user('dora').listTasks()).toHaveLength(1);
    expect((await manager.user('dora').getTurns(['m1', 'm2'])).map((t) => t.id)).toEqual(['m1', 'm2']);
    expect(await manager.user('dora').version()).toBe(version + 1); // m2's turn, nothing else
  });

  it('does not read an ingested turn stored before, so a reader that fails on it stops nothing', async () => {
    const read: string[] = [];
    const reader = createMemoryManager({
      store,
      defaultTimeZone: ZONE,
      extractor: {
        extract: (text: string) => {
          read.push(text);
          if (text === 'stored') throw new Error('read again');
          return { intent: 'chat', confidence: 1, entities: [], language: 'en' } as unknown as Extraction;
        },
      },
    });
    const t1 = Date.parse('2023-05-09T10:00:00Z');
    await manager.ingest('fay', [{ id: 'f1', role: 'user', text: 'stored', atMs: t1 }], { extract: false });
    expect(await reader.ingest('fay', [{ id: 'f1', role: 'user', text: 'stored', atMs: t1 }, { id: 'f2', role: 'user', text: 'new', atMs: t1 + 1 }])).toMatchObject({ added: 1, byIntent: { chat: 1 } });
    expect(read).toEqual(['new']);
  });

  it('keeps an ingested turn, archived, when reading or applying it fails, and then throws', async () => {
    const archived: string[] = [];
    const archive = { append: async (_u: string, turns: readonly { id: string }[]) => void archived.push(...turns.map((t) => t.id)) };
    const t1 = Date.parse('2023-05-08T13:56:00Z');
    const failing = (fail: 'read' | 'apply') =>
      createMemoryManager({
        store,
        defaultTimeZone: ZONE,
        archive,
        extractor: {
          extract: () => {
            if (fail === 'read') throw new Error('the reader is down');
            // a task the store refuses to create
            return { intent: 'create_task', confidence: 1, entities: [], language: 'en', task: { title: 'renew passport', priority: 'soonest' } } as unknown as Extraction;
          },
        },
      });
    await expect(failing('read').ingest('eve', [{ id: 'r1', role: 'user', text: 'anything', atMs: t1 }, { id: 'r2', role: 'user', text: 'more', atMs: t1 + 1 }])).rejects.toThrow('the reader is down');
    await expect(failing('apply').ingest('eve', [{ id: 'a1', role: 'user', text: 'remind me to renew my passport', atMs: t1 + 2 }])).rejects.toThrow(/priority/);
    // the failing turns are stored and archived, as turns stored before they are read; the batch stops there
    expect((await manager.user('eve').getTurns(['r1', 'r2', 'a1'])).map((t) => t.id)).toEqual(['r1', 'a1']);
    expect(archived).toEqual(['r1', 'a1']);
    expect(await manager.user('eve').listTasks()).toEqual([]);
  });

  it('keeps the stable prefix byte-identical between turns while memory that feeds it is unchanged', async () => {
    const u = 'bob';
    await manager.processMessage({ userId: u, text: '记得下午三点要开项目评审会。', now: at(9, 30) });
    const a = await manager.processMessage({ userId: u, text: '下午还有什么事？', now: at(9, 31) });
    const b = await manager.processMessage({ userId: u, text: '还有别的吗？', now: at(9, 32) });
    expect(a.context.stablePrefixChars).toBeGreaterThan(0);
    expect(b.context.text.slice(0, b.context.stablePrefixChars)).toBe(a.context.text.slice(0, a.context.stablePrefixChars));
  });

  it('keeps the recently mentioned records in the hot tier after a message that changes memory (what 它 refers to)', async () => {
    const u = 'carol';
    const r = await manager.processMessage({ userId: u, text: '记得下午三点要开项目评审会。', now: at(9, 30) });
    const listed = await hot.get<{ id: string }[]>({ userId: u, kind: 'recent-entities' }, 'list');
    expect(listed?.map((e) => e.id)).toEqual([r.applied[0]!.id]);
  });
});

describe('task lifecycle (English)', () => {
  it('finds a task by name among many open ones, reschedules only the due time, then deletes it', async () => {
    const u = 'henry';
    await manager.processMessage({ userId: u, text: 'Remind me to renew the passport by Friday', now: at(8) });
    const chores = ['water the basil', 'call the plumber', 'book the dentist', 'pay the electricity bill', 'email the landlord', 'buy cat food', 'return the library books', 'fix the bike light', 'clean the fridge', 'order printer ink', 'update the resume', 'backup the laptop', 'wash the car', 'sort the mail'];
    for (const [i, chore] of chores.entries()) await manager.processMessage({ userId: u, text: `Remind me to ${chore} tomorrow`, now: at(8, i + 1) });
    const passport = (await manager.user(u).listTasks()).find((t) => t.title.includes('passport'))!;
    const done = await manager.processMessage({ userId: u, text: 'mark the passport task as done', now: at(9) });
    expect(done.extraction.intent).toBe('complete_task');
    expect(done.applied[0]).toMatchObject({ action: 'completed', id: passport.id });
    const after = (await manager.user(u).getTask(passport.id))!;
    expect(after.status).toBe('done');
    expect(after.title).toBe(passport.title);
    expect(after.dueAtMs).toBe(passport.dueAtMs);

    const plant = (await manager.user(u).listTasks()).find((t) => t.title === 'book the dentist')!;
    const moved = await manager.processMessage({ userId: u, text: 'move book the dentist to Monday at 10am', now: at(9, 5) });
    expect(moved.extraction.intent).toBe('update_task');
    const rescheduled = (await manager.user(u).getTask(plant.id))!;
    expect(rescheduled.dueAtMs).toBe(zonedTimeToInstant({ year: 2026, month: 3, day: 16, hour: 10, minute: 0 }, ZONE));
    expect([rescheduled.title, rescheduled.status, rescheduled.priority]).toEqual([plant.title, plant.status, plant.priority]);

    const removed = await manager.processMessage({ userId: u, text: 'delete the dentist task', now: at(9, 6) });
    expect(removed.extraction.intent).toBe('delete_task');
    expect(await manager.user(u).getTask(plant.id)).toBeUndefined();
    expect((await manager.user(u).history({ recordId: plant.id })).map((h) => h.field)).toContain('dueAtMs');
  });
});

describe('the rebuild answering a message', () => {
  it('is made as of the message itself, not of the minute cached rebuilds are rounded to', async () => {
    const u = 'iris';
    await manager.user(u).createTask({ title: 'send the invoice', dueAtMs: at(10) + 20_000 }); // 10:00:20
    const now = at(10) + 40_000; // 10:00:40: the task is overdue by 20 s
    const answered = await manager.processMessage({ userId: u, text: 'what is on my list?', now });
    const taskLine = (text: string) => text.split('\n').find((line) => line.startsWith('- [todo] send the invoice'));
    expect(taskLine(answered.context.text)).toMatch(/ · due .*\(overdue\)$/);
    // a context built for a request is cached by the minute: as of 10:00:00, not yet due
    const built = await manager.buildContext(u, 'what is on my list?', { now });
    expect(taskLine(built.text)).toMatch(/ · due 2026-03-10 10:00 Tue$/);
  });
});

describe('a message sent with an id (idempotent retries)', () => {
  it('is stored under the id; a repeat is refused with the stored reply and changes nothing', async () => {
    const u = 'jack';
    const first = await manager.processMessage({ userId: u, text: 'remind me to pay rent on friday', now: at(9), id: 'msg-1' });
    expect(first.turnIds).toEqual({ user: 'msg-1', assistant: 'msg-1:reply' });
    expect(first.applied).toHaveLength(1);
    expect(first.resumed).toBe(false);
    const repeat = await manager.processMessage({ userId: u, text: 'remind me to pay rent on friday', now: at(9, 1), id: 'msg-1' }).catch((e: unknown) => e);
    expect(CtxvmError.is(repeat) && repeat.code).toBe('E_CONFLICT');
    expect((repeat as CtxvmError).details).toEqual({ id: 'msg-1', turnIds: { user: 'msg-1', assistant: 'msg-1:reply' }, response: first.response });
    const s = manager.user(u);
    expect(await s.listTasks()).toHaveLength(1);
    expect(await s.countTurns()).toBe(2);
    // another user may use the same id
    await expect(manager.processMessage({ userId: 'kate', text: 'remind me to pay rent on friday', now: at(9), id: 'msg-1' })).resolves.toMatchObject({ turnIds: { user: 'msg-1' } });
  });

  it('is applied once when the same id arrives twice at once', async () => {
    const u = 'liam';
    const send = () => manager.processMessage({ userId: u, text: 'remind me to call the bank tomorrow at 10am', now: at(9), id: 'same' }).then(
      (r) => ({ ok: true as const, r }),
      (e: unknown) => ({ ok: false as const, e }),
    );
    const results = await Promise.all([send(), send(), send()]);
    // one applies it; the others, arriving while it is processed, are refused (README: 409 too)
    const done = results.flatMap((x) => (x.ok ? [x.r] : []));
    expect(done.map((r) => [r.resumed, r.applied.length])).toEqual([[false, 1]]);
    const refused = results.flatMap((x) => (x.ok ? [] : [x.e]));
    expect(refused).toHaveLength(2);
    for (const e of refused) {
      expect(CtxvmError.is(e) && e.code).toBe('E_CONFLICT');
      expect((e as CtxvmError).details).toMatchObject({ id: 'same', response: null });
    }
    expect(await manager.user(u).listTasks()).toHaveLength(1);
    expect(await manager.user(u).countTurns()).toBe(2);
  });

  it('refuses a repeat that arrives while the first waits for its reply', async () => {
    const u = 'lena';
    const text = 'remind me to water the plants on sunday';
    let release!: () => void;
    let called!: () => void;
    const calledNow = new Promise<void>((r) => (called = r));
    const slow = async () => {
      called();
      await new Promise<void>((r) => (release = r));
      return 'noted: plants on sunday';
    };
    const first = manager.processMessage({ userId: u, text, now: at(9), id: 'slow-1' }, slow);
    await calledNow; // the message is stored with its task; the reply is pending
    const repeat = await manager.processMessage({ userId: u, text, now: at(9), id: 'slow-1' }).catch((e: unknown) => e);
    expect(CtxvmError.is(repeat) && repeat.code).toBe('E_CONFLICT');
    expect((repeat as CtxvmError).details).toMatchObject({ id: 'slow-1', response: null });
    release();
    expect((await first).response).toBe('noted: plants on sunday');
    expect(await manager.user(u).listTasks()).toHaveLength(1);
    expect(await manager.user(u).countTurns()).toBe(2);
  });

  it('answers a retry of a message whose reply failed, without applying it again', async () => {
    const u = 'nora';
    const failing = async () => {
      throw new Error('provider down');
    };
    const text = 'remind me to book the dentist next tuesday';
    const failed = await manager.processMessage({ userId: u, text, now: at(9), id: 'm-1' }, failing).catch((e: unknown) => e);
    expect(CtxvmError.is(failed) && failed.code).toBe('E_LLM');
    expect((failed as CtxvmError).hint).toMatch(/same id/);
    expect(await manager.user(u).listTasks()).toHaveLength(1);
    // the retry (later, with the clock moved on) is answered as of the message, and applies nothing
    const retried = await manager.processMessage({ userId: u, text, now: at(9, 5), id: 'm-1' });
    expect(retried).toMatchObject({ resumed: true, applied: [], turnIds: { user: 'm-1', assistant: 'm-1:reply' } });
    expect(retried.response).toMatch(/dentist/i);
    expect(await manager.user(u).listTasks()).toHaveLength(1);
    const turns = await manager.user(u).recentTurns(10);
    expect(turns.map((t) => [t.id, t.atMs])).toEqual([
      ['m-1', at(9)],
      ['m-1:reply', at(9)],
    ]);
    // answered now: a third try is refused with that reply
    const third = await manager.processMessage({ userId: u, text, id: 'm-1' }).catch((e: unknown) => e);
    expect((third as CtxvmError).details).toMatchObject({ response: retried.response });
    // a message that changed nothing is stored alone when its reply fails, and answered on retry too
    await manager.processMessage({ userId: u, text: 'how are you?', now: at(10), id: 'm-2' }, failing).catch(() => undefined);
    expect(await manager.processMessage({ userId: u, text: 'how are you?', now: at(10, 1), id: 'm-2' })).toMatchObject({ resumed: true, applied: [] });
    expect(await manager.user(u).countTurns()).toBe(4);
  });

  it('refuses an id used before for a different text', async () => {
    await manager.processMessage({ userId: 'olga', text: 'remind me to water the plants tonight', now: at(9), id: 'same-id' });
    const other = await manager.processMessage({ userId: 'olga', text: 'remind me to call mum tonight', now: at(9), id: 'same-id' }).catch((e: unknown) => e);
    expect(CtxvmError.is(other) && other.code).toBe('E_CONFLICT');
    expect((other as CtxvmError).message).toMatch(/different message/);
    expect((await manager.user('olga').listTasks()).map((t) => t.title)).toEqual([expect.stringMatching(/plants/)]);
  });

  it('rejects an empty or overlong id', async () => {
    await expect(manager.processMessage({ userId: 'mia', text: 'hi', id: ' ' })).rejects.toMatchObject({ code: 'E_USAGE' });
    await expect(manager.processMessage({ userId: 'mia', text: 'hi', id: 'x'.repeat(257) })).rejects.toMatchObject({ code: 'E_USAGE' });
    expect(await manager.user('mia').countTurns()).toBe(0);
  });
});

describe('failures and bad input', () => {
  it('keeps the message and the extracted task when the LLM fails', async () => {
    const failing = async () => {
      throw new Error('provider down');
    };
    const error = await manager.processMessage({ userId: 'carol', text: 'Remind me to renew the passport by Friday', now: at(10) }, failing).catch((e: unknown) => e);
    expect(CtxvmError.is(error) && error.code).toBe('E_LLM');
    const s = manager.user('carol');
    expect((await s.recentTurns(5)).map((t) => t.text)).toContain('Remind me to renew the passport by Friday');
    expect((await s.listTasks()).map((t) => t.title.toLowerCase()).join(' ')).toContain('passport');
  });

  it('rejects empty text and an empty user with a usage error, and writes nothing', async () => {
    await expect(manager.processMessage({ userId: 'dave', text: '   ' })).rejects.toMatchObject({ code: 'E_USAGE' });
    await expect(manager.processMessage({ userId: '', text: 'hi' })).rejects.toMatchObject({ code: 'E_USAGE' });
    expect(await manager.user('dave').countTurns()).toBe(0);
  });

  it('handles SQL metacharacters, emoji and mixed scripts as plain text, isolated per user', async () => {
    const evil = `'); DROP TABLE tasks; -- 记得明天 10am 提交 "report" 🚀 OR 1=1`;
    const r = await manager.processMessage({ userId: 'eve', text: evil, now: at(11) });
    expect(typeof r.response).toBe('string');
    expect((await manager.user('eve').recentTurns(2))[0]!.text).toBe(evil);
    expect(await manager.user('frank').countTurns()).toBe(0);
    expect(await manager.user('frank').listTasks()).toEqual([]);
    const ctx = await manager.buildContext('frank', 'report');
    expect(ctx.layers.flatMap((l) => l.items).filter((i) => i.kind !== 'system')).toEqual([]);
  });

  it('processes 1 MB of text without failing', async () => {
    const big = '今天的会议纪要：'.padEnd(1_000_000, '项目进展顺利。');
    const r = await manager.processMessage({ userId: 'gina', text: big, now: at(12) });
    expect(r.context.tokens).toBeLessThanOrEqual(r.context.budgetTokens);
  });
});

describe('a message and what it changes are stored together', () => {
  it('writes the message and its memory change in one transaction, the reply in a second', async () => {
    const db = await openWarmDatabase({ db: join(dir, 'counted.db') });
    let transactions = 0;
    const counted: SqlDatabase = { ...db, transaction: (fn) => (transactions++, db.transaction(fn)) };
    const counting = createMemoryManager({ store: createSqlMemoryStore(counted), hot, defaultTimeZone: ZONE });
    await counting.processMessage({ userId: 'ivy', text: 'hello there', now: at(8) }); // builds the full-text index first
    transactions = 0;
    const r = await counting.processMessage({ userId: 'ivy', text: 'Remind me to renew the passport by Friday', now: at(9) });
    expect(r.applied.map((c) => c.action)).toEqual(['created']);
    expect(transactions).toBe(2);
    const task = (await counting.user('ivy').listTasks())[0]!;
    expect(task.sourceTurnIds).toEqual([r.turnIds.user]);
    await db.close();
  });

  it('writes a message that changes nothing together with its reply, in one transaction', async () => {
    const db = await openWarmDatabase({ db: join(dir, 'counted.db') });
    let transactions = 0;
    const counted: SqlDatabase = { ...db, transaction: (fn) => (transactions++, db.transaction(fn)) };
    const counting = createMemoryManager({ store: createSqlMemoryStore(counted), hot, defaultTimeZone: ZONE });
    await counting.processMessage({ userId: 'ivy', text: 'Remind me to renew the passport by Friday', now: at(8) });
    for (const [i, text] of ['What do I have to do this week?', 'thanks, that helps'].entries()) {
      transactions = 0;
      const r = await counting.processMessage({ userId: 'ivy', text, now: at(9, i) });
      expect(r.applied).toEqual([]);
      expect(transactions).toBe(1);
      // stored in order, the message before its reply, and the rebuild still answered from memory
      const turns = await counting.user('ivy').recentTurns(2);
      expect(turns.map((t) => [t.id, t.role])).toEqual([
        [r.turnIds.user, 'user'],
        [r.turnIds.assistant, 'assistant'],
      ]);
    }
    await db.close();
  });

  it('stores a message that changes nothing on its own when the reply takes longer than PAIR_WAIT_MS', async () => {
    let seenDuringCall: string[] = [];
    const slow = async () => {
      await new Promise((resolve) => setTimeout(resolve, PAIR_WAIT_MS * 3));
      seenDuringCall = (await manager.user('lea').recentTurns(5)).map((t) => t.id);
      return 'Here is your list.';
    };
    const r = await manager.processMessage({ userId: 'lea', text: 'What do I have to do today?', id: 'slow-1', now: at(11) }, slow);
    expect(seenDuringCall).toEqual(['slow-1']);
    expect((await manager.user('lea').recentTurns(5)).map((t) => [t.id, t.role])).toEqual([
      ['slow-1', 'user'],
      [r.turnIds.assistant, 'assistant'],
    ]);
  });

  it('stores a message that changes nothing when the LLM or the rebuild fails, and no reply', async () => {
    const failing = async () => {
      throw new Error('provider down');
    };
    const error = await manager.processMessage({ userId: 'kim', text: 'What do I have to do today?', id: 'q-1', now: at(10) }, failing).catch((e: unknown) => e);
    expect(CtxvmError.is(error) && error.code).toBe('E_LLM');
    expect((await manager.user('kim').recentTurns(5)).map((t) => [t.id, t.role])).toEqual([['q-1', 'user']]);

    const notString = (async () => 42) as unknown as () => Promise<string>;
    await expect(manager.processMessage({ userId: 'kim', text: 'thanks', id: 'q-2', now: at(10, 1) }, notString)).rejects.toMatchObject({ code: 'E_LLM' });

    const broken = new Error('the rebuild broke');
    const m = createMemoryManager({ store, defaultTimeZone: ZONE, rebuild: async () => Promise.reject(broken) });
    await expect(m.processMessage({ userId: 'kim', text: 'anything new?', id: 'q-3', now: at(10, 2) })).rejects.toBe(broken);
    expect((await manager.user('kim').recentTurns(5)).map((t) => [t.id, t.role])).toEqual([
      ['q-1', 'user'],
      ['q-2', 'user'],
      ['q-3', 'user'],
    ]);
  });

  it('keeps neither when the memory change fails: no change without its source turn', async () => {
    const failure = new Error('the disk is full');
    const failingChange: MemoryStore = {
      ...store,
      forUser(userId, opts) {
        const inner = store.forUser(userId, opts);
        return { ...inner, atomically: (fn) => inner.atomically!((s) => fn({ ...s, createTask: () => Promise.reject(failure) })) };
      },
    };
    const m = createMemoryManager({ store: failingChange, defaultTimeZone: ZONE });
    await expect(m.processMessage({ userId: 'jack', text: 'Remind me to renew the passport by Friday', now: at(9) })).rejects.toBe(failure);
    expect(await store.forUser('jack').countTurns()).toBe(0);
    expect(await store.forUser('jack').listTasks()).toEqual([]);
    // the same message goes through once the store works again
    const r = await manager.processMessage({ userId: 'jack', text: 'Remind me to renew the passport by Friday', now: at(9) });
    expect(r.applied).toHaveLength(1);
    expect(await store.forUser('jack').countTurns()).toBe(2);
  });
});

describe('the instant of a message', () => {
  it('is Unix ms, a Date or ISO text with an offset, all the same instant; anything else is refused', async () => {
    const due = async (u: string, now: number | Date | string) => {
      await manager.processMessage({ userId: u, text: '记得下午三点要开项目评审会。', now });
      return (await manager.user(u).listTasks())[0]!;
    };
    const ms = await due('ms', at(9, 30));
    expect(ms.dueAtMs).toBe(at(15));
    expect(await due('date', new Date(at(9, 30)))).toMatchObject({ dueAtMs: at(15), createdAtMs: at(9, 30) });
    expect(await due('iso', '2026-03-10T09:30:00+08:00')).toMatchObject({ dueAtMs: at(15), createdAtMs: at(9, 30) });
    expect(await due('z', '2026-03-10T01:30:00Z')).toMatchObject({ dueAtMs: at(15), createdAtMs: at(9, 30) });
    for (const bad of ['2026-03-10 09:30', 'tomorrow', new Date(NaN), Number.NaN] as const) {
      const e = await manager.processMessage({ userId: 'bad', text: 'hello', now: bad }).catch((error: unknown) => error);
      expect(CtxvmError.is(e) && e.code, String(bad)).toBe('E_USAGE');
    }
    expect(await manager.user('bad').listTasks()).toEqual([]);
  });
});
