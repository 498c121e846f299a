// `npm run bench:dates`: the date resolver, through the rule extractor (what `memory extract`
// runs), scored on Duckling's time-expression corpus, read at run time from
// ../shared/corpus/duckling/time-dev.jsonl (never copied into the repo).
//
//   npm run bench:dates [-- --json] [--dist DIR] [--list wrong|missed|all] [--half tune|check]
//
// Each phrase is wrapped as a user would say it — zh "提醒我{phrase}开会", en "remind me to call
// Bob {phrase}" — and extracted at the corpus's "now" (2013-02-12T04:30-02:00) in a fixed zone of
// -120 minutes. The phrase's value is the date or time entity overlapping the phrase (the longest
// one when several do); none is "missed".
//
// Scoring (the corpus README's rule): exact when the instant, cut to the expected grain in the
// user's zone, equals the expected start (an open interval's one boundary); lenient when exact or
// inside the expected span — an interval's [value, end), a value's one grain, an open interval's
// side (before: up to and including the boundary); wrong otherwise.
//
// Categories: holiday (the corpus names one), range (two endpoints or an open side: "from 3:30
// to 6", "after 2 pm", "ASAP"), calendar (quarters, years, seasons, weeks of a month, ordinal
// and "closest" compositions, BC years), core (the rest: relative days, times of day, durations,
// month-day dates, ends and parts of periods). Phrases where ctxvm keeps its own convention
// (docs/dates.md) are counted apart as "convention" and scored against ctxvm's answer instead.
//
// Tune and check halves: split by example group (the phrases that share one expected value),
// FNV-1a of the group key, even = tune, odd = check. Rules are tuned on the tune half only; the
// check half is what docs/benchmarks.md quotes. Both are printed.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { root, sharedDir, table } from './lib.mjs';

const args = process.argv.slice(2);
const asJson = args.includes('--json');
const argValue = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const dist = argValue('--dist') ? resolve(argValue('--dist')) : join(root, 'dist');
const list = argValue('--list');
const listHalf = argValue('--half');
const corpus = join(sharedDir, 'corpus', 'duckling', 'time-dev.jsonl');
if (!existsSync(corpus)) {
  console.error(`bench:dates: skipped, ${corpus} is absent (the Duckling corpus lives in ../shared)`);
  process.exit(0);
}
const modulePath = join(dist, 'memory', 'extract', 'extract.js');
if (!existsSync(modulePath)) {
  console.error(`bench:dates: ${modulePath} is missing; run \`npm run build\` first`);
  process.exit(2);
}
const { extract } = await import(pathToFileURL(modulePath).href);
const { DUCKLING_CONVENTIONS } = await import(pathToFileURL(join(root, 'bench', 'dates-conventions.mjs')).href);

const NOW = Date.parse('2013-02-12T04:30:00-02:00');
const ZONE = -120;
const ZONE_MS = ZONE * 60_000;
const WRAP = {
  zh: (p) => ({ text: `提醒我${p}开会`, at: 3 }),
  en: (p) => ({ text: `remind me to call Bob ${p}`, at: 'remind me to call Bob '.length }),
};

const rows = readFileSync(corpus, 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l, i) => {
    try {
      return JSON.parse(l);
    } catch {
      console.error(`bench:dates: ${corpus}:${i + 1}: not JSON`);
      process.exit(2);
    }
  });

/** Group key: the phrases of one Duckling example share their expected answer. */
const groupKey = (r) => `${r.lang}|${r.expected.kind}|${r.expected.valueMs}|${r.expected.endMs ?? ''}|${r.expected.grain}|${r.expected.direction ?? ''}`;
function fnv1a(text) {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  return h;
}
const halfOf = (r) => (fnv1a(groupKey(r)) % 2 === 0 ? 'tune' : 'check');

