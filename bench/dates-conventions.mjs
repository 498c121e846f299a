// Where ctxvm deliberately answers differently from Duckling (docs/dates.md, "Conventions"): the
// phrases are recognised by their shape, and scored against ctxvm's answer (`ours`), counted
// apart as "convention". `ours` returns an expected {kind, valueMs, grain}, or undefined when
// ctxvm deliberately reads no date there.
const DAY = 86_400_000;
const NOW = Date.parse('2013-02-12T04:30:00-02:00');

export const DUCKLING_CONVENTIONS = [
  {
    // "now", 现在, 宜家: a reminder "now" has no due date; reading one would turn every
    // "I'm now on the report" into a dated task.
    name: 'now-is-not-a-date',
    lang: 'any',
    matches: (r) => r.expected.grain === 'second' && r.expected.kind === 'value' && r.expected.valueMs === Date.parse('2013-02-12T04:30:00-02:00'),
    ours: () => undefined,
  },
  {
    // A bare weekday said on that weekday is today (the next one on or after today), not in a
    // week: "周二交报告" said on a Tuesday means today. Duckling reads the one a week later.
    name: 'bare-weekday-includes-today',
    lang: 'any',
    matches: (r) => /^(?:on\s+)?(?:tuesday|tues?\.?|星期二|礼拜二|禮拜二|周二|週二)$/i.test(r.phrase.trim()),
    ours: (r) => ({ kind: 'value', valueMs: r.expected.valueMs - 7 * DAY, grain: 'day' }),
  },
  {
    // A clock time from 1 to 6 without am/pm or a time of day is the afternoon ("at 4:23" →
    // 16:23): in a task assistant "at 3" is rarely 3 in the night. Duckling takes the nearest.
    name: 'small-hours-are-afternoon',
    lang: 'any',
    matches: (r) => /^(?:at\s+)?[1-6]:\d\d$/.test(r.phrase.trim()) && new Date(r.expected.valueMs - 7_200_000).getUTCHours() < 7,
    ours: (r) => ({ kind: 'value', valueMs: r.expected.valueMs + 12 * 3_600_000, grain: r.expected.grain }),
  },
  {
    // "sat", "sun", "fri" alone in lower case are words, not dates (date-chrono.ts); "Sat",
    // "sat." and "saturday" are read.
    name: 'lowercase-weekday-abbreviation-is-a-word',
    lang: 'en',
    matches: (r) => /^(?:sat|sun|mon|tue|wed|thu|fri)$/.test(r.phrase.trim()),
    ours: () => undefined,
  },
  {
    // A clock time already past today is tomorrow's (date-chrono.ts): "4:23am" said at 04:30 is
    // a reminder for tomorrow. Duckling keeps some of these on today.
    name: 'past-clock-time-is-tomorrow',
    lang: 'any',
    matches: (r) =>
      r.expected.kind === 'value' && ['hour', 'minute'].includes(r.expected.grain) && r.expected.valueMs < NOW && r.expected.valueMs > NOW - 12 * 3_600_000 && !/yesterday|ago|last|昨|前/i.test(r.phrase),
    ours: (r) => ({ kind: 'value', valueMs: r.expected.valueMs + DAY, grain: r.expected.grain }),
  },
  {
    // Days counted from now are whole days ("in a day", "7 days ago"): a date, not now's hour
    // moved by 24 hours. Duckling keeps the hour.
    name: 'days-from-now-are-days',
    lang: 'en',
    matches: (r) => /^(?:in\s+(?:a|one|\d+)\s+days?|(?:a|one|\d+)\s+days?\s+(?:ago|from\s+now))$/i.test(r.phrase.trim()) && r.expected.grain === 'hour',
    ours: (r) => ({ kind: 'value', valueMs: r.expected.valueMs - 4 * 3_600_000, grain: 'day' }),
  },
];
