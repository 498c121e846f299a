import { describe, expect, it } from 'vitest';
import type { RecentEntity } from '../extraction.js';
import { extract } from './extract.js';
import { rankMatches, similarity } from './fuzzy.js';

const SHANGHAI = { now: Date.parse('2026-03-10T09:30:00+08:00'), timeZone: 'Asia/Shanghai' };
const NEW_YORK = { now: Date.parse('2026-03-10T09:30:00-04:00'), timeZone: 'America/New_York' };

/** Most recent first, as the manager passes them. */
const ZH_RECENT: RecentEntity[] = [
  { kind: 'task', id: 't-report', text: '把周报发给我', status: 'todo' },
  { kind: 'task', id: 't-review', text: '开项目评审会', status: 'todo' },
  { kind: 'project', id: 'p-xx', text: 'XX' },
  { kind: 'task', id: 't-milk', text: '买牛奶', status: 'done' },
];
const EN_RECENT: RecentEntity[] = [
  { kind: 'task', id: 't-deck', text: 'finish the quarterly report', status: 'todo' },
  { kind: 'task', id: 't-flights', text: 'book flights to Tokyo', status: 'todo' },
  { kind: 'task', id: 't-dentist', text: 'call the dentist', status: 'todo' },
];

describe('fuzzy matching', () => {
  it('matches a short Chinese name inside a longer one', () => {
    expect(similarity('周报', '写周报')).toBeGreaterThan(0.8);
    expect(similarity('写周报', '把周报发给我')).toBeGreaterThan(0.5);
    expect(similarity('写周报', '买牛奶')).toBe(0);
  });

  it('matches English names by content words and stems', () => {
    expect(similarity('the report', 'finish the quarterly report')).toBeGreaterThan(0.8);
    expect(similarity('reports', 'quarterly report')).toBeGreaterThan(0.5);
    expect(similarity('the report', 'book flights to Tokyo')).toBe(0);
  });

  it('is 1 for identical names and 0 for empty ones', () => {
    expect(similarity('开项目评审会', '开项目评审会')).toBe(1);
    expect(similarity('', '写周报')).toBe(0);
    expect(similarity('!!!', '???')).toBe(0);
  });

  it('ranks the best candidate first and keeps the caller order on ties', () => {
    const items = ['写周报', '周报', '买牛奶'];
    const ranked = rankMatches('周报', items, (x) => x);
    expect(ranked.map((r) => r.item)).toEqual(['周报', '写周报']);
  });
});

