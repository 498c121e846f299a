import { afterEach, describe, expect, it } from 'vitest';
import { CtxvmError } from '../errors.js';
import { resolveDates, resolveDue } from './dates.js';
import type { DateGrain, DateMention, ResolveDatesOptions } from './dates.js';

/** Wednesday 2026-03-11 09:30 in Shanghai. */
const SHANGHAI: ResolveDatesOptions = { now: Date.parse('2026-03-11T09:30:00+08:00'), timeZone: 'Asia/Shanghai' };

/** One fixture: the input, the phrase that should be found, and what it should resolve to. */
interface Fixture {
  input: string;
  /** The matched phrase; defaults to the whole input. */
  match?: string;
  /** Expected start as an ISO-8601 instant. */
  start: string;
  end?: string;
  hasTime: boolean;
  grain: DateGrain;
  source?: DateMention['source'];
}

const T = true;
const D = false;
const cst = (local: string) => `${local.replace(' ', 'T')}:00+08:00`;

/** Resolved against SHANGHAI; all wall times below are China Standard Time. */
const CHINESE: Fixture[] = [
  { input: '下班前', start: cst('2026-03-11 18:00'), hasTime: T, grain: 'hour', source: 'rule' },
  { input: '明天下班前', start: cst('2026-03-12 18:00'), hasTime: T, grain: 'hour', source: 'rule' },
  { input: '后天下班前', start: cst('2026-03-13 18:00'), hasTime: T, grain: 'hour' },
  { input: '周五下班之前', start: cst('2026-03-13 18:00'), hasTime: T, grain: 'hour' },
  { input: '今晚', start: cst('2026-03-11 20:00'), hasTime: T, grain: 'hour', source: 'rule' },
  { input: '明晚', start: cst('2026-03-12 20:00'), hasTime: T, grain: 'hour' },
  { input: '明早', start: cst('2026-03-12 09:00'), hasTime: T, grain: 'hour' },
  { input: '月底', start: cst('2026-03-31 18:00'), hasTime: T, grain: 'day', source: 'rule' },
  { input: '下个月底', start: cst('2026-04-30 18:00'), hasTime: T, grain: 'day' },
  { input: '年底', start: cst('2026-12-31 18:00'), hasTime: T, grain: 'day' },
  { input: '周末', start: cst('2026-03-14 10:00'), end: cst('2026-03-16 00:00'), hasTime: T, grain: 'day', source: 'rule' },
  { input: '这周末', start: cst('2026-03-14 10:00'), end: cst('2026-03-16 00:00'), hasTime: T, grain: 'day' },
  { input: '下周末', start: cst('2026-03-21 10:00'), end: cst('2026-03-23 00:00'), hasTime: T, grain: 'day' },
  { input: '周末前', start: cst('2026-03-13 18:00'), hasTime: T, grain: 'hour' },
  { input: '本周内', start: cst('2026-03-13 18:00'), hasTime: T, grain: 'week', source: 'rule' },
  { input: '这周内', start: cst('2026-03-13 18:00'), hasTime: T, grain: 'week' },
  { input: '下周之内', start: cst('2026-03-20 18:00'), hasTime: T, grain: 'week' },
  { input: '下午三点', start: cst('2026-03-11 15:00'), hasTime: T, grain: 'hour', source: 'chrono' },
  { input: '下午3点半', start: cst('2026-03-11 15:30'), hasTime: T, grain: 'minute' },
  { input: '晚上八点', start: cst('2026-03-11 20:00'), hasTime: T, grain: 'hour' },
  { input: '明天上午', start: cst('2026-03-12 09:00'), hasTime: T, grain: 'hour', source: 'rule' },
  { input: '今天下午', start: cst('2026-03-11 15:00'), hasTime: T, grain: 'hour' },
  { input: '明天下午两点', start: cst('2026-03-12 14:00'), hasTime: T, grain: 'hour', source: 'chrono' },
  { input: '后天', start: cst('2026-03-13 00:00'), hasTime: D, grain: 'day' },
  { input: '大后天', start: cst('2026-03-14 00:00'), hasTime: D, grain: 'day' },
  { input: '下周一', start: cst('2026-03-16 00:00'), hasTime: D, grain: 'day' },
  { input: '下下周一', start: cst('2026-03-23 00:00'), hasTime: D, grain: 'day', source: 'rule' },
  // This week's Monday, even though it is past; a bare weekday is the next one.
  { input: '本周一', start: cst('2026-03-09 00:00'), hasTime: D, grain: 'day' },
  { input: '周一', start: cst('2026-03-16 00:00'), hasTime: D, grain: 'day' },
  { input: '周五晚上', start: cst('2026-03-13 20:00'), hasTime: T, grain: 'hour', source: 'rule' },
  // 1-6 o'clock without 上午/凌晨 means the afternoon; 9:00 has passed, so it is tomorrow's.
  { input: '三点开会', match: '三点', start: cst('2026-03-11 15:00'), hasTime: T, grain: 'hour' },
  { input: '九点', start: cst('2026-03-12 09:00'), hasTime: T, grain: 'hour' },
  { input: '三点一刻', start: cst('2026-03-11 15:15'), hasTime: T, grain: 'minute', source: 'rule' },
  { input: '下午两点到四点', start: cst('2026-03-11 14:00'), end: cst('2026-03-11 16:00'), hasTime: T, grain: 'hour' },
  { input: '3月15号下午', start: cst('2026-03-15 15:00'), hasTime: T, grain: 'hour', source: 'rule' },
  { input: '15号前', match: '15号', start: cst('2026-03-15 00:00'), hasTime: D, grain: 'day', source: 'rule' },
  { input: '下个月15号', start: cst('2026-04-15 00:00'), hasTime: D, grain: 'day' },
  { input: '下周', start: cst('2026-03-16 00:00'), end: cst('2026-03-23 00:00'), hasTime: D, grain: 'week' },
  { input: '下个月', start: cst('2026-04-01 00:00'), end: cst('2026-05-01 00:00'), hasTime: D, grain: 'month' },
  { input: '两小时后', start: cst('2026-03-11 11:30'), hasTime: T, grain: 'hour', source: 'chrono' },
  { input: '半小时后', start: cst('2026-03-11 10:00'), hasTime: T, grain: 'minute' },
  { input: '三天后', start: cst('2026-03-14 00:00'), hasTime: D, grain: 'day' },
  { input: '一周内', start: cst('2026-03-18 00:00'), hasTime: D, grain: 'day' },
  // A month-day already past this year is next year's.
  { input: '3月1日', start: cst('2027-03-01 00:00'), hasTime: D, grain: 'day' },
  { input: '明年4月1日', start: cst('2027-04-01 00:00'), hasTime: D, grain: 'day' },
];

