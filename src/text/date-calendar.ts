/**
 * Calendar helpers shared by the date rules and the chrono adapter: civil (zone-less) dates,
 * the resolution context, and conversion of wall-clock readings to instants in the user's zone.
 */
import { UsageError } from '../errors.js';
import { startOfZonedDay, validateTimeZone, zonedParts, zonedTimeToInstant } from '../core/time-zone.js';
import type { TimeZone, ZonedParts } from '../core/time-zone.js';

/** A calendar date without a zone. `month` is 1-12. */
export interface CivilDate {
  year: number;
  month: number;
  day: number;
}

/** A wall-clock time of day. */
export interface ClockTime {
  hour: number;
  minute: number;
}

/** How precise a mention is: a clock minute, an hour, a day, a week, a month, a quarter or a year. */
export type DateGrain = 'minute' | 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year';

/** A mention before it is placed in the text: what a rule or chrono resolved. */
export interface ResolvedDate {
  startMs: number;
  endMs?: number;
  hasTime: boolean;
  grain: DateGrain;
  /** A clock time with no day named ("at 6 pm", "下午三点十五"): its day was inferred, and a day just before it in the text is the one meant. */
  clockOnly?: boolean;
}

/** Everything a rule needs to resolve a phrase. */
export interface DateContext {
  /** Reference instant, Unix ms. */
  now: number;
  zone: TimeZone;
  /** Wall clock at `now` in `zone`. */
  nowParts: ZonedParts;
  /** Today's date in `zone`. */
  today: CivilDate;
  /** When the working day ends ("下班", "EOD", "COB"). */
  workdayEnd: ClockTime;
}

/** Default end of the working day: 18:00. */
export const DEFAULT_WORKDAY_END: ClockTime = Object.freeze({ hour: 18, minute: 0 });

/** Hours implied by times of day without a clock time, in both languages. */
export const PERIOD_HOURS = Object.freeze({
  morning: 9,
  noon: 12,
  afternoon: 15,
  dusk: 18,
  evening: 20,
});

/** The hour a weekend plan starts at (周末, "this weekend"): Saturday 10:00. */
export const WEEKEND_START_HOUR = 10;

/** Builds the context, validating the zone and the workday end. */
export function createDateContext(now: number, zone: TimeZone, workdayEnd: ClockTime = DEFAULT_WORKDAY_END): DateContext {
  if (typeof now !== 'number' || !Number.isFinite(now)) {
    throw new UsageError(`date resolution: "now" must be an instant in Unix ms, got ${String(now)}`);
  }
  const { hour, minute } = workdayEnd;
  if (!Number.isInteger(hour) || hour < 0 || hour > 23 || !Number.isInteger(minute) || minute < 0 || minute > 59) {
    throw new UsageError(`date resolution: workdayEnd must be {hour: 0-23, minute: 0-59}, got ${JSON.stringify(workdayEnd)}`);
  }
  const normalizedZone = validateTimeZone(zone);
  const nowParts = zonedParts(now, normalizedZone);
  return {
    now,
    zone: normalizedZone,
    nowParts,
    today: { year: nowParts.year, month: nowParts.month, day: nowParts.day },
    workdayEnd: { hour, minute },
  };
}

/** `date` moved by `days` calendar days. */
export function addDays(date: CivilDate, days: number): CivilDate {
  const d = civilToUtc(date);
  d.setUTCDate(d.getUTCDate() + days);
  return utcToCivil(d);
}

/** `date` moved by `months` calendar months, clamped to the last day of the target month. */
export function addMonths(date: CivilDate, months: number): CivilDate {
  const index = date.year * 12 + (date.month - 1) + months;
  const year = Math.floor(index / 12);
  const month = index - year * 12 + 1;
  return { year, month, day: Math.min(date.day, daysInMonth(year, month)) };
}

/** Number of days in `month` (1-12) of `year`. */
export function daysInMonth(year: number, month: number): number {
  return utcToCivil(civilToUtc({ year, month: month + 1, day: 0 })).day;
}