const RANGE = /\b(?:from|to|till|until|through|between|and|after|before|since|asap|as soon as possible|later than|for \d+ days)\b|\d\s*[-–]\s*\d|\d(?:am|pm|h)?\s*-\s*\d|[到至~]|之间/i;
const CALENDAR = /quarter|qtr|\bseasons?\b|summer|winter|spring|autumn|fall\b|\bB\.?C\b|closest|\bweek of\b|weeks? (?:of|in)\b|weekend of|week-end (?:of|in)|week end of|(?:first|second|third|fourth|last|\d(?:st|nd|rd|th))\s+\w+day of|upcoming|季度|年$/i;
function categoryOf(r) {
  if (r.expected.holiday) return 'holiday';
  if (r.expected.kind === 'open' || RANGE.test(r.phrase)) return 'range';
  if (['quarter', 'year'].includes(r.expected.grain) || CALENDAR.test(r.phrase)) return 'calendar';
  return 'core';
}

// Civil fields of an instant in the fixed zone.
const civil = (ms) => {
  const d = new Date(ms + ZONE_MS);
  return { y: d.getUTCFullYear(), m: d.getUTCMonth(), d: d.getUTCDate(), wd: d.getUTCDay(), h: d.getUTCHours(), mi: d.getUTCMinutes(), s: d.getUTCSeconds() };
};
const fromCivil = (y, m, d = 1, h = 0, mi = 0, s = 0) => {
  const t = new Date(0);
  t.setUTCFullYear(y, m, d);
  t.setUTCHours(h, mi, s, 0);
  return t.getTime() - ZONE_MS;
};
function truncate(ms, grain) {
  const c = civil(ms);
  switch (grain) {
    case 'second': return fromCivil(c.y, c.m, c.d, c.h, c.mi, c.s);
    case 'minute': return fromCivil(c.y, c.m, c.d, c.h, c.mi);
    case 'hour': return fromCivil(c.y, c.m, c.d, c.h);
    case 'day': return fromCivil(c.y, c.m, c.d);
    case 'week': return fromCivil(c.y, c.m, c.d - ((c.wd + 6) % 7));
    case 'month': return fromCivil(c.y, c.m);
    case 'quarter': return fromCivil(c.y, c.m - (c.m % 3));
    case 'year': return fromCivil(c.y, 0);
    default: throw new Error(`unknown grain ${grain}`);
  }
}
function nextGrain(ms, grain) {
  const c = civil(ms);
  switch (grain) {
    case 'second': return ms + 1000;
    case 'minute': return ms + 60_000;
    case 'hour': return ms + 3_600_000;
    case 'day': return fromCivil(c.y, c.m, c.d + 1);
    case 'week': return fromCivil(c.y, c.m, c.d + 7);
    case 'month': return fromCivil(c.y, c.m + 1);
    case 'quarter': return fromCivil(c.y, c.m + 3);
    case 'year': return fromCivil(c.y + 1, 0);
    default: throw new Error(`unknown grain ${grain}`);
  }
}

function score(found, expected) {
  // (a convention where ctxvm deliberately reads no date)
  if (expected === undefined) return found === undefined ? 'exact' : 'wrong';
  if (found === undefined) return 'missed';
  if (truncate(found, expected.grain) === expected.valueMs) return 'exact';
  if (expected.kind === 'interval') return found >= expected.valueMs && found < expected.endMs ? 'lenient' : 'wrong';
  if (expected.kind === 'open') return (expected.direction === 'after' ? found >= expected.valueMs : found <= expected.valueMs) ? 'lenient' : 'wrong';
  return found >= expected.valueMs && found < nextGrain(expected.valueMs, expected.grain) ? 'lenient' : 'wrong';
}

/** The instant extraction reads from the phrase inside its wrapper, or undefined. */
function resolvePhrase(r) {
  const { text, at } = WRAP[r.lang](r.phrase);
  const x = extract(text, { now: NOW, timeZone: ZONE });
  const end = at + r.phrase.length;
  let best;
  for (const e of x.entities) {
    if ((e.type !== 'date' && e.type !== 'time') || e.valueMs === undefined || e.index === undefined) continue;
    if (e.index >= end || e.index + e.text.length <= at) continue;
    if (!best || e.text.length > best.text.length) best = e;
  }
  return best ? { valueMs: best.valueMs, text: best.text } : undefined;
}

