/**
 * Chinese date phrases that chrono-node's zh.hans parser misses or gets wrong: 下班前, 今晚/明早,
 * 周五晚上, 月底, 周末, 本周内, 下周, 下个月, 15号前, 下下周一, 一周内, 三点一刻.
 *
 * Decisions: weeks run Monday to Sunday; a bare weekday (周五) is the next one on or after today,
 * 这周五 is the one in this week even if past; 周末 is Saturday 10:00 (the start of the weekend
 * as a plan, not a deadline), with the span ending Monday 00:00, and 周末前 is Friday at the
 * workday end; 本周内 and 这周内 are Friday at the workday end; 月底 is the last day of the month
 * at the workday end; times of day without a clock time use PERIOD_HOURS (上午 9:00, 中午 12:00,
 * 下午 15:00, 傍晚 18:00, 晚上/今晚 20:00).
 */
import {
  PERIOD_HOURS,
  addDays,
  addMonths,
  compareDates,
  dayMention,
  daysInMonth,
  lastDayOfMonth,
  monthPeriod,
  timeMention,
  weekPeriod,
  weekdayInWeek,
  weekdayOf,
  weekend,
} from './date-calendar.js';
import type { CivilDate, DateContext, DateRule, ResolvedDate } from './date-calendar.js';

type Groups = Record<string, string | undefined>;

const NUM = '[零〇一二两三四五六七八九十廿\\d]{1,3}';
// A clock time right after a time of day ("下午三点") belongs to chrono, which parses it whole.
const NO_CLOCK_AFTER = `(?!\\s*${NUM}\\s*(?:点|时|:|：))`;
const WEEK = '(?:周|星期|礼拜)';
const WEEKDAY_CHARS = '一二三四五六日天1-7';

const DIGITS: Readonly<Record<string, number>> = { 零: 0, 〇: 0, 一: 1, 二: 2, 两: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9 };

/** Parses 0-99 written in digits or Chinese numerals ("15", "十五", "二十一", "两"). */
export function parseZhNumber(text: string): number | undefined {
  if (/^\d+$/.test(text)) return Number(text);
  // 廿 is twenty (廿号, 廿一).
  if (text.startsWith('廿')) return text.length === 1 ? 20 : ((rest) => (rest === undefined ? undefined : 20 + rest))(DIGITS[text.slice(1)]);
  const ten = text.indexOf('十');
  if (ten === -1) return text.length === 1 ? DIGITS[text] : undefined;
  const tens = ten === 0 ? 1 : DIGITS[text.slice(0, ten)];
  const rest = text.slice(ten + 1);
  const ones = rest === '' ? 0 : rest.length === 1 ? DIGITS[rest] : undefined;
  return tens === undefined || ones === undefined ? undefined : tens * 10 + ones;
}

/**
 * A day expression, with group names suffixed by `s` so that one regex can hold several:
 * 今天/明天/后天/大后天/昨天/前天, [这|本|下|下下|上]周X, [2026年|明年]3月15号, [下个月]15号.
 * A bare "15号" must be followed by a cue, punctuation or a time of day, so that "3号线" (a metro
 * line) or "10号楼" (a building) are not dates.
 */
function dayPattern(s: string): string {
  const relative = `(?<rel${s}>大后天|后天|明天|明日|今天|今日|昨天|前天)`;
  const weekday = `(?<wmod${s}>下下|下个|下|这个|这|本|上个|上)?${WEEK}(?<wd${s}>[${WEEKDAY_CHARS}])`;
  const monthDay =
    `(?:(?:(?<year${s}>\\d{4})年|(?<ymod${s}>今年|明年|去年))?(?<mon${s}>${NUM})月|(?<mmod${s}>下个月|下月|本月|这个月|上个月|上月))` +
    `(?<dom${s}>${NUM})[日号]`;
  const bareDay = `(?<![\\d零〇一二两三四五六七八九十月年第])(?<bare${s}>${NUM})号(?=前|之前|以前|截止|到期|当天|那天|左右|上午|下午|中午|晚上|早上|[，。,.；;！!\\s]|$)`;
  return `(?:${relative}|${weekday}|${monthDay}|${bareDay})`;
}

const RELATIVE_DAYS: Readonly<Record<string, number>> = { 今天: 0, 今日: 0, 明天: 1, 明日: 1, 后天: 2, 大后天: 3, 昨天: -1, 前天: -2 };
const WEEK_OFFSETS: Readonly<Record<string, number>> = { 这: 0, 这个: 0, 本: 0, 下: 1, 下个: 1, 下下: 2, 上: -1, 上个: -1 };
const MONTH_OFFSETS: Readonly<Record<string, number>> = { 本月: 0, 这个月: 0, 下月: 1, 下个月: 1, 上月: -1, 上个月: -1 };