/** Resolved against SHANGHAI too: the zone decides, not the language. */
const ENGLISH: Fixture[] = [
  { input: 'EOD', start: cst('2026-03-11 18:00'), hasTime: T, grain: 'hour', source: 'rule' },
  { input: 'end of day', start: cst('2026-03-11 18:00'), hasTime: T, grain: 'hour' },
  { input: 'by end of day', start: cst('2026-03-11 18:00'), hasTime: T, grain: 'hour' },
  { input: 'tomorrow EOD', start: cst('2026-03-12 18:00'), hasTime: T, grain: 'hour', source: 'rule' },
  { input: 'EOD tomorrow', start: cst('2026-03-12 18:00'), hasTime: T, grain: 'hour' },
  { input: 'COB Friday', start: cst('2026-03-13 18:00'), hasTime: T, grain: 'hour' },
  { input: 'close of business', start: cst('2026-03-11 18:00'), hasTime: T, grain: 'hour' },
  { input: 'COB', start: cst('2026-03-11 18:00'), hasTime: T, grain: 'hour' },
  { input: 'end of week', start: cst('2026-03-13 18:00'), hasTime: T, grain: 'week' },
  { input: 'EOW', start: cst('2026-03-13 18:00'), hasTime: T, grain: 'week' },
  { input: 'by the end of the week', start: cst('2026-03-13 18:00'), hasTime: T, grain: 'week' },
  { input: 'end of next week', start: cst('2026-03-20 18:00'), hasTime: T, grain: 'week' },
  { input: 'by Friday', match: 'Friday', start: cst('2026-03-13 00:00'), hasTime: D, grain: 'day', source: 'chrono' },
  { input: 'end of month', start: cst('2026-03-31 18:00'), hasTime: T, grain: 'day', source: 'rule' },
  { input: 'end of next month', start: cst('2026-04-30 18:00'), hasTime: T, grain: 'day' },
  { input: 'tonight', start: cst('2026-03-11 20:00'), hasTime: T, grain: 'hour', source: 'rule' },
  { input: 'this weekend', start: cst('2026-03-14 10:00'), end: cst('2026-03-16 00:00'), hasTime: T, grain: 'day' },
  { input: 'next weekend', start: cst('2026-03-21 10:00'), end: cst('2026-03-23 00:00'), hasTime: T, grain: 'day' },
  { input: 'before the weekend', start: cst('2026-03-13 18:00'), hasTime: T, grain: 'hour' },
  { input: 'tomorrow', start: cst('2026-03-12 00:00'), hasTime: D, grain: 'day', source: 'chrono' },
  { input: 'tomorrow at 3pm', start: cst('2026-03-12 15:00'), hasTime: T, grain: 'hour' },
  { input: 'tomorrow morning', start: cst('2026-03-12 09:00'), hasTime: T, grain: 'hour', source: 'rule' },
  { input: 'next Monday', start: cst('2026-03-16 00:00'), hasTime: D, grain: 'day' },
  { input: 'Monday', start: cst('2026-03-16 00:00'), hasTime: D, grain: 'day' },
  { input: 'in 2 hours', start: cst('2026-03-11 11:30'), hasTime: T, grain: 'hour' },
  { input: 'in 30 minutes', start: cst('2026-03-11 10:00'), hasTime: T, grain: 'minute' },
  { input: 'at 5pm', start: cst('2026-03-11 17:00'), hasTime: T, grain: 'hour' },
  { input: 'at 3', start: cst('2026-03-11 15:00'), hasTime: T, grain: 'hour' },
  { input: 'Friday 10am', start: cst('2026-03-13 10:00'), hasTime: T, grain: 'hour' },
  { input: 'Friday afternoon', start: cst('2026-03-13 15:00'), hasTime: T, grain: 'hour' },
  { input: 'March 20', start: cst('2026-03-20 00:00'), hasTime: D, grain: 'day' },
  { input: '3/20', start: cst('2026-03-20 00:00'), hasTime: D, grain: 'day' },
  { input: '12/25', start: cst('2026-12-25 00:00'), hasTime: D, grain: 'day' },
  { input: 'next week', start: cst('2026-03-16 00:00'), end: cst('2026-03-23 00:00'), hasTime: D, grain: 'week', source: 'rule' },
  { input: 'next month', start: cst('2026-04-01 00:00'), end: cst('2026-05-01 00:00'), hasTime: D, grain: 'month' },
  { input: 'in March', match: 'March', start: cst('2026-03-01 00:00'), end: cst('2026-04-01 00:00'), hasTime: D, grain: 'month' },
  { input: 'noon tomorrow', start: cst('2026-03-12 12:00'), hasTime: T, grain: 'hour' },
  { input: 'this afternoon', start: cst('2026-03-11 15:00'), hasTime: T, grain: 'hour' },
  { input: 'the day after tomorrow', start: cst('2026-03-13 00:00'), hasTime: D, grain: 'day' },
  { input: 'in 3 days', start: cst('2026-03-14 00:00'), hasTime: D, grain: 'day' },
  { input: 'tomorrow 3-4pm', start: cst('2026-03-12 15:00'), end: cst('2026-03-12 16:00'), hasTime: T, grain: 'hour' },
  { input: 'last Friday', start: cst('2026-03-06 00:00'), hasTime: D, grain: 'day' },
  { input: 'yesterday', start: cst('2026-03-10 00:00'), hasTime: D, grain: 'day' },
  // A zone written in the text wins over the user's.
  { input: '5pm EST', start: '2026-03-11T17:00:00-05:00', hasTime: T, grain: 'hour' },
  { input: '2026-03-20T10:00:00Z', start: '2026-03-20T10:00:00Z', hasTime: T, grain: 'hour' },
];