const results = rows.map((r) => {
  const convention = DUCKLING_CONVENTIONS.find((c) => (c.lang === 'any' || c.lang === r.lang) && c.matches(r));
  const expected = convention ? convention.ours(r, { now: NOW, truncate, fromCivil, civil }) : r.expected;
  const found = resolvePhrase(r);
  return {
    id: r.id,
    lang: r.lang,
    variant: r.variant ?? 'en',
    phrase: r.phrase,
    half: halfOf(r),
    category: convention ? 'convention' : categoryOf(r),
    convention: convention?.name,
    outcome: score(found?.valueMs, expected),
    found: found ? `${new Date(found.valueMs + ZONE_MS).toISOString().slice(0, 16)} "${found.text}"` : '',
    expected: expected ? `${new Date(expected.valueMs + ZONE_MS).toISOString().slice(0, 16)} ${expected.kind}/${expected.grain}` : 'no date',
  };
});

const CATEGORIES = ['core', 'holiday', 'range', 'calendar', 'convention'];
function summarize(subset) {
  const n = subset.length;
  const count = (o) => subset.filter((r) => r.outcome === o).length;
  const exact = count('exact');
  const lenient = exact + count('lenient');
  return { n, exact, lenient, wrong: count('wrong'), missed: count('missed'), exactRate: n ? exact / n : NaN, lenientRate: n ? lenient / n : NaN };
}
const summary = [];
for (const half of ['tune', 'check']) {
  for (const lang of ['zh', 'en']) {
    for (const category of [...CATEGORIES, 'all']) {
      const subset = results.filter((r) => r.half === half && r.lang === lang && (category === 'all' || r.category === category));
      if (subset.length) summary.push({ half, lang, category, ...summarize(subset) });
    }
  }
}
const variants = [];
for (const half of ['tune', 'check']) {
  for (const variant of ['hans', 'hant/yue']) {
    const subset = results.filter((r) => r.half === half && r.variant === variant && r.category !== 'convention');
    if (subset.length) variants.push({ half, variant, ...summarize(subset) });
  }
}
const TARGETS = { core: 0.9, holiday: 0.8 };
const targets = summary
  .filter((s) => s.half === 'check' && TARGETS[s.category] !== undefined)
  .map((s) => ({ lang: s.lang, category: s.category, lenient: s.lenientRate, target: TARGETS[s.category], met: s.lenientRate >= TARGETS[s.category] }));

if (asJson) {
  console.log(JSON.stringify({ corpus, now: new Date(NOW).toISOString(), zoneMinutes: ZONE, digest: createHash('sha1').update(readFileSync(corpus)).digest('hex'), summary, variants, targets }, null, 2));
} else {
  const pct = (x) => (Number.isNaN(x) ? '-' : `${(100 * x).toFixed(1)}%`);
  console.log(`bench:dates: ${rows.length} phrases from ${corpus}, now 2013-02-12T04:30-02:00, zone -120 min\n`);
  table(summary.map((s) => ({ half: s.half, lang: s.lang, category: s.category, n: s.n, exact: s.exact, lenient: s.lenient, wrong: s.wrong, missed: s.missed, 'exact%': pct(s.exactRate), 'lenient%': pct(s.lenientRate) })));
  console.log('\nzh by script (conventions excluded):');
  table(variants.map((s) => ({ half: s.half, variant: s.variant, n: s.n, lenient: s.lenient, 'lenient%': pct(s.lenientRate) })));
  console.log('\ntargets (check half, lenient):');
  table(targets.map((t) => ({ lang: t.lang, category: t.category, lenient: pct(t.lenient), target: pct(t.target), met: t.met ? 'yes' : 'no' })));
  if (list) {
    const shown = results.filter((r) => (list === 'all' || r.outcome === list) && (!listHalf || r.half === listHalf));
    console.log(`\n${list} (${shown.length}):`);
    for (const r of shown) console.log(`${r.id}\t${r.half}\t${r.category}\t${r.outcome}\t${r.phrase}\t→ ${r.found || '-'}\texpected ${r.expected}${r.convention ? `\t(${r.convention})` : ''}`);
  }
}
