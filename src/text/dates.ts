/**
 * Finds date and time mentions in Chinese and English text and resolves them to instants in the
 * user's time zone: chrono-node for the general grammar, plus rules for phrases it misses or
 * resolves differently (date-rules-zh.ts, date-rules-en.ts, which document each decision).
 *
 * Conventions: a mention without a time of day ("明天", "Friday") has hasTime=false and starts at
 * 00:00 of that day; resolveDue() turns it into that day's workday end (default 18:00). Periods
 * ("下周", "next month") start at their first instant and carry an exclusive endMs; their due is
 * the Friday (week) or last day (month) at the workday end. Weeks run Monday to Sunday.
 */
import { createDateContext, instantAt, lastDayOfMonth, weekdayInWeek } from './date-calendar.js';
import type { ClockTime, DateContext, DateGrain, DateRule, ResolvedDate } from './date-calendar.js';
import { chronoMentions } from './date-chrono.js';
import { normalizeChineseDates } from './date-normalize-zh.js';
import { EN_DATE_RULES } from './date-rules-en.js';
import { EN_CLOCK_RULES } from './date-rules-en-clock.js';
import { EN_DAY_RULES } from './date-rules-en-days.js';
import { HOLIDAY_DATE_RULES } from './date-holidays.js';
import { PERIOD_DATE_RULES } from './date-rules-periods.js';
import { globalMatches } from './global-matches.js';
import { ZH_DATE_RULES } from './date-rules-zh.js';
import { zonedParts } from '../core/time-zone.js';
import type { TimeZone } from '../core/time-zone.js';

export type { DateGrain } from './date-calendar.js';
export { DEFAULT_WORKDAY_END, PERIOD_HOURS, WEEKEND_START_HOUR } from './date-calendar.js';

/** A date or time found in text. */
export interface DateMention {
  /** The matched phrase, as written. */
  text: string;
  /** Offset of the phrase in the input, in UTF-16 code units. */
  index: number;
  /** The instant meant, Unix ms; 00:00 of the day when hasTime is false. */
  startMs: number;
  /** Exclusive end of a span ("3点到5点", "下周", "this weekend"), Unix ms. */
  endMs?: number;
  /** Whether startMs carries a time of day that was given ("3pm") or implied ("今晚", "EOD"). */
  hasTime: boolean;
  /** How precise the phrase is. */
  grain: DateGrain;
  /** Whether chrono-node or one of ctxvm's rules resolved it. */
  source: 'chrono' | 'rule';
}

/** A mention chosen as a task's due date, with the instant it is due. */
export interface DueMention extends DateMention {
  /** When it is due, Unix ms: startMs when hasTime, else the workday end of the day, week or month. */
  dueMs: number;
}

/** Options for resolveDates and resolveDue. */
export interface ResolveDatesOptions {
  /** The reference instant ("now"), Unix ms. */
  now: number;
  /** The user's zone: an IANA name, an offset string ("+08:00") or minutes east of UTC. */
  timeZone: TimeZone;
  /** When the working day ends, for 下班前, EOD, COB and date-only dues; default 18:00. */
  workdayEnd?: ClockTime;
}

const DAY_MS = 86_400_000;
const RULES: readonly DateRule[] = [...ZH_DATE_RULES, ...EN_DATE_RULES, ...EN_CLOCK_RULES, ...EN_DAY_RULES, ...PERIOD_DATE_RULES, ...HOLIDAY_DATE_RULES];
const DEADLINE_BEFORE = /(?:\b(?:by|before|until|till|due|no\s+later\s+than|deadline)|截止(?:到|至)?|截至|最晚|最迟)\s*[:：]?\s*$/i;
const DEADLINE_AFTER = /^\s*(?:前|之前|以前|截止|到期|为止|\b(?:deadline)\b)/i;
const DEADLINE_INSIDE = /前$|之前$|以前$|^(?:by|before|until|till)\b/i;

/** All date mentions in `text`, in order of appearance, without overlaps. */
export function resolveDates(text: string, options: ResolveDatesOptions): DateMention[] {
  return rememberedMentions(text, createDateContext(options.now, options.timeZone, options.workdayEnd));
}

/**
 * The mention most likely to be a due date, or undefined. Prefers a mention marked as a deadline
 * ("前", "by", "截止"), then one not in the past, then the earliest in the text.
 */
