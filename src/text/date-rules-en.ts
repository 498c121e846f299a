/**
 * English date phrases that chrono-node misses or resolves differently from the Chinese rules:
 * EOD/COB (with a day before or after: "tomorrow EOD", "COB Friday"), end of week, end of month,
 * tonight and "tomorrow morning", weekends, and this/next/last week or month as periods.
 *
 * Decisions mirror the Chinese rules (date-rules-zh.ts): EOD, COB and "close of business" are the
 * workday end; "end of week"/EOW is Friday at the workday end; "this weekend" is Saturday 10:00
 * and "before/by the weekend" Friday at the workday end; "next week"/"next month" are whole
 * periods (Monday to Monday, first to first).
 */
import {
  PERIOD_HOURS,
  addDays,
  addMonths,
  lastDayOfMonth,
  monthPeriod,
  timeMention,
  weekPeriod,
  weekdayInWeek,
  weekdayOf,
  weekend,
} from './date-calendar.js';
import type { CivilDate, DateContext, DateRule } from './date-calendar.js';

type Groups = Record<string, string | undefined>;

const WEEKDAYS: Readonly<Record<string, number>> = {
  sunday: 0, sun: 0,
  monday: 1, mon: 1,
  tuesday: 2, tues: 2, tue: 2,
  wednesday: 3, wed: 3,
  thursday: 4, thurs: 4, thu: 4,
  friday: 5, fri: 5,
  saturday: 6, sat: 6,
};
const WEEKDAY_WORDS = 'monday|mon|tuesday|tues|tue|wednesday|wed|thursday|thurs|thu|friday|fri|saturday|sat|sunday|sun';
const RELATIVE_DAYS: Readonly<Record<string, number>> = { today: 0, tonight: 0, tomorrow: 1, tmrw: 1, tmr: 1, 'the day after tomorrow': 2 };
const WEEK_OFFSETS: Readonly<Record<string, number>> = { this: 0, current: 0, next: 1, following: 1, coming: 0, last: -1, previous: -1, past: -1 };

/** today/tomorrow/[this|next|last] Friday, with group names suffixed by `s`. */
function dayPattern(s: string): string {
  return `(?:(?<rel${s}>the day after tomorrow|today|tomorrow|tmrw|tmr)|(?:(?<wmod${s}>this|next|coming|last)\\s+)?(?<wd${s}>${WEEKDAY_WORDS})\\.?)`;
}

function resolveDay(g: Groups, s: string, ctx: DateContext): CivilDate | undefined {
  const rel = g[`rel${s}`];
  if (rel !== undefined) return addDays(ctx.today, RELATIVE_DAYS[rel.toLowerCase()] ?? 0);
  const wd = g[`wd${s}`];
  if (wd === undefined) return undefined;
  const weekday = WEEKDAYS[wd.toLowerCase()] ?? 0;
  const mod = g[`wmod${s}`]?.toLowerCase();
  // A bare or "coming" weekday is the next one on or after today; this/next/last pick a week.
  if (mod === undefined || mod === 'coming') return addDays(ctx.today, (weekday - weekdayOf(ctx.today) + 7) % 7);
  return weekdayInWeek(addDays(ctx.today, 7 * (WEEK_OFFSETS[mod] ?? 0)), weekday);
}

const EOD_WORDS =
  'eod|eob|cob|end\\s+of\\s+(?:the\\s+)?(?:business\\s+|work\\s*|working\\s+)?day|close\\s+of\\s+(?:business|play)|end\\s+of\\s+business|end\\s+of\\s+today';
const CUE = '(?:(?:by|before|until|till|no\\s+later\\s+than)\\s+)';
const NO_CLOCK_AFTER = '(?!\\s*(?:at\\s+|@\\s*|around\\s+)?\\d)';
const PERIODS: Readonly<Record<string, number>> = {
  morning: PERIOD_HOURS.morning,
  noon: PERIOD_HOURS.noon,
  afternoon: PERIOD_HOURS.afternoon,
  evening: PERIOD_HOURS.evening,
  night: PERIOD_HOURS.evening,
  tonight: PERIOD_HOURS.evening,
};

/** "Monday early morning": 07:00, before the working morning (PERIOD_HOURS.morning). */
const EARLY_MORNING_HOUR = 7;

const friday = (ctx: DateContext, weekOffset: number) => weekdayInWeek(addDays(ctx.today, 7 * weekOffset), 5);
const offsetOf = (which: string | undefined) => WEEK_OFFSETS[which?.toLowerCase().trim() ?? 'this'] ?? 0;

