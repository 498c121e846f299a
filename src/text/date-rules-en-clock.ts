/**
 * English clock times chrono-node misses or cuts short: minutes past or to an hour ("quarter
 * past 3", "half past three pm", "15 minutes past 3pm", "ten to 5", British "half three"), the
 * continental "15h30"/"16h", one-letter meridiems ("3:15p", "at 3a"), "3 in the AM", "3 oclock
 * am", and four digits after at/around ("at 1030"); and durations as fractions of an hour ("in
 * 1/2 hour", "in a quarter of an hour", "in 15'").
 *
 * Decisions follow date-chrono.ts: an hour from 1 to 6 without am/pm or a time of day is the
 * afternoon; a time already past today is tomorrow's. The mention carries no day, so a day
 * written just before it ("Fri, Jul 18, 2014 19h00") is the one meant (dates.ts joins them).
 */
import { PERIOD_HOURS, addDays, timeMention } from './date-calendar.js';
import type { ClockTime, DateContext, DateRule, ResolvedDate } from './date-calendar.js';

const WORD_NUMBERS: Readonly<Record<string, number>> = {
  one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12,
  fifteen: 15, twenty: 20, 'twenty-five': 25, 'twenty five': 25, thirty: 30,
};
const HOUR = '(?:[01]?\\d|2[0-3]|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)';
const MINUTES = '(?:[0-5]?\\d|five|ten|fifteen|twenty|twenty[\\s-]five|thirty)';
const MERIDIEM = '(?:\\s*(?<mer>a\\.?\\s?m\\.?|p\\.?\\s?m\\.?|a|p)(?![a-z]))';
const number = (text: string | undefined) => (text === undefined ? undefined : /^\d+$/.test(text) ? Number(text) : WORD_NUMBERS[text.toLowerCase().replace(/\s+/, ' ')]);

/** Today's or, once past, tomorrow's `time`, with the afternoon default for 1-6 o'clock. */
function clockMention(ctx: DateContext, hour: number, minute: number, meridiem: string | undefined, grainMinute = minute !== 0): ResolvedDate | undefined {
  if (hour > 23 || minute > 59) return undefined;
  let h = hour;
  const mer = meridiem?.toLowerCase().replace(/[.\s]/g, '');
  if (mer?.startsWith('p') && h < 12) h += 12;
  else if (mer?.startsWith('a') && h === 12) h = 0;
  else if (mer === undefined && h >= 1 && h <= 6) h += 12;
  const time: ClockTime = { hour: h, minute };
  const today = timeMention(ctx, ctx.today, time, grainMinute ? 'minute' : 'hour');
  const at = today.startMs >= ctx.now ? today : timeMention(ctx, addDays(ctx.today, 1), time, grainMinute ? 'minute' : 'hour');
  return { ...at, clockOnly: true };
}

const fromNow = (ctx: DateContext, minutes: number): ResolvedDate => ({ startMs: ctx.now + Math.round(minutes * 60_000), hasTime: true, grain: 'minute' });

