import { describe, expect, it } from 'vitest';
import { extract } from './extract.js';
import { zonedParts } from '../../core/time-zone.js';
import type { TimeZone } from '../../core/time-zone.js';
import type { Intent } from '../extraction.js';
import type { TaskPriority } from '../model.js';

/** Tuesday 2026-03-10 09:30 in Shanghai. */
const ZONE = 'Asia/Shanghai';
const NOW = Date.parse('2026-03-10T09:30:00+08:00');

const FIXTURES: Fixture[] = [
  // New tasks, with due times in the user's zone (date-only dues are at the 18:00 workday end).
  { text: '记得下午三点要开项目评审会。', intent: 'create_task', title: '开项目评审会', due: '2026-03-10 15:00' },
  { text: '另外，下班前需要把周报发给我。', intent: 'create_task', title: '把周报发给我', due: '2026-03-10 18:00' },
  { text: '提醒我明天早上八点给客户打电话', intent: 'create_task', title: '给客户打电话', due: '2026-03-11 08:00' },
  { text: '周五之前把预算表发给财务', intent: 'create_task', title: '把预算表发给财务', due: '2026-03-13 18:00' },
  { text: '紧急：今天下班前提交季度报告', intent: 'create_task', title: '提交季度报告', due: '2026-03-10 18:00', priority: 'urgent' },
  { text: '明天上午十点和老王开会', intent: 'create_task', title: '和老王开会', due: '2026-03-11 10:00' },
  { text: '下周一要交设计稿，很重要', intent: 'create_task', title: '交设计稿', due: '2026-03-16 18:00', priority: 'high' },
  { text: '帮我加个待办：买牛奶', intent: 'create_task', title: '买牛奶', due: null },
  { text: '今晚八点提醒我健身', intent: 'create_task', title: '健身', due: '2026-03-10 20:00' },
  { text: '设个明天早上七点的闹钟', intent: 'create_task', title: '闹钟', due: '2026-03-11 07:00' },
  { text: '月底前完成XX项目的验收', intent: 'create_task', title: '完成XX项目的验收', due: '2026-03-31 18:00', project: 'XX' },
  { text: '十分钟后提醒我关火', intent: 'create_task', title: '关火', due: '2026-03-10 09:40' },
  { text: '后天下午记得去取快递', intent: 'create_task', title: '去取快递', due: '2026-03-12 15:00' },
  { text: '本周内把合同审完', intent: 'create_task', title: '把合同审完', due: '2026-03-13 18:00' },
  { text: '下周三下午三点半和设计团队评审原型', intent: 'create_task', title: '和设计团队评审原型', due: '2026-03-18 15:30' },
  { text: '周末带孩子去打疫苗', intent: 'create_task', title: '带孩子去打疫苗', due: '2026-03-14 10:00' },
  { text: '明天下午3点review一下PR', intent: 'create_task', title: 'review一下PR', due: '2026-03-11 15:00' },
  { text: '不着急，有空的时候整理一下照片', intent: 'create_task', title: '整理一下照片', priority: 'low' },
  // Queries.
  { text: '下午后还有啥要做到？', intent: 'query_tasks' },
  { text: '我今天有什么任务？', intent: 'query_tasks' },
  { text: '这周还有哪些事没做完', intent: 'query_tasks' },
  { text: '看看明天的日程', intent: 'query_tasks' },
  { text: '明天有什么会？', intent: 'query_tasks' },
  { text: 'XX项目进展如何？', intent: 'query_project', project: 'XX' },
  // Changes (no recent records here; see references.test.ts for targets).
  { text: '取消明天的牙医预约', intent: 'delete_task' },
  { text: '把周会改到周四下午四点', intent: 'update_task', due: '2026-03-12 16:00' },
  { text: '周报写完了', intent: 'complete_task' },
  // Memory.
  { text: '我们决定用PostgreSQL，因为它支持JSONB', intent: 'record_decision', memory: '我们决定用PostgreSQL', rationale: '它支持JSONB' },
  { text: '最后决定发布会推迟到四月，因为供应商延期了', intent: 'record_decision', rationale: '供应商延期了' },
  { text: '我住在上海', intent: 'record_fact' },
  { text: '我女儿在上小学三年级', intent: 'record_fact' },
  { text: '我对花生过敏', intent: 'record_fact' },
  { text: '以后按优先级排序', intent: 'set_preference', key: 'taskSort' },
  { text: '我在东八区', intent: 'set_preference', key: 'timeZone' },
  { text: '以后都用中文回复我', intent: 'set_preference', key: 'language' },
  { text: '叫我老王就行', intent: 'set_preference', key: 'name' },
  { text: '我上次说的预算是多少？', intent: 'recall', memory: '预算' },
  { text: '你还记得我说过的那家餐厅吗', intent: 'recall' },
  // Not for memory.
  { text: '你好', intent: 'chat' },
  { text: '今天天气怎么样', intent: 'chat' },
  { text: '播放周杰伦的歌', intent: 'chat' },
  { text: '谢谢！', intent: 'chat' },
  { text: '把客厅的灯关掉', intent: 'chat' },
];

describe('extract (Chinese, now = 2026-03-10 09:30 Asia/Shanghai)', () => {
  it('has at least 40 fixtures', () => {
    expect(FIXTURES.length).toBeGreaterThanOrEqual(40);
  });

  for (const f of FIXTURES) {
    it(`${f.text} → ${f.intent}`, () => {
      const e = extract(f.text, { now: NOW, timeZone: ZONE });
      expect(e.language).toBe('zh');
      expect(e.source).toBe('rules');
      expect(e.intent).toBe(f.intent);
      expect(e.confidence).toBeGreaterThanOrEqual(0);
      expect(e.confidence).toBeLessThanOrEqual(1);
      if (f.title !== undefined) expect(e.task?.title).toBe(f.title);
      if (f.due !== undefined) expect(e.task?.due == null ? null : wallTime(e.task.due, ZONE)).toBe(f.due);
      if (f.priority !== undefined) expect(e.task?.priority).toBe(f.priority);
      if (f.key !== undefined) expect(e.memory?.key).toBe(f.key);
      if (f.memory !== undefined) expect(e.memory?.text).toBe(f.memory);
      if (f.rationale !== undefined) expect(e.memory?.rationale).toBe(f.rationale);
      if (f.project !== undefined) expect(e.entities.find((x) => x.type === 'project')?.text).toBe(f.project);
    });
  }

  it('keeps the due phrase as written and reports the date entity', () => {
    const e = extract('另外，下班前需要把周报发给我。', { now: NOW, timeZone: ZONE });
    expect(e.task?.duePhrase).toBe('下班前');
    expect(e.entities.some((x) => x.type === 'time' && x.text === '下班前')).toBe(true);
    expect(e.clarification).toBeUndefined();
  });
});

/** One utterance and what the extractor should make of it. */
interface Fixture {
  text: string;
  intent: Intent;
  /** Expected task title (create), or the target's title (change requests). */
  title?: string;
  /** Expected due as local wall time "YYYY-MM-DD HH:mm", or null for none. */
  due?: string | null;
  priority?: TaskPriority;
  /** Expected memory key (preferences) or text (recall topic, decision statement). */
  key?: string | null;
  memory?: string;
  rationale?: string;
  project?: string;
}

/** Formats an instant as "YYYY-MM-DD HH:mm" in `zone`. */
function wallTime(ms: number, zone: TimeZone): string {
  const p = zonedParts(ms, zone);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${p.year}-${pad(p.month)}-${pad(p.day)} ${pad(p.hour)}:${pad(p.minute)}`;
}
