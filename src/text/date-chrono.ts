/**
 * chrono-node (zh.hans and en casual) as a source of date mentions, corrected to ctxvm's rules.
 *
 * Reference: chrono ignores time-zone names, and several zh.hans parsers read the reference with
 * the process's local-time getters (`getHours`, `getDate`), so `{instant: now, timezone: offset}`
 * still resolves 今天/明天 in the server's zone (a UTC server at 07:00 in Shanghai calls the day
 * before "today"). chrono is therefore given a reference instant whose process-local wall clock
 * equals the user's wall clock, and only its wall-clock fields are read back; they are placed in
 * the user's zone with zonedTimeToInstant, which is also correct across DST changes between now
 * and the mentioned date (a fixed offset is not). Durations ("in 2 hours", "两小时后") are added
 * to the real now instead.
 *
 * Corrections: clock times without am/pm or a time of day from 1 to 6 o'clock are afternoon
 * ("三点开会" = 15:00); a time or a bare weekday already past is moved forward (to tomorrow, to
 * next week), as is a month-day already past this year (to next year); times of day without a
 * clock time use PERIOD_HOURS; ambiguous lower-case English words ("sat", "sun", "march") and
 * "now"/现在 are dropped.
 */
import { casual as chronoEn } from 'chrono-node/en';
import { Chrono, createCasualConfiguration } from 'chrono-node/zh/hans';
import type { ParsedResult } from 'chrono-node/en';
import {
  PERIOD_HOURS,
  addDays,
  compareDates,
  dayMention,
  instantAt,
  monthPeriod,
  startOfDate,
  timeMention,
  weekdayOf,
} from './date-calendar.js';
import type { CivilDate, ClockTime, DateContext, ResolvedDate } from './date-calendar.js';

type ParsedComponents = ParsedResult['start'];

/** A chrono result converted and corrected. */
export interface ChronoMention extends ResolvedDate {
  index: number;
  text: string;
}

const HAS_HAN = /\p{Script=Han}/u;
const HAS_LATIN_OR_DIGIT = /[A-Za-z0-9]/;
const EN_RELATIVE_OK = /^(?:in|within|after)\b|\b(?:from\s+now|later|ago|hence|before|earlier)$/i;
const ZH_RELATIVE_TIME = /(?:小时|钟头|分钟|分|秒)(?:钟)?(?:后|以后|之后|前|以前|之前)$/;
const DROPPED_TEXTS = new Set(['sat', 'sun', 'mon', 'wed', 'thu', 'fri', 'tue', 'march', 'may', 'now', 'second', '现在', '立刻', '立即', '即刻']);
const MERIDIEM_HINT = /上午|下午|中午|早上|早晨|晚上|凌晨|夜里|夜间|傍晚|今早|明早|今晚|明晚|早|晚|\b[ap]\.?m\b|morning|afternoon|evening|night|tonight|noon|midnight/i;
const WEEKDAY_MODIFIER = /\b(?:this|next|last|past|previous|coming)\b|[上下这本]个?(?:周|星期|礼拜)/i;
const BACKWARD_HINT = /\b(?:last|past|previous|ago|yesterday)\b|上个?(?:周|星期|礼拜|月)|昨|前天|去年/i;
const PERIOD_PATTERNS: ReadonlyArray<[RegExp, number]> = [
  [/早上|早晨|上午|今早|明早|morning/i, PERIOD_HOURS.morning],
  [/中午/, PERIOD_HOURS.noon],
  [/下午|afternoon/i, PERIOD_HOURS.afternoon],
  [/傍晚/, PERIOD_HOURS.dusk],
  [/晚上|夜里|夜间|今晚|明晚|evening|night/i, PERIOD_HOURS.evening],
];

/** The zh.hans parsers whose pattern is constant but built anew on every parse (see `keepConstantPatterns`). */
export const CONSTANT_PATTERN_PARSERS: readonly string[] = ['ZHHansDateParser', 'ZHHansCasualDateParser'];

/**
 * Has the `CONSTANT_PATTERN_PARSERS` of `chrono` build their pattern once; returns the names of
 * those it patched. Those two build their (constant) expression anew on every parse, so chrono's
 * check "did the pattern change?" always says yes and it compiles another, wrapped in its
 * boundary: four expressions built per parse of any Chinese text, most of the parse's time.
 * Handed the same objects, it keeps its compiled pattern (neither has the g or y flag: no state
 * to share). Found by class name: a chrono that renames them loses only the speedup (a test
 * checks that both are found).
 */