/** English clock-time rules. */
export const EN_CLOCK_RULES: readonly DateRule[] = [
  {
    name: 'en.minutes-past-or-to',
    pattern: new RegExp(
      `\\b(?:at\\s+|for\\s+)?(?:(?<quarter>a\\s+quarter|quarter)|(?<half>half)|(?<m>${MINUTES})(?:\\s+(?:minutes?|mins?))?)\\s+(?<dir>past|after|to|till|before)\\s+(?<h>${HOUR})(?:\\s*h\\b)?${MERIDIEM}?(?:\\s+(?:in\\s+the\\s+)?(?<period>morning|afternoon|evening|night))?`,
      'giu',
    ),
    resolve(g, ctx) {
      const hour = number(g.h);
      const m = g.quarter !== undefined ? 15 : g.half !== undefined ? 30 : number(g.m);
      if (hour === undefined || m === undefined) return undefined;
      const to = /^(?:to|till|before)$/i.test(g.dir ?? '');
      const meridiem = g.mer ?? (g.period && /morning/i.test(g.period) ? 'am' : g.period ? 'pm' : undefined);
      const base = to ? hour - 1 : hour;
      return clockMention(ctx, base < 0 ? 23 : base, to ? 60 - m : m, hour > 12 ? undefined : meridiem, true);
    },
  },
  {
    // British "half three" is half past three.
    name: 'en.half-hour',
    pattern: new RegExp(`\\bhalf\\s+(?<h>${HOUR})\\b(?!\\s+(?:hours?|past|an?)\\b)${MERIDIEM}?`, 'giu'),
    resolve(g, ctx) {
      const hour = number(g.h);
      return hour === undefined ? undefined : clockMention(ctx, hour, 30, g.mer, true);
    },
  },
  {
    name: 'en.continental-clock',
    pattern: /(?<!\b(?:in|for|within|after|every|last|next|past)\s+)\b(?<h>[01]?\d|2[0-3])h(?<m>[0-5]\d)?\b/giu,
    resolve(g, ctx) {
      const hour = Number(g.h);
      const minute = g.m === undefined ? 0 : Number(g.m);
      // (24-hour notation: no afternoon default)
      return clockMention(ctx, hour, minute, hour >= 1 && hour <= 6 ? 'am' : undefined, g.m !== undefined);
    },
  },
  {
    name: 'en.short-meridiem',
    pattern: /\b(?<h>1[0-2]|0?[1-9])(?::(?<m>[0-5]\d))?(?:ish)?\s*(?:o['’]?\s?clock\s*)?(?:in\s+the\s+)?(?<mer>a|p|am|pm|a\.m\.|p\.m\.)(?![a-z])\.?/giu,
    resolve(g, ctx) {
      const minute = g.m === undefined ? 0 : Number(g.m);
      return clockMention(ctx, Number(g.h), minute, g.mer, g.m !== undefined);
    },
  },
  {
    name: 'en.hhmm-after-cue',
    pattern: /\b(?:at|around|about|approximately|approx\.?|@)\s*(?<hm>[01]?\d[0-5]\d|2[0-3][0-5]\d)\b(?!\s*(?:years?|people|users|items|units|dollars|euros|%|km|miles))/giu,
    resolve(g, ctx) {
      const hm = g.hm ?? '';
      const hour = Number(hm.slice(0, -2));
      const minute = Number(hm.slice(-2));
      return clockMention(ctx, hour, minute, undefined, true);
    },
  },
  {
    // "at 5 tomorrow afternoon": a bare hour after "at" (with am/pm chrono reads it itself).
    name: 'en.at-hour',
    pattern: /\bat\s+(?<h>1[0-2]|0?[1-9])\b(?!\s*(?:[:.]\d|%|[ap]\.?m\b|[ap]\b|o['’]?\s?clock|in\s+the|percent|people|persons|users|items|minutes?|hours?|days?|weeks?|months?|years?|times|dollars|euros))/giu,
    resolve: (g, ctx) => clockMention(ctx, Number(g.h), 0, undefined),
  },
  {
    name: 'en.early-morning-at',
    pattern: /\b(?:early\s+)?morning\s*(?:at|@)\s*(?<h>1[0-2]|0?[1-9])\b(?!\s*(?::|pm|p\.m))/giu,
    resolve: (g, ctx) => clockMention(ctx, Number(g.h), 0, 'am'),
  },
  {
    name: 'en.fraction-of-hour',
    pattern: /\bin\s+(?:(?<num>[1-9])\s*\/\s*(?<den>[2-9])\s*(?:an?\s+)?|(?<word>a\s+quarter|one\s+quarter|three[\s-]quarters|half|a\s+half)\s+(?:of\s+)?(?:an?\s+)?)(?:h|hours?|hrs?)\b|\bin\s+(?<min>\d{1,3})\s*['’](?!\w)/giu,
    resolve(g, ctx) {
      if (g.min !== undefined) return fromNow(ctx, Number(g.min));
      const word = (g.word ?? '').toLowerCase();
      const fraction = g.num !== undefined ? Number(g.num) / Number(g.den) : word.includes('three') ? 0.75 : word.includes('quarter') ? 0.25 : 0.5;
      return fromNow(ctx, 60 * fraction);
    },
  },
  {
    name: 'en.mid-day',
    pattern: /\bmid[\s-]day\b/giu,
    resolve: (_g, ctx) => clockMention(ctx, PERIOD_HOURS.noon, 0, 'pm'),
  },
];