describe('reference resolution', () => {
  it('completes the task named by a fuzzy match ("把写周报标记为完成")', () => {
    const e = extract('把写周报标记为完成', { ...SHANGHAI, recent: ZH_RECENT });
    expect(e.intent).toBe('complete_task');
    expect(e.target).toMatchObject({ kind: 'task', id: 't-report', phrase: '写周报' });
    expect(e.task).toMatchObject({ title: '把周报发给我', status: 'done', stated: ['status'] });
    expect(e.target!.confidence).toBeGreaterThanOrEqual(0.6);
    expect(e.clarification).toBeUndefined();
  });

  it('prefers the exact task when two names are close', () => {
    const recent: RecentEntity[] = [{ kind: 'task', id: 'a', text: '把周报发给我' }, { kind: 'task', id: 'b', text: '写周报' }];
    const e = extract('写周报做完了', { ...SHANGHAI, recent });
    expect(e.intent).toBe('complete_task');
    expect(e.target?.id).toBe('b');
  });

  it('reads 它 and "it" as the most recent open task', () => {
    const recent: RecentEntity[] = [{ kind: 'task', id: 'closed', text: '买牛奶', status: 'done' }, ...ZH_RECENT];
    const zh = extract('它完成了', { ...SHANGHAI, recent });
    expect(zh.intent).toBe('complete_task');
    expect(zh.target).toMatchObject({ id: 't-report', phrase: '它' });
    const en = extract('I finished it', { ...NEW_YORK, recent: EN_RECENT });
    expect(en.target).toMatchObject({ id: 't-deck', phrase: 'it' });
  });

  it('reads ordinals in list order: 第二个, "the second one", "task 3"', () => {
    expect(extract('删掉第二个', { ...SHANGHAI, recent: ZH_RECENT }).target?.id).toBe('t-review');
    expect(extract('delete the second one', { ...NEW_YORK, recent: EN_RECENT }).target?.id).toBe('t-flights');
    expect(extract('mark task 3 as done', { ...NEW_YORK, recent: EN_RECENT }).target?.id).toBe('t-dentist');
  });

  it('reads 最后一个 and "the last one" as the last of the list', () => {
    // Among tasks only: the project in the list is not a task.
    expect(extract('最后一个删掉', { ...SHANGHAI, recent: ZH_RECENT }).target?.id).toBe('t-milk');
    expect(extract('the last one is done', { ...NEW_YORK, recent: EN_RECENT }).target?.id).toBe('t-dentist');
  });

  it('reads 上面那个 and "that one" as the most recent', () => {
    expect(extract('把上面那个取消', { ...SHANGHAI, recent: ZH_RECENT }).target?.id).toBe('t-report');
    expect(extract('cancel that one', { ...NEW_YORK, recent: EN_RECENT }).target?.id).toBe('t-deck');
  });

  it('moves the meant task and states only the due change', () => {
    const e = extract('它推迟到明天下午四点', { ...SHANGHAI, recent: ZH_RECENT });
    expect(e.intent).toBe('update_task');
    expect(e.target?.id).toBe('t-report');
    expect(e.task?.stated).toEqual(['due']);
    expect(e.task?.due).toBe(Date.parse('2026-03-11T16:00:00+08:00'));
    const en = extract('push the report back to next monday', { ...NEW_YORK, recent: EN_RECENT });
    expect(en.target?.id).toBe('t-deck');
    expect(en.task?.duePhrase).toBe('next monday');
  });

  it('ignores an ordinal beyond the list and falls back to asking', () => {
    const e = extract('delete the fifth one', { ...NEW_YORK, recent: EN_RECENT });
    expect(e.intent).toBe('delete_task');
    expect(e.target).toBeUndefined();
    expect(e.clarification).toBe('Which task do you mean?');
    expect(e.confidence).toBeLessThan(0.6);
  });

  it('resolves a project status question against recent projects', () => {
    const e = extract('XX项目进展如何？', { ...SHANGHAI, recent: ZH_RECENT });
    expect(e.intent).toBe('query_project');
    expect(e.target).toMatchObject({ kind: 'project', id: 'p-xx' });
  });
});

describe('clarification', () => {
  it('asks in Chinese when the only candidate is a weak match', () => {
    const recent: RecentEntity[] = [{ kind: 'task', id: 'xx', text: '完成XX项目' }, { kind: 'task', id: 'yy', text: '完成YY项目' }];
    const e = extract('项目完成了', { ...SHANGHAI, recent });
    expect(e.intent).toBe('complete_task');
    expect(e.confidence).toBeLessThan(0.6);
    expect(e.clarification).toBe('你指的是「完成XX项目」这个任务吗？');
  });

  it('asks in English when two tasks match equally', () => {
    const recent: RecentEntity[] = [{ kind: 'task', id: 'a', text: 'send the report to Ann' }, { kind: 'task', id: 'b', text: 'send the report to Bob' }];
    const e = extract('the report is done', { ...NEW_YORK, recent });
    expect(e.intent).toBe('complete_task');
    expect(e.clarification).toBe('Do you mean the task “send the report to Ann”?');
  });

  it('asks which task when a change names nothing and several could be meant', () => {
    const e = extract('完成了', { ...SHANGHAI, recent: ZH_RECENT });
    expect(e.intent).toBe('complete_task');
    expect(e.clarification).toBe('你指的是哪个任务？');
  });

  it('takes the only candidate with low confidence, and says which', () => {
    const e = extract('done', { ...NEW_YORK, recent: [EN_RECENT[1]!] });
    expect(e.intent).toBe('complete_task');
    expect(e.target?.id).toBe('t-flights');
    expect(e.clarification).toBe('Do you mean the task “book flights to Tokyo”?');
  });

  it('does not ask when the target is clear', () => {
    expect(extract('delete the second one', { ...NEW_YORK, recent: EN_RECENT }).clarification).toBeUndefined();
  });
});