export function keepConstantPatterns(chrono: Chrono): string[] {
  const patched: string[] = [];
  for (const parser of chrono.parsers as Array<{ innerPattern?: (context?: unknown) => RegExp; constructor: { name: string } }>) {
    if (!CONSTANT_PATTERN_PARSERS.includes(parser.constructor.name) || !parser.innerPattern) continue;
    const pattern = parser.innerPattern();
    if (pattern.global || pattern.sticky) continue;
    parser.innerPattern = () => pattern;
    patched.push(parser.constructor.name);
  }
  return patched;
}

/** chrono's casual zh.hans parser, with its constant patterns built once (`keepConstantPatterns`). */
const chronoZh = new Chrono(createCasualConfiguration());
keepConstantPatterns(chronoZh);

/** Date mentions chrono finds in `text`, in both languages, corrected; may overlap each other. */
export function chronoMentions(text: string, ctx: DateContext): ChronoMention[] {
  const reference = wallClockReference(ctx);
  const results: ParsedResult[] = [];
  if (HAS_HAN.test(text)) results.push(...chronoZh.parse(text, reference));
  if (HAS_LATIN_OR_DIGIT.test(text)) results.push(...chronoEn.parse(text, reference));
  const mentions: ChronoMention[] = [];
  for (const result of results) {
    const resolved = toMention(result, ctx, reference.instant.getTime());
    if (!resolved) continue;
    // chrono sometimes keeps the punctuation after a date ("Friday,").
    const trimmed = result.text.replace(/[\s,.;:!?，。；：！？、]+$/u, '');
    mentions.push({ index: result.index, text: trimmed, ...resolved });
  }
  return mentions;
}

/**
 * An instant whose process-local wall clock reads the user's wall clock at `now`. (Off by the
 * gap for the one hour a year when that wall time does not exist in the process's own zone;
 * servers running in UTC never hit it.)
 */
function wallClockReference(ctx: DateContext): { instant: Date; timezone: number } {
  const p = ctx.nowParts;
  const instant = new Date(p.year, p.month - 1, p.day, p.hour, p.minute, p.second, ((ctx.now % 1000) + 1000) % 1000);
  instant.setFullYear(p.year); // the Date constructor reads years 0-99 as 1900-1999
  return { instant, timezone: -instant.getTimezoneOffset() };
}

function toMention(result: ParsedResult, ctx: DateContext, referenceMs: number): ResolvedDate | undefined {
  const { start, text } = result;
  if (DROPPED_TEXTS.has(text.trim())) return undefined;
  const tags = start.tags();
  if (tags.has('result/relativeDateAndTime') || ZH_RELATIVE_TIME.test(text)) {
    if (!HAS_HAN.test(text) && !EN_RELATIVE_OK.test(text.trim())) return undefined; // "3.5 hours" is a duration, not a date
    const deltaMs = start.date().getTime() - referenceMs;
    return { startMs: ctx.now + deltaMs, hasTime: true, grain: deltaMs % 3_600_000 === 0 ? 'hour' : 'minute' };
  }
  const wall = readWall(start, text);
  const date = forwardDate(start, text, wall.date, wall.time, ctx);
  const named = mentionFor(start, wall, date, ctx);
  const clockOnly = wall.time !== undefined && !wall.implied && !start.isCertain('day') && !start.isCertain('weekday') && !start.isCertain('month');
  const main = named && clockOnly ? { ...named, clockOnly } : named;
  if (!main || !result.end) return main;
  const endMs = endInstant(result.end, wall, date, main, ctx);
  return endMs === undefined ? main : { ...main, endMs };
}

interface Wall {
  date: CivilDate;
  time?: ClockTime & { second: number };
  /** The time came from a time-of-day word, not a clock reading. */
  implied: boolean;
}

