/**
 * Periods longer than a week and spans counted from now, in both languages: years (今年, 明年,
 * "next year"), a month of a given year (明年九月, 2014/10), quarters (Q3, 第三季度, "this
 * quarter"), parts of a month (上旬/中旬/下旬, 上半月/下半月, "early/mid/late March"), halves of
 * a year (上半年, 下半年), the beginning and end of a year (BOY, EOY), and "the last/next N
 * units" (前两天, 上两小时, "next 3 days", "past 2 weeks").
 *
 * Decisions: a period starts at its first instant and carries its exclusive end; early/mid/late
 * cut a month at days 10 and 20 (上旬/中旬/下旬 likewise), 上半月/下半月 at day 15; the end of a
 * year is December 31 at the workday end (a deadline, like 年底), its beginning January 1 to
 * April 1. A quarter or month named without a year is this year's. "The last N units" are the N
 * whole units before the current one (前两天 said on the 12th: the 10th and 11th); "the next N"
 * the N whole units after it.
 */
import { addDays, addMonths, daysInMonth, mondayOf, startOfDate, timeMention } from './date-calendar.js';
import type { CivilDate, DateContext, DateGrain, DateRule, ResolvedDate } from './date-calendar.js';
import { parseZhNumber } from './date-rules-zh.js';

type Unit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year';

const ZH_NUM = '[零〇一二两三四五六七八九十廿\\d]{1,3}';
const ZH_YEAR_OFFSETS: Readonly<Record<string, number>> = { 今年: 0, 本年: 0, 明年: 1, 下年: 1, 去年: -1, 上年: -1, 后年: 2, 前年: -2 };
const EN_OFFSETS: Readonly<Record<string, number>> = { this: 0, current: 0, next: 1, following: 1, coming: 1, upcoming: 1, last: -1, previous: -1, past: -1 };
const EN_COUNTS: Readonly<Record<string, number>> = {
  a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12, few: 3, 'a few': 3, couple: 2, 'a couple of': 2, 'couple of': 2,
};
const EN_COUNT = `(?:\\d{1,3}|a\\s+few|a\\s+couple\\s+of|couple\\s+of|few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)`;
const enCount = (text: string) => (/^\d+$/.test(text) ? Number(text) : EN_COUNTS[text.toLowerCase().replace(/\s+/g, ' ')]);
const MONTH_NAMES = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const MONTH_WORDS = 'january|february|march|april|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec|May';
const monthNumber = (word: string) => {
  const w = word.toLowerCase();
  return MONTH_NAMES.findIndex((m) => m.startsWith(w.slice(0, 3))) + 1;
};

/** [start, end) of the whole unit `offset` units from the one containing the context's now. */
function unitSpan(ctx: DateContext, unit: Unit, from: number, count: number): ResolvedDate {
  const grain: DateGrain = unit === 'second' ? 'minute' : unit;
  if (unit === 'second' || unit === 'minute' || unit === 'hour') {
    const size = unit === 'second' ? 1000 : unit === 'minute' ? 60_000 : 3_600_000;
    // Truncation in the user's zone: zones are whole minutes, and hours are cut on the wall clock.
    const p = ctx.nowParts;
    const wall = unit === 'second' ? ctx.now - (ctx.now % 1000) : unit === 'minute' ? timeMention(ctx, ctx.today, { hour: p.hour, minute: p.minute }).startMs : timeMention(ctx, ctx.today, { hour: p.hour, minute: 0 }).startMs;
    return { startMs: wall + from * size, endMs: wall + (from + count) * size, hasTime: true, grain };
  }
  const first = firstDayOf(ctx.today, unit);
  const start = stepDays(first, unit, from);
  const end = stepDays(first, unit, from + count);
  return { startMs: startOfDate(ctx, start), endMs: startOfDate(ctx, end), hasTime: false, grain };
}

function firstDayOf(date: CivilDate, unit: 'day' | 'week' | 'month' | 'quarter' | 'year'): CivilDate {
  if (unit === 'day') return date;
  if (unit === 'week') return mondayOf(date);
  if (unit === 'month') return { ...date, day: 1 };
  if (unit === 'quarter') return { year: date.year, month: date.month - ((date.month - 1) % 3), day: 1 };
  return { year: date.year, month: 1, day: 1 };
}

function stepDays(first: CivilDate, unit: 'day' | 'week' | 'month' | 'quarter' | 'year', n: number): CivilDate {
  if (unit === 'day') return addDays(first, n);
  if (unit === 'week') return addDays(first, 7 * n);
  return addMonths(first, n * (unit === 'month' ? 1 : unit === 'quarter' ? 3 : 12));
}