function expectFixture(fixture: Fixture, options: ResolveDatesOptions): void {
  const mentions = resolveDates(fixture.input, options);
  const phrase = fixture.match ?? fixture.input;
  expect(mentions.map((m) => m.text)).toEqual([phrase]);
  const [mention] = mentions as [DateMention];
  expect(new Date(mention.startMs).toISOString()).toBe(new Date(fixture.start).toISOString());
  expect(mention.endMs === undefined ? undefined : new Date(mention.endMs).toISOString()).toBe(
    fixture.end === undefined ? undefined : new Date(fixture.end).toISOString(),
  );
  expect(mention.hasTime).toBe(fixture.hasTime);
  expect(mention.grain).toBe(fixture.grain);
  if (fixture.source) expect(mention.source).toBe(fixture.source);
  expect(fixture.input.slice(mention.index, mention.index + mention.text.length)).toBe(phrase);
}

describe('resolveDates, Chinese, Wednesday 2026-03-11 09:30 Asia/Shanghai', () => {
  it.each(CHINESE.map((f) => [f.input, f] as const))('%s', (_input, fixture) => expectFixture(fixture, SHANGHAI));
});

describe('resolveDates, English, Wednesday 2026-03-11 09:30 Asia/Shanghai', () => {
  it.each(ENGLISH.map((f) => [f.input, f] as const))('%s', (_input, fixture) => expectFixture(fixture, SHANGHAI));
});

