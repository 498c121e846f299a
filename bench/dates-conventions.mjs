// Where ctxvm deliberately answers differently from Duckling (docs/dates.md, "Conventions"): the
// phrases are recognised by their shape, and scored against ctxvm's answer (`ours`), counted
// apart as "convention". `ours` returns an expected {kind, valueMs, grain}, or undefined when
// ctxvm deliberately reads no date there.
const DAY = 86_400_000;

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
];