/** English rules, resolved in the context's zone. */
export const EN_DATE_RULES: readonly DateRule[] = [
  {
    name: 'en.workday-end',
    pattern: new RegExp(
      `\\b${CUE}?(?:${dayPattern('a')}\\s+)?(?:by\\s+)?(?:the\\s+)?(?:${EOD_WORDS})(?:\\s+(?:on\\s+)?${dayPattern('b')})?\\b`,
      'giu',
    ),
    resolve(g, ctx) {
      const day = resolveDay(g, 'a', ctx) ?? resolveDay(g, 'b', ctx) ?? ctx.today;
      return timeMention(ctx, day, ctx.workdayEnd, 'hour');
    },
  },
  {
    name: 'en.end-of-week',
    pattern: new RegExp(`\\b${CUE}?(?:the\\s+)?(?:end\\s+of\\s+(?:the\\s+)?(?<which>this\\s+|next\\s+|current\\s+|last\\s+|past\\s+|previous\\s+|following\\s+)?week|eow)\\b`, 'giu'),
    resolve: (g, ctx) => ({ ...timeMention(ctx, friday(ctx, offsetOf(g.which)), ctx.workdayEnd), grain: 'week' }),
  },
  {
    name: 'en.end-of-month',
    pattern: new RegExp(`\\b${CUE}?(?:the\\s+)?(?:end\\s+of\\s+(?:the\\s+)?(?<which>this\\s+|next\\s+)?month|eom)\\b`, 'giu'),
    resolve: (g, ctx) => ({
      ...timeMention(ctx, lastDayOfMonth(addMonths({ ...ctx.today, day: 1 }, offsetOf(g.which))), ctx.workdayEnd),
      grain: 'day',
    }),
  },
  {
    name: 'en.period-of-day',
    pattern: new RegExp(
      `\\b(?:at\\s+(?<h>1[0-2]|0?[1-9])\\s+)?(?:(?:${dayPattern('')})\\s+(?:in\\s+the\\s+)?|this\\s+)(?<early>early\\s+(?:in\\s+the\\s+)?|(?:in\\s+)?the\\s+early\\s+hours\\s+of\\s+the\\s+)?(?<period>morning|afternoon|evening|night)\\b${NO_CLOCK_AFTER}|\\b(?<tonight>tonight)\\b${NO_CLOCK_AFTER}`,
      'giu',
    ),
    resolve(g, ctx) {
      const day = resolveDay(g, '', ctx) ?? ctx.today;
      const period = (g.period ?? g.tonight ?? '').toLowerCase();
      const hour = g.early !== undefined && period === 'morning' ? EARLY_MORNING_HOUR : (PERIODS[period] ?? PERIOD_HOURS.evening);
      // "at 5 tomorrow afternoon": the hour given, in that part of the day.
      if (g.h !== undefined) {
        const h = Number(g.h) % 12;
        return timeMention(ctx, day, { hour: hour >= 12 ? h + 12 : h, minute: 0 }, 'hour');
      }
      return timeMention(ctx, day, { hour, minute: 0 }, 'hour');
    },
  },
  {
    name: 'en.weekend',
    pattern: /\b(?:(?<before>before|by)\s+)?(?:(?<which>this|next|coming|last|the|over\s+the)\s+)?week[\s-]?end\b/giu,
    resolve(g, ctx) {
      const which = g.which?.toLowerCase();
      const offset = which === 'next' ? 1 : which === 'last' ? -1 : 0;
      if (g.before !== undefined) return timeMention(ctx, friday(ctx, offset), ctx.workdayEnd, 'hour');
      return weekend(ctx, offset);
    },
  },
  {
    name: 'en.week-or-month',
    pattern: /\b(?:the\s+)?(?<which>this|next|last|current|previous|past|following|coming)\s+(?<unit>week|month)\b(?![\s-]?end|['’]s)/giu,
    resolve(g, ctx) {
      // ("coming friday" is the next Friday, but "the coming week" is next week)
      const offset = g.which?.toLowerCase() === 'coming' ? 1 : offsetOf(g.which);
      if (g.unit?.toLowerCase() === 'week') return weekPeriod(ctx, addDays(ctx.today, 7 * offset));
      return monthPeriod(ctx, addMonths({ ...ctx.today, day: 1 }, offset));
    },
  },
];
