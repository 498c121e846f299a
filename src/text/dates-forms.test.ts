// Date forms added for issue 25: Traditional and Cantonese script, holidays from calendars,
// years, quarters and parts of months, English clock phrases. The reference instant is not the
// Duckling corpus's (2026-03-11, a Wednesday, in Shanghai or New York), and holiday dates are
// the published ones for years the corpus does not contain.
import { describe, expect, it } from 'vitest';
import { extract } from '../memory/extract/extract.js';
import { resolveDates, resolveDue } from './dates.js';
import type { DateGrain, ResolveDatesOptions } from './dates.js';

const SHANGHAI: ResolveDatesOptions = { now: Date.parse('2026-03-11T09:30:00+08:00'), timeZone: 'Asia/Shanghai' };
const NEW_YORK: ResolveDatesOptions = { now: Date.parse('2026-03-11T09:30:00-04:00'), timeZone: 'America/New_York' };
const cst = (local: string) => Date.parse(`${local.replace(' ', 'T')}:00+08:00`);
/** New York wall time; every date below is in daylight time (UTC-4) unless it says otherwise. */
const edt = (local: string, offset = '-04:00') => Date.parse(`${local.replace(' ', 'T')}:00${offset}`);

interface Case {
  input: string;
  /** The phrase found; defaults to the input. */
  match?: string;
  start: number;
  end?: number;
  grain?: DateGrain;
}

function only(input: string, options: ResolveDatesOptions) {
  const mentions = resolveDates(input, options);
  expect(mentions, `${input}: ${JSON.stringify(mentions)}`).toHaveLength(1);
  return mentions[0]!;
}

function check(cases: Case[], options: ResolveDatesOptions) {
  for (const c of cases) {
    it(c.input, () => {
      const m = only(c.input, options);
      expect(m.text).toBe(c.match ?? c.input);
      expect(new Date(m.startMs).toISOString()).toBe(new Date(c.start).toISOString());
      if (c.end !== undefined) expect(new Date(m.endMs ?? NaN).toISOString()).toBe(new Date(c.end).toISOString());
      if (c.grain !== undefined) expect(m.grain).toBe(c.grain);
    });
  }
}

describe('Traditional script and Cantonese read as Simplified', () => {
  check(
    [
      { input: '下週三', start: cst('2026-03-18 00:00') },
      { input: '兩小時後', start: SHANGHAI.now + 2 * 3_600_000 },
      { input: '聽日', start: cst('2026-03-12 00:00') },
      { input: '尋日', start: cst('2026-03-10 00:00') },
      { input: '聽日下晝三點', start: cst('2026-03-12 15:00') },
      { input: '下個禮拜五', start: cst('2026-03-20 00:00') },
      { input: '今個月廿號', start: cst('2026-03-20 00:00') },
      { input: '兩個鐘之後', start: SHANGHAI.now + 2 * 3_600_000 },
    ],
    SHANGHAI,
  );

  it('keeps offsets and text as written inside a sentence', () => {
    const [m] = resolveDates('記得聽日開會', SHANGHAI);
    expect(m).toMatchObject({ text: '聽日', index: 2 });
  });
});

describe('Chinese holidays from the lunar calendar and fixed days', () => {
  check(
    [
      // 2026's Spring Festival (Feb 17) has passed: the next is 2027-02-06.
      { input: '春节', start: cst('2027-02-06 00:00') },
      { input: '除夕', start: cst('2027-02-05 00:00') },
      { input: '元宵节', start: cst('2027-02-20 00:00') },
      { input: '清明节', start: cst('2026-04-05 00:00') },
      { input: '端午节', start: cst('2026-06-19 00:00') },
      { input: '七夕', start: cst('2026-08-19 00:00') },
      { input: '中秋节', start: cst('2026-09-25 00:00') },
      { input: '重阳节', start: cst('2026-10-18 00:00') },
      { input: '元旦', start: cst('2027-01-01 00:00') },
      { input: '劳动节', start: cst('2026-05-01 00:00') },
      { input: '國慶節', start: cst('2026-10-01 00:00') },
      { input: '2028年春节', start: cst('2028-01-26 00:00') },
      { input: '明年中秋', start: cst('2027-09-15 00:00') },
    ],
    SHANGHAI,
  );

  it('国庆节前 is due at the end of the working day before it', () => {
    const due = resolveDue('国庆节前交报告', SHANGHAI);
    expect(due?.text).toBe('国庆节前');
    expect(due?.dueMs).toBe(cst('2026-09-30 18:00'));
  });
});