/** Fixtures in New York around the 2026 DST changes (spring forward 03-08 02:00, fall back 11-01 02:00). */
const NEW_YORK: Array<Fixture & { now: string }> = [
  // Friday before the change: next Monday is in EDT (-4), not in today's EST (-5).
  { now: '2026-03-06T10:00:00-05:00', input: 'next Monday 9am', start: '2026-03-09T09:00:00-04:00', hasTime: T, grain: 'hour' },
  { now: '2026-03-06T10:00:00-05:00', input: '下周一上午9点', start: '2026-03-09T09:00:00-04:00', hasTime: T, grain: 'hour' },
  { now: '2026-03-06T10:00:00-05:00', input: 'end of next week', start: '2026-03-13T18:00:00-04:00', hasTime: T, grain: 'week' },
  {
    now: '2026-03-06T10:00:00-05:00',
    input: 'this weekend',
    start: '2026-03-07T10:00:00-05:00',
    end: '2026-03-09T00:00:00-04:00',
    hasTime: T,
    grain: 'day',
  },
  // 02:30 does not exist on 03-08: it becomes 03:30 EDT.
  { now: '2026-03-07T10:00:00-05:00', input: 'tomorrow at 2:30am', start: '2026-03-08T03:30:00-04:00', hasTime: T, grain: 'minute' },
  { now: '2026-03-07T10:00:00-05:00', input: '明天下班前', start: '2026-03-08T18:00:00-04:00', hasTime: T, grain: 'hour' },
  // Durations are real elapsed time: two hours after 01:30 EST is 04:30 EDT.
  { now: '2026-03-08T01:30:00-05:00', input: 'in 2 hours', start: '2026-03-08T04:30:00-04:00', hasTime: T, grain: 'hour' },
  { now: '2026-03-08T01:30:00-05:00', input: '两小时后', start: '2026-03-08T04:30:00-04:00', hasTime: T, grain: 'hour' },
  // 01:30 happens twice on 11-01: the earlier (EDT) one.
  { now: '2026-10-31T10:00:00-04:00', input: 'tomorrow at 1:30am', start: '2026-11-01T01:30:00-04:00', hasTime: T, grain: 'minute' },
  { now: '2026-10-31T10:00:00-04:00', input: 'tomorrow', start: '2026-11-01T00:00:00-04:00', hasTime: D, grain: 'day' },
];

describe('resolveDates in America/New_York across DST changes', () => {
  it.each(NEW_YORK.map((f) => [f.input, f.now, f] as const))('%s at %s', (_input, now, fixture) =>
    expectFixture(fixture, { now: Date.parse(now), timeZone: 'America/New_York' }),
  );
});

