// Benchmark of the rule-based message extractor on MASSIVE (zh-CN and en-US), read at run time
// from ../shared/corpus/massive/task-intents-train-dev.jsonl (never copied into the repo).
//
//   npx tsc -p tsconfig.build.json && node bench/memory-extract.bench.mjs [--json] [--dist DIR]
//
// Intent, 4-way. Gold: rows with role "task" map calendar_set / lists_createoradd / alarm_set to
// create_task, any *_query to query_tasks, any *_remove to delete_task; every row with role
// "negative" (music, weather, e-mail, ... — including weather_query and the like) is "other".
// Predicted: create_task, query_tasks and delete_task stay; every other intent the extractor
// returns (update_task, complete_task, chat, record_fact, ...) counts as "other". MASSIVE labels
// reschedules as calendar_set, so an update_task reading of one counts as wrong.
//
// Tune and check halves: MASSIVE's own partition. The rules and their weights are tuned by reading
// the train split ("tune"); the dev split ("check") is only measured, never read while tuning, and
// is the number quoted in docs/benchmarks.md. Both are printed.
//
// Due time, on dev rows with a date, time or timeofday slot. What is measured, honestly:
//   found     - the due mention the extractor would choose (resolveDue over the message, after
//               spelled-out numbers become digits) overlaps a gold slot value: one contains the
//               other, or they share a word (en) or two consecutive characters (zh);
//   resolved  - found, and it resolved to an instant (it always does when found);
//   dayOk     - on the subset whose gold date slot is a plain relative day or weekday
//               (today/tomorrow/monday/this friday/next friday, 今天/明天/后天/周三/下周五),
//               the due's local calendar day equals an independent oracle's;
//   hourOk    - on the subset whose gold time slot is a plain clock hour with am/pm or a time of
//               day (five p. m., 10 am, 下午三点, 早上八点), the due's local hour equals the oracle's.
// MASSIVE has no normalised values, so these are mention-detection rates plus two spot checks
// of the instant; they are not end-to-end due accuracy.
//
// Latency: wall time of each extract() call during the first pass over the dev rows (after 50
// warm-up calls that load the date grammar), so the JIT has not seen these strings yet.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { percentile, root, sharedDir, table } from './lib.mjs';

const args = process.argv.slice(2);
const asJson = args.includes('--json');
const distArg = args.indexOf('--dist');
const dist = distArg >= 0 ? resolve(args[distArg + 1]) : join(root, 'dist');
const corpus = join(sharedDir, 'corpus', 'massive', 'task-intents-train-dev.jsonl');
if (!existsSync(corpus)) {
  console.error(`bench: skipped, ${corpus} is absent (the MASSIVE corpus lives in ../shared)`);
  process.exit(0);
}
const modulePath = join(dist, 'memory', 'extract', 'extract.js');
if (!existsSync(modulePath)) {
  console.error(`bench: ${modulePath} is missing; run \`npx tsc -p tsconfig.build.json\` first`);
  process.exit(2);
}
const { extract } = await import(pathToFileURL(modulePath).href);
const { MessageDates } = await import(pathToFileURL(join(dist, 'memory', 'extract', 'message-dates.js')).href);
const { zonedParts } = await import(pathToFileURL(join(dist, 'core', 'time-zone.js')).href);

const LOCALES = {
  'zh-CN': { zone: 'Asia/Shanghai', now: Date.parse('2026-03-10T09:30:00+08:00') },
  'en-US': { zone: 'America/New_York', now: Date.parse('2026-03-10T09:30:00-04:00') },
};
const CLASSES = ['create_task', 'query_tasks', 'delete_task', 'other'];
const CREATE_INTENTS = new Set(['calendar_set', 'lists_createoradd', 'alarm_set']);
const DATE_SLOTS = new Set(['date', 'time', 'timeofday']);

function goldOf(row) {
  if (row.role !== 'task') return 'other';
  if (CREATE_INTENTS.has(row.intent)) return 'create_task';
  if (row.intent.endsWith('_query')) return 'query_tasks';
  if (row.intent.endsWith('_remove')) return 'delete_task';
  return 'other';
}
const predictedOf = (intent) => (CLASSES.includes(intent) ? intent : 'other');