/** Day of the week of `date`: 0 Sunday to 6 Saturday. */
export function weekdayOf(date: CivilDate): number {
  return civilToUtc(date).getUTCDay();
}

/** The Monday of the Monday-to-Sunday week containing `date`. */
export function mondayOf(date: CivilDate): CivilDate {
  return addDays(date, -((weekdayOf(date) + 6) % 7));
}

/** The given weekday (0 Sunday to 6 Saturday) within the Monday-to-Sunday week of `date`. */
export function weekdayInWeek(date: CivilDate, weekday: number): CivilDate {
  return addDays(mondayOf(date), (weekday + 6) % 7);
}

/** Negative, zero or positive as `a` is before, equal to or after `b`. */
export function compareDates(a: CivilDate, b: CivilDate): number {
  return a.year - b.year || a.month - b.month || a.day - b.day;
}

/** The instant (Unix ms) of `time` on `date` in the context's zone. */
export function instantAt(ctx: DateContext, date: CivilDate, time: ClockTime, second = 0): number {
  return zonedTimeToInstant({ ...date, hour: time.hour, minute: time.minute, second }, ctx.zone);
}

/** The first instant (Unix ms) of `date` in the context's zone. */
export function startOfDate(ctx: DateContext, date: CivilDate): number {
  return startOfZonedDay(zonedTimeToInstant({ ...date, hour: 12, minute: 0 }, ctx.zone), ctx.zone);
}

/** A date-only mention: the start of `date`, no time of day. */
export function dayMention(ctx: DateContext, date: CivilDate): ResolvedDate {
  return { startMs: startOfDate(ctx, date), hasTime: false, grain: 'day' };
}

/** A mention at `time` on `date`; grain "minute" when the minute is not zero. */
export function timeMention(ctx: DateContext, date: CivilDate, time: ClockTime, grain?: DateGrain): ResolvedDate {
  return { startMs: instantAt(ctx, date, time), hasTime: true, grain: grain ?? (time.minute === 0 ? 'hour' : 'minute') };
}

/** The whole Monday-to-Sunday week containing `date`, as a period without a time. */
export function weekPeriod(ctx: DateContext, date: CivilDate): ResolvedDate {
  const monday = mondayOf(date);
  return { startMs: startOfDate(ctx, monday), endMs: startOfDate(ctx, addDays(monday, 7)), hasTime: false, grain: 'week' };
}

/** The whole calendar month containing `date`, as a period without a time. */
export function monthPeriod(ctx: DateContext, date: CivilDate): ResolvedDate {
  const first = { year: date.year, month: date.month, day: 1 };
  return { startMs: startOfDate(ctx, first), endMs: startOfDate(ctx, addMonths(first, 1)), hasTime: false, grain: 'month' };
}

/** Saturday 10:00 of the week `weekOffset` weeks from today; the span ends Monday 00:00. */
export function weekend(ctx: DateContext, weekOffset: number): ResolvedDate {
  const saturday = weekdayInWeek(addDays(ctx.today, 7 * weekOffset), 6);
  const start = timeMention(ctx, saturday, { hour: WEEKEND_START_HOUR, minute: 0 }, 'day');
  return { ...start, endMs: startOfDate(ctx, addDays(saturday, 2)) };
}

/** The last day of the month containing `date`. */
export function lastDayOfMonth(date: CivilDate): CivilDate {
  return { year: date.year, month: date.month, day: daysInMonth(date.year, date.month) };
}

function civilToUtc(date: CivilDate): Date {
  const d = new Date(0);
  d.setUTCFullYear(date.year, date.month - 1, date.day);
  return d;
}

function utcToCivil(d: Date): CivilDate {
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** A phrase pattern and how to resolve what it matched; rules win over chrono where spans overlap. */
export interface DateRule {
  /** Stable name, for tests and debugging ("zh.workday-end"). */
  readonly name: string;
  /** A global ("g") regular expression; the whole match is the mention. */
  readonly pattern: RegExp;
  /** The resolved date, or undefined when the match turns out not to be a date (day 31 of April). */
  resolve(groups: Record<string, string | undefined>, ctx: DateContext): ResolvedDate | undefined;
}