describe('resolveDates with fixed offsets', () => {
  const india = { now: Date.parse('2026-03-11T09:30:00+05:30'), timeZone: 330 };
  it.each<Fixture>([
    { input: 'tomorrow EOD', start: '2026-03-12T18:00:00+05:30', hasTime: T, grain: 'hour' },
    { input: '明天下午3点', start: '2026-03-12T15:00:00+05:30', hasTime: T, grain: 'hour' },
    { input: 'tonight', start: '2026-03-11T20:00:00+05:30', hasTime: T, grain: 'hour' },
  ])('$input at +330 minutes', (fixture) => expectFixture(fixture, india));

  it('accepts offset strings', () => {
    expectFixture(
      { input: '明天下班前', start: '2026-03-12T18:00:00-03:00', hasTime: T, grain: 'hour' },
      { now: Date.parse('2026-03-11T09:30:00-03:00'), timeZone: '-03:00' },
    );
  });
});

describe('resolveDates in sentences', () => {
  it('finds every mention, in order, with exact offsets', () => {
    const text = '明天上午开会，周五下班前交报告，review the PR by EOD tomorrow';
    const mentions = resolveDates(text, SHANGHAI);
    expect(mentions.map((m) => m.text)).toEqual(['明天上午', '周五下班前', 'by EOD tomorrow']);
    for (const m of mentions) expect(text.slice(m.index, m.index + m.text.length)).toBe(m.text);
    expect(mentions.map((m) => m.startMs)).toEqual([cst('2026-03-12 09:00'), cst('2026-03-13 18:00'), cst('2026-03-12 18:00')].map(Date.parse));
  });

  it('keeps chrono whole when it read more than a rule ("下周五下午三点")', () => {
    const mentions = resolveDates('下周五下午三点开项目评审会', SHANGHAI);
    expect(mentions).toHaveLength(1);
    expect(mentions[0]).toMatchObject({ text: '下周五下午三点', source: 'chrono', startMs: Date.parse(cst('2026-03-20 15:00')) });
  });

  it('lets a rule win over an overlapping chrono reading ("明天下班前")', () => {
    const mentions = resolveDates('明天下班前提交', SHANGHAI);
    expect(mentions).toHaveLength(1);
    expect(mentions[0]).toMatchObject({ text: '明天下班前', source: 'rule' });
  });

  it.each(['写周报', '我3号线上班，10号楼开会', 'I sat down in the sun', 'it took 3.5 hours', 'review the PR #42 ASAP', 'v2 release notes', ''])(
    'finds nothing in %j',
    (text) => {
      expect(resolveDates(text, SHANGHAI)).toEqual([]);
    },
  );
});

describe('resolveDates does not depend on the process time zone', () => {
  const original = process.env.TZ;
  afterEach(() => {
    if (original === undefined) delete process.env.TZ;
    else process.env.TZ = original;
  });

  it('resolves 今天/明天 in the user zone while the server is still on the previous day', () => {
    // 07:00 Thursday in Shanghai is 23:00 Wednesday UTC and 16:00 Wednesday in Los Angeles.
    const early = { now: Date.parse('2026-03-12T07:00:00+08:00'), timeZone: 'Asia/Shanghai' };
    // The clock-time phrases are chrono's, whose zh.hans parsers read the process's local time.
    const phrases = '今天交周报，明天上午开会，周五下班前，九点，明天下午两点，后天晚上8点，下周三下午4点，tomorrow EOD, Monday at 3';
    const results: string[] = [];
    for (const tz of ['UTC', 'America/Los_Angeles', 'Asia/Kolkata', 'Pacific/Kiritimati']) {
      process.env.TZ = tz;
      results.push(JSON.stringify(resolveDates(phrases, early)));
    }
    expect(new Set(results).size).toBe(1);
    const starts = resolveDates(phrases, early).map((m) => new Date(m.startMs).toISOString());
    expect(starts).toEqual(
      [
        '2026-03-12T00:00:00+08:00',
        '2026-03-13T09:00:00+08:00',
        '2026-03-13T18:00:00+08:00',
        '2026-03-12T09:00:00+08:00',
        '2026-03-13T14:00:00+08:00',
        '2026-03-14T20:00:00+08:00',
        '2026-03-18T16:00:00+08:00',
        '2026-03-13T18:00:00+08:00',
        '2026-03-16T15:00:00+08:00',
      ].map((iso) => new Date(iso).toISOString()),
    );
  });
});