function weekdayNumber(char: string): number {
  if (char === '日' || char === '天' || char === '7') return 0;
  return /\d/.test(char) ? Number(char) : (DIGITS[char] ?? 0);
}

/** The date a dayPattern(s) match names, `undefined` when absent or invalid (2月30号). */
function resolveDay(g: Groups, s: string, ctx: DateContext): CivilDate | undefined {
  const rel = g[`rel${s}`];
  if (rel !== undefined) return addDays(ctx.today, RELATIVE_DAYS[rel] ?? 0);
  const wd = g[`wd${s}`];
  if (wd !== undefined) {
    const weekday = weekdayNumber(wd);
    const mod = g[`wmod${s}`];
    if (mod === undefined) return addDays(ctx.today, (weekday - weekdayOf(ctx.today) + 7) % 7);
    return weekdayInWeek(addDays(ctx.today, 7 * (WEEK_OFFSETS[mod] ?? 0)), weekday);
  }
  const domText = g[`dom${s}`] ?? g[`bare${s}`];
  if (domText === undefined) return undefined;
  const dom = parseZhNumber(domText);
  if (dom === undefined) return undefined;
  const monText = g[`mon${s}`];
  const mmod = g[`mmod${s}`];
  let date: CivilDate;
  if (monText !== undefined) {
    const month = parseZhNumber(monText);
    if (month === undefined || month < 1 || month > 12) return undefined;
    const yearText = g[`year${s}`];
    const ymod = g[`ymod${s}`];
    const year = yearText ? Number(yearText) : ctx.today.year + (ymod === '明年' ? 1 : ymod === '去年' ? -1 : 0);
    date = { year, month, day: dom };
    // Without a year, a date already past this year means next year's.
    if (!yearText && !ymod && compareDates(date, ctx.today) < 0) date = { ...date, year: year + 1 };
  } else if (mmod !== undefined) {
    date = { ...addMonths({ ...ctx.today, day: 1 }, MONTH_OFFSETS[mmod] ?? 0), day: dom };
  } else {
    date = { ...ctx.today, day: dom };
    if (dom < ctx.today.day) date = { ...addMonths({ ...ctx.today, day: 1 }, 1), day: dom };
  }
  return dom >= 1 && dom <= daysInMonth(date.year, date.month) ? date : undefined;
}

const PERIODS: Readonly<Record<string, number>> = {
  早上: PERIOD_HOURS.morning,
  早晨: PERIOD_HOURS.morning,
  上午: PERIOD_HOURS.morning,
  早: PERIOD_HOURS.morning,
  中午: PERIOD_HOURS.noon,
  下午: PERIOD_HOURS.afternoon,
  傍晚: PERIOD_HOURS.dusk,
  晚上: PERIOD_HOURS.evening,
  夜里: PERIOD_HOURS.evening,
  夜间: PERIOD_HOURS.evening,
  晚: PERIOD_HOURS.evening,
};
const PERIOD_WORDS = '早上|早晨|上午|中午|下午|傍晚|晚上|夜里|夜间';
const PM_PERIODS = new Set(['中午', '下午', '傍晚', '晚上', '夜里', '夜间', '晚']);

const friday = (ctx: DateContext, weekOffset: number) => weekdayInWeek(addDays(ctx.today, 7 * weekOffset), 5);