const rows = readFileSync(corpus, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
const report = { corpus, mapping: 'role=task: *_set/lists_createoradd→create_task, *_query→query_tasks, *_remove→delete_task; role=negative→other', locales: {} };

for (const [locale, { zone, now }] of Object.entries(LOCALES)) {
  const options = { now, timeZone: zone };
  const mine = rows.filter((r) => r.locale === locale);
  for (const r of mine.slice(0, 50)) extract(r.utt, options);
  const dev = mine.filter((r) => r.split === 'dev');
  const times = [];
  const devMetrics = intentMetrics(dev, options, times);
  const train = intentMetrics(mine.filter((r) => r.split === 'train'), options, []);
  report.locales[locale] = {
    zone,
    now: new Date(now).toISOString(),
    check: { split: 'dev', accuracy: devMetrics.accuracy, n: devMetrics.n },
    tune: { split: 'train', accuracy: train.accuracy, n: train.n },
    dev: devMetrics,
    train: { accuracy: train.accuracy, n: train.n },
    due: dueMetrics(dev, options, locale),
    latencyMs: latency(times),
  };
}

if (asJson) {
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} else {
  printReport(report);
}

function intentMetrics(set, options, times) {
  const confusion = Object.fromEntries(CLASSES.map((g) => [g, Object.fromEntries(CLASSES.map((p) => [p, 0]))]));
  let correct = 0;
  let targetMismatches = 0;
  for (const row of set) {
    const gold = goldOf(row);
    if (row.role === 'task' && row.target !== { create_task: 'create', query_tasks: 'query', delete_task: 'delete' }[gold]) targetMismatches += 1;
    const t0 = process.hrtime.bigint();
    const extraction = extract(row.utt, options);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const predicted = predictedOf(extraction.intent);
    confusion[gold][predicted] += 1;
    if (gold === predicted) correct += 1;
  }
  const perClass = {};
  for (const c of CLASSES) {
    const tp = confusion[c][c];
    const predictedN = CLASSES.reduce((sum, g) => sum + confusion[g][c], 0);
    const goldN = CLASSES.reduce((sum, p) => sum + confusion[c][p], 0);
    const precision = predictedN ? tp / predictedN : 0;
    const recall = goldN ? tp / goldN : 0;
    perClass[c] = { precision: round(precision), recall: round(recall), f1: round(precision + recall ? (2 * precision * recall) / (precision + recall) : 0), support: goldN };
  }
  return { n: set.length, accuracy: round(correct / set.length), perClass, confusion, targetMismatches };
}

function dueMetrics(set, options, locale) {
  const m = { utterances: 0, found: 0, resolved: 0, anyMention: 0, dayChecked: 0, dayOk: 0, hourChecked: 0, hourOk: 0 };
  for (const row of set) {
    const slots = row.slots.filter((s) => DATE_SLOTS.has(s.type));
    if (slots.length === 0) continue;
    m.utterances += 1;
    const dates = new MessageDates(row.utt, options);
    if (dates.mentions.some((mention) => slots.some((s) => overlaps(mention.text, s.value, locale)))) m.anyMention += 1;
    const due = dates.due();
    if (!due || !slots.some((s) => overlaps(due.text, s.value, locale))) continue;
    m.found += 1;
    if (Number.isFinite(due.dueMs)) m.resolved += 1;
    const local = zonedParts(due.startMs, options.timeZone);
    const dateSlot = slots.find((s) => s.type === 'date');
    const expectedDay = dateSlot && dayOracle(dateSlot.value, options, locale);
    if (expectedDay) {
      m.dayChecked += 1;
      if (expectedDay === `${local.year}-${local.month}-${local.day}`) m.dayOk += 1;
    }
    const timeSlot = slots.find((s) => s.type === 'time');
    const expectedHour = timeSlot && hourOracle(timeSlot.value, locale);
    if (expectedHour !== undefined && due.hasTime) {
      m.hourChecked += 1;
      if (expectedHour === local.hour) m.hourOk += 1;
    }
  }
  return { ...m, foundRate: round(m.found / m.utterances), resolvedRate: round(m.resolved / m.utterances), mentionRate: round(m.anyMention / m.utterances), dayAccuracy: round(m.dayOk / m.dayChecked), hourAccuracy: round(m.hourOk / m.hourChecked) };
}

function overlaps(a, b, locale) {
  const x = a.toLowerCase().replace(/\s+/g, ' ').trim();
  const y = b.toLowerCase().replace(/\s+/g, ' ').trim();
  if (!x || !y) return false;
  if (x.includes(y) || y.includes(x)) return true;
  if (locale === 'zh-CN') {
    for (let i = 0; i + 1 < y.length; i += 1) if (x.includes(y.slice(i, i + 2))) return true;
    return false;
  }
  const stop = new Set(['the', 'a', 'an', 'at', 'on', 'in', 'of', 'for', 'to', 'and', 'p.', 'm.', 'am', 'pm']);
  const words = new Set(x.split(/[^a-z0-9']+/).filter((w) => w && !stop.has(w)));
  return y.split(/[^a-z0-9']+/).some((w) => w && !stop.has(w) && words.has(w));
}

/** The local day ("y-m-d") a plain relative-day or weekday slot means, or undefined. */
function dayOracle(value, { now, timeZone }, locale) {
  const today = zonedParts(now, timeZone);
  const base = Date.UTC(today.year, today.month - 1, today.day);
  const day = (offset) => {
    const d = new Date(base + offset * 86_400_000);
    return `${d.getUTCFullYear()}-${d.getUTCMonth() + 1}-${d.getUTCDate()}`;
  };
  const v = value.trim().toLowerCase();
  const relative = locale === 'zh-CN' ? { 今天: 0, 今晚: 0, 明天: 1, 后天: 2 } : { today: 0, tonight: 0, tomorrow: 1, 'day after tomorrow': 2, 'the day after tomorrow': 2 };
  if (v in relative) return day(relative[v]);
  const names = locale === 'zh-CN' ? ['日', '一', '二', '三', '四', '五', '六'] : ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
  const match = locale === 'zh-CN' ? /^(这|本|下)?(?:周|星期|礼拜)([一二三四五六日天])$/.exec(v) : /^(this|next)?\s*(sunday|monday|tuesday|wednesday|thursday|friday|saturday)$/.exec(v);
  if (!match) return undefined;
  const target = names.indexOf(match[2] === '天' ? '日' : match[2]);
  const mod = match[1];
  const mondayOffset = (today.weekday + 6) % 7;
  const inWeek = (weekOffset) => day(7 * weekOffset - mondayOffset + ((target + 6) % 7));
  if (mod === 'next' || mod === '下') return inWeek(1);
  if (mod === 'this' || mod === '这' || mod === '本') return inWeek(0);
  return day((target - today.weekday + 7) % 7);
}

/** The local hour a plain clock-hour slot means ("five p. m.", "10 am", "下午三点"), or undefined. */
function hourOracle(value, locale) {
  const v = value.trim().toLowerCase();
  if (locale === 'zh-CN') {
    const m = /^(上午|早上|早晨|清晨|中午|下午|晚上|傍晚)?([一二两三四五六七八九十]{1,3}|\d{1,2})点(?:整|钟)?$/.exec(v);
    if (!m || !m[1]) return undefined;
    const digits = { 一: 1, 二: 2, 两: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9, 十: 10, 十一: 11, 十二: 12 };
    const h = /^\d+$/.test(m[2]) ? Number(m[2]) : digits[m[2]];
    if (h === undefined || h > 12) return undefined;
    return ['下午', '晚上', '傍晚'].includes(m[1]) && h < 12 ? h + 12 : m[1] === '中午' && h < 6 ? h + 12 : h;
  }
  const words = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12 };
  const m = /^(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d{1,2})\s*(a\.?\s?m\.?|p\.?\s?m\.?)$/.exec(v);
  if (!m) return undefined;
  const h = words[m[1]] ?? Number(m[1]);
  const pm = m[2].startsWith('p');
  return (h % 12) + (pm ? 12 : 0);
}

function latency(times) {
  return { n: times.length, p50: round(percentile(times, 50), 3), p95: round(percentile(times, 95), 3), p99: round(percentile(times, 99), 3), max: round(Math.max(...times), 3) };
}

function round(x, digits = 4) {
  return Number.isFinite(x) ? Math.round(x * 10 ** digits) / 10 ** digits : null;
}

function printReport(r) {
  console.log(`MASSIVE task intents: ${r.corpus}`);
  console.log(`gold mapping: ${r.mapping}\n`);
  for (const [locale, l] of Object.entries(r.locales)) {
    console.log(`== ${locale} (now ${l.now}, zone ${l.zone})`);
    console.log(`intent accuracy: check ${l.check.accuracy} (dev, n=${l.check.n}, never read while tuning), tune ${l.tune.accuracy} (train, n=${l.tune.n}, where the rules were read from)`);
    table(CLASSES.map((c) => ({ class: c, ...l.dev.perClass[c] })));
    console.log('\nconfusion (dev, rows gold, columns predicted):');
    table(CLASSES.map((g) => ({ gold: g, ...l.dev.confusion[g] })));
    const d = l.due;
    console.log(`\ndue on dev rows with date/time slots (n=${d.utterances}): due mention overlaps a slot ${d.found} (${d.foundRate}), resolved ${d.resolved} (${d.resolvedRate}); any mention overlaps ${d.anyMention} (${d.mentionRate})`);
    console.log(`  day check ${d.dayOk}/${d.dayChecked} (${d.dayAccuracy}), hour check ${d.hourOk}/${d.hourChecked} (${d.hourAccuracy})`);
    console.log(`latency per extract() (dev, ms): p50 ${l.latencyMs.p50}, p95 ${l.latencyMs.p95}, p99 ${l.latencyMs.p99}, max ${l.latencyMs.max}\n`);
  }
}