describe('resolveDue', () => {
  it.each<[string, string]>([
    ['把写周报标记为完成，明天下班前交', cst('2026-03-12 18:00')],
    ['明天交报告', cst('2026-03-12 18:00')], // a date alone is due at the workday end
    ['下周交方案', cst('2026-03-20 18:00')], // a week is due on its Friday
    ['下个月完成迁移', cst('2026-04-30 18:00')], // a month on its last day
    ['明天上午开会，周五前交报告', cst('2026-03-13 18:00')], // "前" marks the deadline
    ['send the report by Friday, meeting Monday 10am', cst('2026-03-13 18:00')],
    ['昨天说过的事，后天再做', cst('2026-03-13 18:00')], // the past mention loses
    ['周末去买菜', cst('2026-03-14 10:00')],
    ['finish it tonight', cst('2026-03-11 20:00')],
  ])('%s', (text, due) => {
    const result = resolveDue(text, SHANGHAI);
    expect(result).toBeDefined();
    expect(new Date(result!.dueMs).toISOString()).toBe(new Date(due).toISOString());
    expect(text.slice(result!.index, result!.index + result!.text.length)).toBe(result!.text);
  });

  it('returns undefined without a date', () => {
    expect(resolveDue('把写周报标记为完成', SHANGHAI)).toBeUndefined();
    expect(resolveDue('', SHANGHAI)).toBeUndefined();
  });

  it('uses the configured workday end', () => {
    const options = { ...SHANGHAI, workdayEnd: { hour: 17, minute: 30 } };
    expect(resolveDue('下班前', options)?.dueMs).toBe(Date.parse(cst('2026-03-11 17:30')));
    expect(resolveDue('明天', options)?.dueMs).toBe(Date.parse(cst('2026-03-12 17:30')));
    expect(resolveDue('EOD Friday', options)?.dueMs).toBe(Date.parse(cst('2026-03-13 17:30')));
  });

  it('keeps the mention it chose', () => {
    const due = resolveDue('明天交报告', SHANGHAI)!;
    expect(due).toMatchObject({ text: '明天', hasTime: false, grain: 'day', startMs: Date.parse(cst('2026-03-12 00:00')) });
  });
});

describe('option validation', () => {
  it('rejects bad zones, reference times and workday ends with usage errors', () => {
    const cases: ResolveDatesOptions[] = [
      { ...SHANGHAI, timeZone: 'Shanghai' },
      { ...SHANGHAI, now: Number.NaN },
      { ...SHANGHAI, workdayEnd: { hour: 24, minute: 0 } },
      { ...SHANGHAI, workdayEnd: { hour: 18, minute: 60 } },
    ];
    for (const options of cases) {
      let error: unknown;
      try {
        resolveDates('明天', options);
      } catch (caught) {
        error = caught;
      }
      expect(CtxvmError.is(error) && error.code).toBe('E_USAGE');
    }
  });
});

describe('resolveDates on a repeat', () => {
  it('answers a text asked again at the same instant as the first time, with its own objects', () => {
    const text = '明天下午三点开会, and the report is due Friday';
    const first = resolveDates(text, SHANGHAI);
    first[0]!.startMs = 0;
    first.pop();
    expect(resolveDates(text, SHANGHAI)).toEqual(resolveDates(`${text} `, SHANGHAI));
    expect(resolveDates(text, SHANGHAI)).toHaveLength(2);
    // another instant is another answer
    const dayLater = resolveDates(text, { ...SHANGHAI, now: SHANGHAI.now + 86_400_000 });
    expect(dayLater[0]!.startMs - resolveDates(text, SHANGHAI)[0]!.startMs).toBe(86_400_000);
  });
});
