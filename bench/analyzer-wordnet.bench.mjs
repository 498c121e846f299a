// What WordNet concepts cost the search analyzer (src/memory/analyzer.ts): CPU to analyse real
// turns and the number of terms they yield, with the default analyzer (WordNet on) and with
// `wordnet: false`, in one process, rounds interleaved, medians of seven. Text read at run time
// from ../shared/corpus: LoCoMo's turns (English) and MADial-Bench's memories (Chinese).
//
//   npx tsc -p tsconfig.build.json && node bench/analyzer-wordnet.bench.mjs [--json]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median, requireDist, root, sharedDir, table } from './lib.mjs';
import { locomoTurns } from './locomo.mjs';

requireDist();
const json = process.argv.includes('--json');
const { createSearchAnalyzer } = await import(pathToFileURL(join(root, 'dist', 'memory', 'analyzer.js')).href);
const corpus = join(sharedDir, 'corpus');
const english = JSON.parse(readFileSync(join(corpus, 'locomo', 'locomo-dev.json'), 'utf8')).flatMap((c) => locomoTurns(c).map((t) => t.text));
const chinese = [];
for (const line of readFileSync(join(corpus, 'madial-zh', 'memories.jsonl'), 'utf8').split('\n')) {
  if (line.trim() !== '') chinese.push(...Object.values(JSON.parse(line)).map((m) => m.event));
}
const analyzers = { on: createSearchAnalyzer(), off: createSearchAnalyzer({ wordnet: false }) };
const ROUNDS = 7;
const cpuMs = (fn) => {
  const start = process.cpuUsage();
  fn();
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
};
const sides = {
  'English, indexed': (a) => english.forEach((t) => a(t)),
  'English, as queries': (a) => english.forEach((t) => (a.query ?? a)(t)),
  'Chinese, indexed': (a) => chinese.forEach((t) => a(t)),
};
// Warm-up: WordNet's data and jieba's dictionary load on first use.
for (const a of Object.values(analyzers)) for (const run of Object.values(sides)) run(a);
const times = {};
for (let r = 0; r < ROUNDS; r++) {
  for (const [side, run] of Object.entries(sides)) {
    for (const [name, a] of Object.entries(analyzers)) ((times[side] ??= {})[name] ??= []).push(cpuMs(() => run(a)));
  }
}
const texts = { 'English, indexed': english, 'English, as queries': english, 'Chinese, indexed': chinese };
const termsOf = (a, side) => texts[side].reduce((n, t) => n + (side.endsWith('queries') ? (a.query ?? a)(t) : a(t)).length, 0);
const rows = Object.keys(sides).map((side) => {
  const on = median(times[side].on);
  const off = median(times[side].off);
  const n = texts[side].length;
  return {
    texts: side,
    n,
    'µs/text on': ((on * 1000) / n).toFixed(1),
    'µs/text off': ((off * 1000) / n).toFixed(1),
    'cpu ×': (on / off).toFixed(2),
    'terms ×': (termsOf(analyzers.on, side) / termsOf(analyzers.off, side)).toFixed(2),
  };
});
if (json) console.log(JSON.stringify({ rounds: ROUNDS, rows }, null, 2));
else {
  console.log(`WordNet concepts in the search analyzer: CPU and terms, on (default) vs off (medians of ${ROUNDS} interleaved rounds)`);
  table(rows);
}