function period(ctx: DateContext, start: CivilDate, end: CivilDate, grain: DateGrain): ResolvedDate {
  return { startMs: startOfDate(ctx, start), endMs: startOfDate(ctx, end), hasTime: false, grain };
}
const yearPeriod = (ctx: DateContext, year: number) => period(ctx, { year, month: 1, day: 1 }, { year: year + 1, month: 1, day: 1 }, 'year');
const quarterPeriod = (ctx: DateContext, year: number, q: number) => {
  const start = { year, month: 3 * (q - 1) + 1, day: 1 };
  return period(ctx, start, addMonths(start, 3), 'quarter');
};
/** Part of a month: days `from` to `to` (inclusive; `to` past the month's end means its last day). */
function monthPart(ctx: DateContext, year: number, month: number, from: number, to: number): ResolvedDate {
  const last = Math.min(to, daysInMonth(year, month));
  return period(ctx, { year, month, day: from }, addDays({ year, month, day: last }, 1), 'day');
}
const yearEnd = (ctx: DateContext, year: number): ResolvedDate => ({ ...timeMention(ctx, { year, month: 12, day: 31 }, ctx.workdayEnd), grain: 'day' });

const ZH_UNITS: Readonly<Record<string, Unit>> = { 秒: 'second', 秒钟: 'second', 分钟: 'minute', 分: 'minute', 小时: 'hour', 钟头: 'hour', 天: 'day', 日: 'day', 周: 'week', 星期: 'week', 礼拜: 'week', 月: 'month', 季度: 'quarter', 年: 'year' };
const ZH_PARTS: Readonly<Record<string, readonly [number, number]>> = {
  上旬: [1, 10], 中旬: [11, 20], 下旬: [21, 31], 上半月: [1, 15], 下半月: [16, 31], 月初: [1, 10], 月中: [11, 20],
};
const EN_PARTS: Readonly<Record<string, readonly [number, number]>> = { early: [1, 10], beginning: [1, 10], mid: [11, 20], middle: [11, 20], late: [21, 31] };
const ZH_MONTH_OFFSETS: Readonly<Record<string, number>> = { 本: 0, 这个: 0, 这: 0, 下个: 1, 下: 1, 上个: -1, 上: -1 };

function zhYear(g: Record<string, string | undefined>, ctx: DateContext): number | undefined {
  if (g.year !== undefined) return Number(g.year);
  if (g.ymod !== undefined) return ctx.today.year + (ZH_YEAR_OFFSETS[g.ymod] ?? 0);
  return undefined;
}
const ZH_YEAR = `(?:(?<year>\\d{4})年|(?<ymod>今年|本年|明年|下年|去年|上年|后年|前年))`;