describe('Western, Jewish, Islamic and Hindu holidays', () => {
  check(
    [
      { input: 'Thanksgiving', start: edt('2026-11-26 00:00', '-05:00') },
      { input: 'Memorial Day', start: edt('2026-05-25 00:00') },
      { input: 'Christmas Eve', start: edt('2026-12-24 00:00', '-05:00') },
      { input: 'Easter', start: edt('2026-04-05 00:00') },
      { input: 'Orthodox Easter', start: edt('2026-04-12 00:00') },
      { input: 'Mother’s Day', start: edt('2026-05-10 00:00') },
      { input: 'Thanksgiving 2027', start: edt('2027-11-25 00:00', '-05:00') },
      // 1 Shawwal 1447 by Umm al-Qura.
      { input: 'Eid al-Fitr', start: edt('2026-03-20 00:00') },
      // 10 Tishri 5787 is September 21; it begins the evening before.
      { input: 'Yom Kippur', start: edt('2026-09-20 00:00') },
      { input: 'Ugadi 2025', start: edt('2025-03-30 00:00') },
      { input: 'Holi 2025', start: edt('2025-03-14 00:00') },
    ],
    NEW_YORK,
  );

  it('joins a holiday and the clock time after it', () => {
    expect(only('xmas at 6 pm', NEW_YORK).startMs).toBe(edt('2026-12-25 18:00', '-05:00'));
    expect(only('儿童节下午三点', SHANGHAI).startMs).toBe(cst('2026-06-01 15:00'));
  });
});

describe('years, quarters and parts of months', () => {
  check(
    [
      { input: '今年', start: cst('2026-01-01 00:00'), end: cst('2027-01-01 00:00'), grain: 'year' },
      { input: '明年', start: cst('2027-01-01 00:00'), end: cst('2028-01-01 00:00'), grain: 'year' },
      { input: '明年九月', start: cst('2027-09-01 00:00'), end: cst('2027-10-01 00:00'), grain: 'month' },
      { input: '前两月', start: cst('2026-01-01 00:00'), end: cst('2026-03-01 00:00'), grain: 'month' },
      { input: '下半月', start: cst('2026-03-16 00:00'), end: cst('2026-04-01 00:00') },
      { input: '下旬', start: cst('2026-03-21 00:00'), end: cst('2026-04-01 00:00') },
      { input: '第三季度', start: cst('2026-07-01 00:00'), end: cst('2026-10-01 00:00'), grain: 'quarter' },
    ],
    SHANGHAI,
  );
  check(
    [
      { input: 'late March', start: edt('2026-03-21 00:00'), end: edt('2026-04-01 00:00') },
      { input: 'Q3', start: edt('2026-07-01 00:00'), end: edt('2026-10-01 00:00'), grain: 'quarter' },
      { input: 'EOY', start: edt('2026-12-31 18:00', '-05:00') },
      { input: 'next year', start: edt('2027-01-01 00:00', '-05:00'), grain: 'year' },
      { input: 'in 2 years', start: edt('2028-03-11 00:00', '-05:00') },
      { input: 'two years ago', start: edt('2024-03-11 00:00') },
    ],
    NEW_YORK,
  );

  it('a quarter is due on its last day', () => {
    expect(resolveDue('ship it in Q3', NEW_YORK)?.dueMs).toBe(edt('2026-09-30 18:00'));
  });
});

describe('English clock phrases (issue 25 bugs)', () => {
  check(
    [
      { input: 'at 8 in the evening', start: edt('2026-03-11 20:00') },
      { input: 'quarter past 3', start: edt('2026-03-11 15:15') },
      { input: 'half past three pm', start: edt('2026-03-11 15:30') },
      { input: 'ten to 5', start: edt('2026-03-11 16:50') },
      { input: 'in 1/2 hour', start: NEW_YORK.now + 30 * 60_000 },
      { input: 'in a quarter of an hour', start: NEW_YORK.now + 15 * 60_000 },
      { input: '15h30', start: edt('2026-03-11 15:30') },
      { input: 'at 5 tomorrow afternoon', start: edt('2026-03-12 17:00') },
      { input: 'monday of this week', start: edt('2026-03-09 00:00') },
      { input: '3 fridays from now', start: edt('2026-03-27 00:00') },
    ],
    NEW_YORK,
  );

  it('"Sunday, Mar 8" said on Wednesday Mar 11 is the past Sunday, not next year\'s Mar 8', () => {
    expect(only('Sunday, Mar 8', NEW_YORK).startMs).toBe(edt('2026-03-08 00:00', '-05:00'));
  });
});

describe('through the extractor', () => {
  it('"提醒我聽日下晝三點開會" is a task due tomorrow at 15:00', () => {
    const x = extract('提醒我聽日下晝三點開會', SHANGHAI);
    expect(x.intent).toBe('create_task');
    expect(x.task?.due).toBe(cst('2026-03-12 15:00'));
  });

  it('"remind me to call Bob quarter past 3" keeps the minutes', () => {
    const x = extract('remind me to call Bob quarter past 3', NEW_YORK);
    expect(x.task?.due).toBe(edt('2026-03-11 15:15'));
  });
});