export function resolveDue(text: string, options: ResolveDatesOptions): DueMention | undefined {
  const ctx = createDateContext(options.now, options.timeZone, options.workdayEnd);
  let best: { mention: DueMention; score: number } | undefined;
  for (const mention of rememberedMentions(text, ctx)) {
    const dueMs = dueInstant(mention, ctx);
    const before = text.slice(Math.max(0, mention.index - 16), mention.index);
    const after = text.slice(mention.index + mention.text.length, mention.index + mention.text.length + 8);
    const deadline = DEADLINE_INSIDE.test(mention.text.trim()) || DEADLINE_BEFORE.test(before) || DEADLINE_AFTER.test(after);
    const score = (deadline ? 2 : 0) + (dueMs >= ctx.now ? 1 : 0);
    if (!best || score > best.score) best = { mention: { ...mention, dueMs }, score };
  }
  return best?.mention;
}

/** Texts whose mentions are remembered, and the longest such text (UTF-16 code units). */
const MENTION_MEMO_ENTRIES = 32;
const MENTION_MEMO_TEXT_CHARS = 2048;
const mentionMemo = new Map<string, readonly DateMention[]>();

/**
 * `mentionsIn`, remembered for the last few (text, context) pairs, as copies. A message's text is
 * resolved up to three times at one instant — its dates and its due date when it is extracted,
 * the dates of the query when the context is rebuilt — and the parse (chrono's ~100 parsers and
 * the rules) is most of the cost. The answer depends on the text and the context's instant, zone
 * and workday end, and (through chrono's local-time reference, see date-chrono.ts) on the
 * process's zone in the one hour a year its clocks skip: the key holds all of them.
 */
function rememberedMentions(text: string, ctx: DateContext): DateMention[] {
  if (text.length > MENTION_MEMO_TEXT_CHARS) return mentionsIn(text, ctx);
  const key = `${ctx.now}|${typeof ctx.zone}:${ctx.zone}|${ctx.workdayEnd.hour}:${ctx.workdayEnd.minute}|${process.env.TZ}|${text}`;
  let mentions = mentionMemo.get(key);
  if (mentions === undefined) {
    mentions = mentionsIn(text, ctx);
    if (mentionMemo.size >= MENTION_MEMO_ENTRIES) mentionMemo.delete(mentionMemo.keys().next().value!);
    mentionMemo.set(key, mentions);
  }
  return mentions.map((m) => ({ ...m }));
}

function mentionsIn(text: string, ctx: DateContext): DateMention[] {
  // Traditional and Cantonese forms are read as Simplified Mandarin; the normalised text has the
  // same length, so each mention's offsets hold for the text as written.
  const normalized = normalizeChineseDates(text);
  const candidates: DateMention[] = [...ruleMentions(normalized, ctx)];
  for (const mention of chronoMentions(normalized, ctx)) candidates.push({ ...mention, source: 'chrono' });
  const kept = joinDayAndClock(pickNonOverlapping(candidates), normalized, ctx).map(({ clockOnly: _, ...m }) => m);
  if (normalized === text) return kept;
  return kept.map((m) => ({ ...m, text: text.slice(m.index, m.index + m.text.length) }));
}

// Between a day and the clock time that follows it: "xmas at 6 pm", "儿童节下午三点十五", "Friday, 3pm";
// and between a clock time and the day after it: "at 5 tomorrow afternoon", "at 19h30 on Fri".
const DAY_CLOCK_GAP = /^(?:\s*[,，]?\s*(?:at|@|around|on)?\s*|的)$/i;
const CLOCK_DAY_GAP = /^\s*(?:on\s+)?$/i;
const isDay = (m: DateMention) => !m.hasTime && m.grain === 'day' && m.endMs === undefined;
// A day with a time of day but no clock reading ("tomorrow afternoon"): the clock before it refines it.
const isPeriodOfDay = (m: DateMention & { clockOnly?: boolean }) => m.hasTime && m.grain === 'hour' && !m.clockOnly && m.endMs === undefined;

/**
 * A day followed by a clock time that names no day ("xmas at 6 pm") is one mention: the time
 * on that day. chrono and the rules read the two apart when the day is one chrono does not
 * know (a holiday, 下周三), and would put the time on today.
 */