function readWall(c: ParsedComponents, text: string, startHour?: number): Wall {
  const date = { year: c.get('year') ?? 1970, month: c.get('month') ?? 1, day: c.get('day') ?? 1 };
  if (c.isCertain('hour')) {
    let hour = c.get('hour') ?? 0;
    if (!c.isCertain('meridiem')) {
      if (startHour !== undefined) {
        // The end of "3点到5点" follows its start into the afternoon.
        if (startHour >= 12 && hour < 12 && hour + 12 > startHour) hour += 12;
      } else if (hour >= 1 && hour <= 6 && !MERIDIEM_HINT.test(text) && !/(?:^|\D)0\d\s*[:：]/.test(text)) {
        // "三点开会", "at 3": without am/pm or a time of day, 1-6 o'clock is the afternoon.
        hour += 12;
      }
    }
    return { date, time: { hour, minute: c.get('minute') ?? 0, second: c.get('second') ?? 0 }, implied: false };
  }
  const period = startHour === undefined ? PERIOD_PATTERNS.find(([pattern]) => pattern.test(text)) : undefined;
  if (period) return { date, time: { hour: period[1], minute: 0, second: 0 }, implied: true };
  return { date, implied: false };
}

/** Applies the forward-looking defaults to the date chrono inferred (see the file comment). */
function forwardDate(c: ParsedComponents, text: string, date: CivilDate, time: ClockTime | undefined, ctx: DateContext): CivilDate {
  const day = c.isCertain('day');
  const weekday = c.isCertain('weekday');
  if (!day && !weekday && !c.isCertain('month')) {
    // A time alone is today's, or tomorrow's once it has passed.
    if (time && instantAt(ctx, ctx.today, time) < ctx.now) return addDays(ctx.today, 1);
    return ctx.today;
  }
  if (weekday && !day) {
    if (WEEKDAY_MODIFIER.test(text)) return date;
    const target = c.get('weekday') ?? weekdayOf(date);
    return addDays(ctx.today, (target - weekdayOf(ctx.today) + 7) % 7);
  }
  if (day && weekday && !c.isCertain('year')) {
    // "Sunday, Feb 10": the weekday names the year — the nearest year in which that date is one.
    const target = c.get('weekday');
    const years = [0, 1, -1, 2, -2, 3, -3].map((k) => ({ ...date, year: ctx.today.year + k }));
    const pinned = years.find((d) => weekdayOf(d) === target);
    if (pinned) return pinned;
  }
  if (day && !c.isCertain('year') && compareDates(date, ctx.today) < 0 && !BACKWARD_HINT.test(text)) {
    return { ...date, year: ctx.today.year + (compareDates({ ...date, year: ctx.today.year }, ctx.today) < 0 ? 1 : 0) };
  }
  return date;
}

function mentionFor(c: ParsedComponents, wall: Wall, date: CivilDate, ctx: DateContext): ResolvedDate | undefined {
  if (c.isCertain('month') && !c.isCertain('day') && !c.isCertain('weekday') && !wall.time) {
    const year = c.isCertain('year') ? date.year : ctx.today.year + (date.month < ctx.today.month ? 1 : 0);
    return monthPeriod(ctx, { year, month: date.month, day: 1 });
  }
  if (!wall.time) return dayMention(ctx, date);
  if (wall.implied) return timeMention(ctx, date, wall.time, 'hour');
  const offset = c.isCertain('timezoneOffset') ? c.get('timezoneOffset') : null;
  if (offset !== null) {
    // An explicit zone in the text ("5pm EST", an ISO "Z") wins over the user's zone.
    const { hour, minute, second } = wall.time;
    const startMs = Date.UTC(date.year, date.month - 1, date.day, hour, minute, second) - offset * 60_000;
    return { startMs, hasTime: true, grain: minute === 0 ? 'hour' : 'minute' };
  }
  return { ...timeMention(ctx, date, wall.time), startMs: instantAt(ctx, date, wall.time, wall.time.second) };
}

/** The end of a span: exclusive for whole days, and never before the start. */
function endInstant(c: ParsedComponents, start: Wall, startDate: CivilDate, main: ResolvedDate, ctx: DateContext): number | undefined {
  const end = readWall(c, '', start.time?.hour ?? -1);
  const endDate = c.isCertain('day') || c.isCertain('weekday') ? end.date : startDate;
  if (!end.time) return startOfDate(ctx, addDays(endDate, 1));
  let endMs = instantAt(ctx, endDate, end.time, end.time.second);
  if (endMs <= main.startMs && !c.isCertain('day')) endMs = instantAt(ctx, addDays(endDate, 1), end.time, end.time.second);
  return endMs > main.startMs ? endMs : undefined;
}