/** Chinese rules, resolved in the context's zone. */
export const ZH_DATE_RULES: readonly DateRule[] = [
  {
    name: 'zh.workday-end',
    pattern: new RegExp(`(?:${dayPattern('')}\\s*的?)?下班(?:前|之前|以前|时)`, 'gu'),
    resolve: (g, ctx) => atDay(g, ctx, (day) => timeMention(ctx, day, ctx.workdayEnd, 'hour')),
  },
  {
    name: 'zh.period-of-day',
    pattern: new RegExp(`(?:${dayPattern('')}\\s*的?)?(?<period>${PERIOD_WORDS})${NO_CLOCK_AFTER}`, 'gu'),
    resolve: (g, ctx) => atDay(g, ctx, (day) => timeMention(ctx, day, { hour: PERIODS[g.period ?? ''] ?? 12, minute: 0 }, 'hour')),
  },
  {
    name: 'zh.short-period',
    pattern: new RegExp(`(?<rel>今|明|后)(?<period>早|晚)${NO_CLOCK_AFTER}`, 'gu'),
    resolve: (g, ctx) =>
      timeMention(ctx, addDays(ctx.today, g.rel === '明' ? 1 : g.rel === '后' ? 2 : 0), { hour: PERIODS[g.period ?? ''] ?? 12, minute: 0 }, 'hour'),
  },
  {
    name: 'zh.month-end',
    pattern: new RegExp(`(?:(?<mon>${NUM})|(?<which>本|这个|这|下个|下|上个|上))?月(?:底|末)`, 'gu'),
    resolve(g, ctx) {
      let month = addMonths({ ...ctx.today, day: 1 }, WEEK_OFFSETS[g.which ?? '这'] ?? 0);
      if (g.mon !== undefined) {
        const m = parseZhNumber(g.mon);
        if (m === undefined || m < 1 || m > 12) return undefined;
        month = { year: ctx.today.year + (m < ctx.today.month ? 1 : 0), month: m, day: 1 };
      }
      return { ...timeMention(ctx, lastDayOfMonth(month), ctx.workdayEnd), grain: 'day' };
    },
  },
  {
    name: 'zh.year-end',
    pattern: /(?<which>今|明)?年(?:底|末)/gu,
    resolve: (g, ctx) =>
      ({ ...timeMention(ctx, { year: ctx.today.year + (g.which === '明' ? 1 : 0), month: 12, day: 31 }, ctx.workdayEnd), grain: 'day' }),
  },
  {
    name: 'zh.weekend',
    pattern: new RegExp(`(?<which>这个|这|本|下个|下|上个|上)?周末(?<before>前|之前|以前)?`, 'gu'),
    resolve(g, ctx) {
      const offset = WEEK_OFFSETS[g.which ?? '这'] ?? 0;
      if (g.before !== undefined) return timeMention(ctx, friday(ctx, offset), ctx.workdayEnd, 'hour');
      return weekend(ctx, offset);
    },
  },
  {
    name: 'zh.within-week',
    pattern: new RegExp(`(?<which>这个|这|本|下个|下)${WEEK}(?:内|之内|以内|结束前)`, 'gu'),
    resolve: (g, ctx) => ({ ...timeMention(ctx, friday(ctx, WEEK_OFFSETS[g.which ?? '这'] ?? 0), ctx.workdayEnd), grain: 'week' }),
  },
  {
    name: 'zh.week',
    pattern: new RegExp(`(?<which>下下|下个|下|这个|这|本|上个|上)${WEEK}(?![${WEEKDAY_CHARS}末内]|之内|以内|结束)`, 'gu'),
    resolve: (g, ctx) => weekPeriod(ctx, addDays(ctx.today, 7 * (WEEK_OFFSETS[g.which ?? '这'] ?? 0))),
  },
  {
    name: 'zh.month',
    pattern: new RegExp(`(?<which>下个月|下月|本月|这个月|上个月|上月)(?![底末初中]|份?\\s*${NUM}\\s*[日号])`, 'gu'),
    resolve: (g, ctx) => monthPeriod(ctx, addMonths({ ...ctx.today, day: 1 }, MONTH_OFFSETS[g.which ?? '本月'] ?? 0)),
  },
  {
    // Days alone. chrono parses most of these too, but misses 本周一, 下下周一, 15号前, 下个月15号
    // and 明年3月1日, and reads 明天 as today before 02:00; with a clock time after the day
    // (明天下午三点) chrono's longer span wins.
    name: 'zh.day',
    pattern: new RegExp(dayPattern(''), 'gu'),
    resolve(g, ctx) {
      const day = resolveDay(g, '', ctx);
      return day ? dayMention(ctx, day) : undefined;
    },
  },
  {
    name: 'zh.weeks-from-now',
    pattern: new RegExp(`(?<n>${NUM}|半)个?${WEEK}(?:后|以后|之后|内|之内|以内)`, 'gu'),
    resolve(g, ctx) {
      const n = g.n === '半' ? 0.5 : parseZhNumber(g.n ?? '');
      return n === undefined ? undefined : dayMention(ctx, addDays(ctx.today, Math.round(7 * n)));
    },
  },
  {
    name: 'zh.quarter-hour',
    pattern: new RegExp(`(?:${dayPattern('')}\\s*的?)?(?<period>${PERIOD_WORDS})?(?<h>${NUM})点(?<q>一刻|三刻)`, 'gu'),
    resolve(g, ctx) {
      const h = parseZhNumber(g.h ?? '');
      if (h === undefined || h > 23) return undefined;
      const hour = (g.period !== undefined && PM_PERIODS.has(g.period)) || (g.period === undefined && h >= 1 && h <= 6) ? (h % 12) + 12 : h;
      const time = { hour, minute: g.q === '一刻' ? 15 : 45 };
      const explicitDay = resolveDay(g, '', ctx);
      if (explicitDay) return timeMention(ctx, explicitDay, time);
      const today = timeMention(ctx, ctx.today, time);
      return today.startMs >= ctx.now ? today : timeMention(ctx, addDays(ctx.today, 1), time);
    },
  },
];

/** Resolves with the day named by dayPattern(''), or today when the phrase names none. */
function atDay(g: Groups, ctx: DateContext, make: (day: CivilDate) => ResolvedDate): ResolvedDate | undefined {
  const named = g.rel !== undefined || g.wd !== undefined || g.dom !== undefined || g.bare !== undefined;
  const day = named ? resolveDay(g, '', ctx) : ctx.today;
  return day ? make(day) : undefined;
}