/** Period rules, Chinese and English. */
export const PERIOD_DATE_RULES: readonly DateRule[] = [
  {
    name: 'zh.last-or-next-n',
    pattern: new RegExp(`(?<dir>上|前|过去|最近|下|后|未来|接下来)(?<n>${ZH_NUM}|几)个?(?<unit>秒钟|秒|分钟|小时|钟头|天|日|周|星期|礼拜|月|季度|年)(?![前后内里])`, 'gu'),
    resolve(g, ctx) {
      const n = g.n === '几' ? 3 : parseZhNumber(g.n ?? '');
      const unit = ZH_UNITS[g.unit ?? ''];
      if (n === undefined || n < 1 || !unit) return undefined;
      const past = ['上', '前', '过去', '最近'].includes(g.dir ?? '');
      return unitSpan(ctx, unit, past ? -n : 1, n);
    },
  },
  {
    name: 'zh.year',
    pattern: new RegExp(`${ZH_YEAR}(?<half>上半年|下半年)?(?!\\s*(?:${ZH_NUM}\\s*月|第|[底末初]|${ZH_NUM}季度|的?(?:春节|元旦|国庆|中秋|清明|端午)))`, 'gu'),
    resolve(g, ctx) {
      const year = zhYear(g, ctx);
      if (year === undefined) return undefined;
      if (g.half === '上半年') return period(ctx, { year, month: 1, day: 1 }, { year, month: 7, day: 1 }, 'month');
      if (g.half === '下半年') return period(ctx, { year, month: 7, day: 1 }, { year: year + 1, month: 1, day: 1 }, 'month');
      return yearPeriod(ctx, year);
    },
  },
  {
    name: 'zh.half-year',
    pattern: /(?<![年])(?<half>上半年|下半年)/gu,
    resolve: (g, ctx) =>
      g.half === '上半年'
        ? period(ctx, { year: ctx.today.year, month: 1, day: 1 }, { year: ctx.today.year, month: 7, day: 1 }, 'month')
        : period(ctx, { year: ctx.today.year, month: 7, day: 1 }, { year: ctx.today.year + 1, month: 1, day: 1 }, 'month'),
  },
  {
    name: 'zh.month-of-year',
    pattern: new RegExp(`${ZH_YEAR}的?(?<mon>${ZH_NUM})月份?(?!\\s*${ZH_NUM}\\s*[日号]|[底末初中]|上旬|中旬|下旬|上半|下半)`, 'gu'),
    resolve(g, ctx) {
      const year = zhYear(g, ctx);
      const month = parseZhNumber(g.mon ?? '');
      if (year === undefined || month === undefined || month < 1 || month > 12) return undefined;
      return period(ctx, { year, month, day: 1 }, addMonths({ year, month, day: 1 }, 1), 'month');
    },
  },
  {
    name: 'zh.part-of-month',
    pattern: new RegExp(`(?:${ZH_YEAR}?(?<mon>${ZH_NUM})月份?|(?<which>本|这个|这|下个|下|上个|上)月)?(?<part>上旬|中旬|下旬|上半月|下半月|月初|月中)`, 'gu'),
    resolve(g, ctx) {
      const [from, to] = ZH_PARTS[g.part ?? ''] ?? [1, 10];
      let year = ctx.today.year;
      let month = ctx.today.month;
      if (g.mon !== undefined) {
        const m = parseZhNumber(g.mon);
        if (m === undefined || m < 1 || m > 12) return undefined;
        month = m;
        year = zhYear(g, ctx) ?? (m < ctx.today.month ? year + 1 : year);
      } else if (g.which !== undefined) {
        const d = addMonths({ ...ctx.today, day: 1 }, ZH_MONTH_OFFSETS[g.which] ?? 0);
        year = d.year;
        month = d.month;
      }
      return monthPart(ctx, year, month, from, to);
    },
  },
  {
    name: 'zh.quarter',
    pattern: new RegExp(`${ZH_YEAR}?的?(?:第?(?<q>[一二三四1-4])季度|(?<which>本|这个|这|下个|下|上个|上)季度|[Qq](?<q2>[1-4]))`, 'gu'),
    resolve(g, ctx) {
      if (g.which !== undefined) return unitSpan(ctx, 'quarter', ZH_MONTH_OFFSETS[g.which] ?? 0, 1);
      const q = parseZhNumber(g.q ?? g.q2 ?? '');
      if (q === undefined || q < 1 || q > 4) return undefined;
      return quarterPeriod(ctx, zhYear(g, ctx) ?? ctx.today.year, q);
    },
  },
  {
    name: 'en.last-or-next-n',
    pattern: new RegExp(`\\b(?:the\\s+)?(?<dir>next|past|last|previous|upcoming|coming|following)\\s+(?<n>${EN_COUNT})\\s+(?<unit>seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|quarters?|years?)\\b`, 'giu'),
    resolve(g, ctx) {
      const n = enCount(g.n ?? '');
      const unitWord = (g.unit ?? '').toLowerCase().replace(/s$/, '');
      const unit = ({ min: 'minute', hr: 'hour' } as Record<string, Unit>)[unitWord] ?? (unitWord as Unit);
      if (n === undefined || n < 1) return undefined;
      const past = ['past', 'last', 'previous'].includes((g.dir ?? '').toLowerCase());
      return unitSpan(ctx, unit, past ? -n : 1, n);
    },
  },
  {
    name: 'en.year',
    pattern: /\b(?<which>this|next|last|current|previous|the\s+following|the\s+coming|coming|past)\s+(?:year|yr)\b(?!'s|\s+(?:of|in)\b)/giu,
    resolve: (g, ctx) => yearPeriod(ctx, ctx.today.year + (EN_OFFSETS[(g.which ?? 'this').toLowerCase().replace(/^the\s+/, '')] ?? 0)),
  },
  {
    name: 'en.quarter',
    pattern: new RegExp(
      `\\b(?:(?:the\\s+)?(?<ord>first|second|third|fourth|last|1st|2nd|3rd|4th)\\s+(?:quarter|qtr)|[Qq](?<q>[1-4])|(?<which>this|next|last|current|previous|the\\s+following|coming)\\s+(?:quarter|qtr))` +
        `(?:\\s+(?:of\\s+)?(?:(?<year>\\d{4})|(?<rel>this|next|last)\\s+year))?\\b`,
      'giu',
    ),
    resolve(g, ctx) {
      const year = g.year !== undefined ? Number(g.year) : ctx.today.year + (EN_OFFSETS[(g.rel ?? 'this').toLowerCase()] ?? 0);
      if (g.which !== undefined) return unitSpan(ctx, 'quarter', EN_OFFSETS[g.which.toLowerCase().replace(/^the\s+/, '')] ?? 0, 1);
      const ord = (g.ord ?? '').toLowerCase();
      const q = g.q !== undefined ? Number(g.q) : ({ first: 1, '1st': 1, second: 2, '2nd': 2, third: 3, '3rd': 3, fourth: 4, '4th': 4, last: 4 } as Record<string, number>)[ord];
      return q === undefined ? undefined : quarterPeriod(ctx, year, q);
    },
  },
  {
    name: 'en.year-end-or-start',
    pattern: /\b(?:(?:by|before|until|at)\s+)?(?:the\s+)?(?:(?<eoy>eoy|end\s+of\s+(?:the\s+)?(?:(?<which>this|next|last)\s+)?year|end\s+of\s+(?<year>\d{4}))|(?<boy>boy|beginning\s+of\s+(?:the\s+)?(?:(?<which2>this|next|last)\s+)?year|start\s+of\s+(?:the\s+)?year))\b/giu,
    resolve(g, ctx) {
      if (g.eoy !== undefined) {
        const year = g.year !== undefined ? Number(g.year) : ctx.today.year + (EN_OFFSETS[(g.which ?? 'this').toLowerCase()] ?? 0);
        return yearEnd(ctx, year);
      }
      const year = ctx.today.year + (EN_OFFSETS[(g.which2 ?? 'this').toLowerCase()] ?? 0);
      return period(ctx, { year, month: 1, day: 1 }, { year, month: 4, day: 1 }, 'month');
    },
  },
  {
    name: 'en.part-of-month',
    pattern: new RegExp(`\\b(?:in\\s+)?(?:the\\s+)?(?<part>early|mid|middle|late|beginning)(?:[\\s-]+of)?[\\s-]*(?<mon>${MONTH_WORDS})\\b(?:\\s+(?<year>\\d{4}))?`, 'giu'),
    resolve(g, ctx) {
      const month = monthNumber(g.mon ?? '');
      if (month < 1) return undefined;
      const [from, to] = EN_PARTS[(g.part ?? '').toLowerCase()] ?? [1, 10];
      const year = g.year !== undefined ? Number(g.year) : ctx.today.year + (month < ctx.today.month ? 1 : 0);
      return monthPart(ctx, year, month, from, to);
    },
  },
  {
    name: 'en.month-in-years',
    pattern: new RegExp(`\\b(?<mon>${MONTH_WORDS})\\s+(?:in\\s+(?<n>${EN_COUNT})\\s+years?|(?<after>after\\s+next)|(?:of\\s+)?(?<rel>next|last|this)\\s+year)\\b`, 'giu'),
    resolve(g, ctx) {
      const month = monthNumber(g.mon ?? '');
      if (month < 1) return undefined;
      let year = ctx.today.year;
      if (g.n !== undefined) year += enCount(g.n) ?? 0;
      else if (g.rel !== undefined) year += EN_OFFSETS[g.rel.toLowerCase()] ?? 0;
      else if (g.after !== undefined) year += month <= ctx.today.month ? 2 : 1;
      const start = { year, month, day: 1 };
      return period(ctx, start, addMonths(start, 1), 'month');
    },
  },
  {
    name: 'digits.year-month',
    pattern: /\b(?<year>(?:19|20)\d\d)\/(?<mon>0?[1-9]|1[0-2])\b(?!\/)/gu,
    resolve(g, ctx) {
      const start = { year: Number(g.year), month: Number(g.mon), day: 1 };
      return period(ctx, start, addMonths(start, 1), 'month');
    },
  },
  {
    name: 'en.units-from-now',
    pattern: new RegExp(`\\b(?:in\\s+(?<nin>${EN_COUNT})\\s+(?<uin>years?|months?|weeks?)|(?<n>${EN_COUNT})\\s+(?<unit>years?|months?|weeks?)\\s+(?<dir>ago|back|hence|from\\s+now|from\\s+today|later))\\b`, 'giu'),
    resolve(g, ctx) {
      const n = enCount(g.nin ?? g.n ?? '');
      if (n === undefined) return undefined;
      const unit = (g.uin ?? g.unit ?? '').toLowerCase().replace(/s$/, '');
      const sign = /^(?:ago|back)$/i.test(g.dir ?? '') ? -1 : 1;
      const day = unit === 'week' ? addDays(ctx.today, 7 * n * sign) : addMonths(ctx.today, n * sign * (unit === 'year' ? 12 : 1));
      return { startMs: startOfDate(ctx, day), hasTime: false, grain: 'day' };
    },
  },
];