function joinDayAndClock(mentions: Array<DateMention & { clockOnly?: boolean }>, text: string, ctx: DateContext): Array<DateMention & { clockOnly?: boolean }> {
  const out: Array<DateMention & { clockOnly?: boolean }> = [];
  for (const mention of mentions) {
    const previous = out[out.length - 1];
    const gap = previous ? text.slice(previous.index + previous.text.length, mention.index) : '';
    const dayThenClock = previous && mention.clockOnly && isDay(previous) && DAY_CLOCK_GAP.test(gap);
    const clockThenDay = previous && previous.clockOnly && (isDay(mention) || isPeriodOfDay(mention)) && CLOCK_DAY_GAP.test(gap);
    if (previous && (dayThenClock || clockThenDay)) {
      const [dayOf, clockOf] = dayThenClock ? [previous, mention] : [mention, previous];
      const day = zonedParts(dayOf.startMs, ctx.zone);
      const clock = zonedParts(clockOf.startMs, ctx.zone);
      const startMs = instantAt(ctx, { year: day.year, month: day.month, day: day.day }, { hour: clock.hour, minute: clock.minute });
      const { endMs: _end, ...joined } = clockOf;
      out[out.length - 1] = { ...joined, text: text.slice(previous.index, mention.index + mention.text.length), index: previous.index, startMs, clockOnly: false };
      continue;
    }
    out.push(mention);
  }
  return out;
}

function dueInstant(mention: DateMention, ctx: DateContext): number {
  if (mention.hasTime) return mention.startMs;
  const p = zonedParts(mention.startMs, ctx.zone);
  const day = { year: p.year, month: p.month, day: p.day };
  if (mention.grain === 'week') return instantAt(ctx, weekdayInWeek(day, 5), ctx.workdayEnd);
  if (mention.grain === 'month') return instantAt(ctx, lastDayOfMonth(day), ctx.workdayEnd);
  if (mention.endMs !== undefined && mention.endMs - mention.startMs > DAY_MS) {
    // A quarter, a year, 下旬: due on its last day.
    const last = zonedParts(mention.endMs - DAY_MS / 2, ctx.zone);
    return instantAt(ctx, { year: last.year, month: last.month, day: last.day }, ctx.workdayEnd);
  }
  return instantAt(ctx, day, ctx.workdayEnd);
}

const HAS_HAN = /\p{Script=Han}/u;
const HAS_LATIN = /[A-Za-z]/;

function ruleMentions(text: string, ctx: DateContext): DateMention[] {
  const mentions: DateMention[] = [];
  // Rules are named by language ("zh.…", "en.…"): a text without Han characters (or without
  // Latin letters) need not be matched against the other language's patterns.
  const han = HAS_HAN.test(text);
  const latin = HAS_LATIN.test(text);
  for (const rule of RULES) {
    if ((!han && rule.name.startsWith('zh.')) || (!latin && rule.name.startsWith('en.'))) continue;
    for (const match of globalMatches(rule.pattern, text)) {
      const resolved: ResolvedDate | undefined = rule.resolve(match.groups ?? {}, ctx);
      if (resolved) mentions.push({ text: match[0], index: match.index, ...resolved, source: 'rule' });
    }
  }
  return mentions;
}

/**
 * Keeps one mention per stretch of text. A rule beats chrono wherever they overlap, except when
 * chrono's span strictly contains the rule's: chrono then read more of the phrase ("下周五下午三点"
 * against the rule's "下周五"). Among equals the longer span, then the earlier one, wins.
 */
function pickNonOverlapping(candidates: DateMention[]): DateMention[] {
  const chronoContains = (outer: DateMention, inner: DateMention) =>
    outer.source === 'chrono' &&
    inner.source === 'rule' &&
    outer.index <= inner.index &&
    outer.index + outer.text.length >= inner.index + inner.text.length &&
    outer.text.length > inner.text.length;
  const ranked = candidates
    .filter((m) => !candidates.some((other) => chronoContains(other, m)))
    .sort((a, b) => rank(a) - rank(b) || b.text.length - a.text.length || a.index - b.index);
  const kept: DateMention[] = [];
  for (const mention of ranked) {
    const end = mention.index + mention.text.length;
    if (kept.every((k) => end <= k.index || mention.index >= k.index + k.text.length)) kept.push(mention);
  }
  return kept.sort((a, b) => a.index - b.index);
}

const rank = (m: DateMention) => (m.source === 'rule' ? 0 : 1);
