/**
 * English day phrases chrono-node misses: a day of the month alone ("on the 15th", "by the
 * 1st"), "february the 15th", the 20th "of this month", a weekday of a named week ("monday of
 * this week", "last week's sunday"), counted weekdays ("3 fridays from now", "2 thursdays ago"),
 * and "at 8 in the evening".
 *
 * Decisions: a day of the month alone is the next one on or after today (this month's, else
 * next month's); "N fridays from now" counts Fridays after today, "N thursdays ago" before it.
 */
import { addDays, addMonths, compareDates, dayMention, daysInMonth, timeMention, weekdayInWeek, weekdayOf } from './date-calendar.js';
import type { CivilDate, DateContext, DateRule } from './date-calendar.js';

const WEEKDAYS: Readonly<Record<string, number>> = {
  sunday: 0, sun: 0, monday: 1, mon: 1, tuesday: 2, tues: 2, tue: 2, wednesday: 3, wed: 3, thursday: 4, thurs: 4, thu: 4, friday: 5, fri: 5, saturday: 6, sat: 6,
};
const WEEKDAY = '(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)';
const WEEKDAY_PLURAL = '(?<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)s';
const ORDINAL_WORDS: Readonly<Record<string, number>> = {
  first: 1, second: 2, third: 3, fourth: 4, fifth: 5, sixth: 6, seventh: 7, eighth: 8, ninth: 9, tenth: 10, eleventh: 11, twelfth: 12, thirteenth: 13,
  fourteenth: 14, fifteenth: 15, sixteenth: 16, seventeenth: 17, eighteenth: 18, nineteenth: 19, twentieth: 20, 'twenty-first': 21, 'twenty-second': 22,
  'twenty-third': 23, 'twenty-fourth': 24, 'twenty-fifth': 25, 'twenty-sixth': 26, 'twenty-seventh': 27, 'twenty-eighth': 28, 'twenty-ninth': 29,
  thirtieth: 30, 'thirty-first': 31,
};
const ORDINAL = `(?<d>[12]?\\d(?:st|nd|rd|th)|3[01](?:st|th)|${Object.keys(ORDINAL_WORDS).sort((a, b) => b.length - a.length).join('|')})`;
const COUNTS: Readonly<Record<string, number>> = { a: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6 };
const COUNT = '(?<n>[1-9]|one|two|three|four|five|six)';
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const MONTH = '(?<mon>january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)';
const WEEK_OFFSETS: Readonly<Record<string, number>> = { this: 0, current: 0, next: 1, following: 1, coming: 1, last: -1, previous: -1, past: -1 };

const ordinal = (text: string | undefined) => (text === undefined ? undefined : /^\d/.test(text) ? parseInt(text, 10) : ORDINAL_WORDS[text.toLowerCase()]);
const count = (text: string | undefined) => (text === undefined ? undefined : /^\d$/.test(text) ? Number(text) : COUNTS[text.toLowerCase()]);

/** Day `dom` of this month if not yet past, else of the next month that has it. */
function nextDayOfMonth(ctx: DateContext, dom: number): CivilDate | undefined {
  for (let k = 0; k < 3; k++) {
    const month = addMonths({ ...ctx.today, day: 1 }, k);
    if (dom > daysInMonth(month.year, month.month)) continue;
    const date = { ...month, day: dom };
    if (compareDates(date, ctx.today) >= 0) return date;
  }
  return undefined;
}

/** English day rules. */
export const EN_DAY_RULES: readonly DateRule[] = [
  {
    // ("the 1st place", "the 3rd time" are not dates: a noun after the ordinal rules it out.)
    name: 'en.day-of-month',
    pattern: new RegExp(`\\b(?:on|by|before|until|till|due)?\\s*the\\s+${ORDINAL}\\b(?!\\s*(?:of\\b|[a-z]))`, 'giu'),
    resolve(g, ctx) {
      const dom = ordinal(g.d);
      const date = dom === undefined ? undefined : nextDayOfMonth(ctx, dom);
      return date ? dayMention(ctx, date) : undefined;
    },
  },
  {
    name: 'en.month-the-day',
    pattern: new RegExp(`\\b${MONTH}\\s+the\\s+${ORDINAL}\\b`, 'giu'),
    resolve(g, ctx) {
      const month = MONTHS.findIndex((m) => m.startsWith((g.mon ?? '').toLowerCase().slice(0, 3))) + 1;
      const dom = ordinal(g.d);
      if (month < 1 || dom === undefined || dom > daysInMonth(ctx.today.year, month)) return undefined;
      let date = { year: ctx.today.year, month, day: dom };
      if (compareDates(date, ctx.today) < 0) date = { ...date, year: date.year + 1 };
      return dayMention(ctx, date);
    },
  },
  {
    name: 'en.day-of-this-month',
    pattern: /\b(?:the\s+)?(?<d>[12]?\d|3[01])(?:st|nd|rd|th)?\s+of\s+(?:the\s+)?(?<which>this|current|next|last|previous|coming|following)\s+month\b/giu,
    resolve(g, ctx) {
      const month = addMonths({ ...ctx.today, day: 1 }, WEEK_OFFSETS[(g.which ?? 'this').toLowerCase()] ?? 0);
      const dom = Number(g.d);
      return dom >= 1 && dom <= daysInMonth(month.year, month.month) ? dayMention(ctx, { ...month, day: dom }) : undefined;
    },
  },
  {
    name: 'en.weekday-of-week',
    pattern: new RegExp(
      `\\b(?:(?<wd>${WEEKDAY})\\s+(?:of\\s+)?(?:the\\s+)?(?<which>this|current|next|last|previous|past|following|coming)\\s+week|(?<which2>this|next|last|previous|past)\\s+week['’]s\\s+(?<wd2>${WEEKDAY}))\\b`,
      'giu',
    ),
    resolve(g, ctx) {
      const weekday = WEEKDAYS[(g.wd ?? g.wd2 ?? '').toLowerCase()];
      const offset = WEEK_OFFSETS[(g.which ?? g.which2 ?? 'this').toLowerCase()] ?? 0;
      return weekday === undefined ? undefined : dayMention(ctx, weekdayInWeek(addDays(ctx.today, 7 * offset), weekday));
    },
  },
  {
    name: 'en.counted-weekdays',
    pattern: new RegExp(`\\b${COUNT}\\s+${WEEKDAY_PLURAL}\\s+(?<dir>from\\s+now|from\\s+today|hence|later|ago|back|before)\\b`, 'giu'),
    resolve(g, ctx) {
      const n = count(g.n);
      const weekday = WEEKDAYS[(g.wd ?? '').toLowerCase()];
      if (n === undefined || weekday === undefined) return undefined;
      const today = weekdayOf(ctx.today);
      if (/ago|back|before/i.test(g.dir ?? '')) return dayMention(ctx, addDays(ctx.today, -(((today - weekday + 6) % 7) + 1) - 7 * (n - 1)));
      return dayMention(ctx, addDays(ctx.today, ((weekday - today + 6) % 7) + 1 + 7 * (n - 1)));
    },
  },
  {
    // "at 8 in the evening" is 20:00, "3 in the morning" 03:00.
    name: 'en.hour-in-period',
    pattern: /\b(?:at\s+)?(?<h>1[0-2]|0?[1-9])(?::(?<m>[0-5]\d))?\s*(?:o['’]?\s?clock\s*)?in\s+the\s+(?<period>morning|afternoon|evening|night)\b/giu,
    resolve(g, ctx) {
      const raw = Number(g.h);
      const minute = g.m === undefined ? 0 : Number(g.m);
      const morning = /morning/i.test(g.period ?? '');
      // (12 in the night is midnight; 1-4 in the night are the small hours)
      const hour = morning ? raw % 12 : /night/i.test(g.period ?? '') && (raw === 12 || raw < 5) ? raw % 12 : (raw % 12) + 12;
      const time = { hour, minute };
      const today = timeMention(ctx, ctx.today, time);
      const at = today.startMs >= ctx.now ? today : timeMention(ctx, addDays(ctx.today, 1), time);
      return { ...at, clockOnly: true };
    },
  },
];
