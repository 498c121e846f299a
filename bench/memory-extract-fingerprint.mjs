// Fingerprint of what the rule extractor reads out of MASSIVE's messages (zh-CN and en-US, read
// at run time from ../shared/corpus/massive/task-intents-train-dev.jsonl), each matched against
// 10 or 210 task names (the manager's wider match of a change request), plus the fuzzy
// similarity of 2,000 pairs: for a change that must not change extraction (a speedup of the
// title cutting or the name matching), run it on both checkouts and compare the digests.
//
//   node bench/memory-extract-fingerprint.mjs [--dist DIR]   (DIR: a checkout's root, default this one)
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { root, sharedDir } from './lib.mjs';

const distIndex = process.argv.indexOf('--dist');
const base = distIndex > 0 ? resolve(process.argv[distIndex + 1]) : root;
const corpus = join(sharedDir, 'corpus', 'massive', 'task-intents-train-dev.jsonl');
if (!existsSync(corpus)) {
  console.error(`memory-extract-fingerprint: ${corpus} is missing (the shared corpus); nothing to fingerprint`);
  process.exit(0);
}
const { createRuleExtractor } = await import(join(base, 'dist/memory/extract/extract.js'));
const { similarity } = await import(join(base, 'dist/memory/extract/fuzzy.js'));
const extractor = createRuleExtractor();
const texts = readFileSync(corpus, 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line).utt);
const names = [...new Set(texts.slice(0, 400))].map((text, i) => ({ kind: 'task', id: `t${i}`, text: text.slice(0, 30), status: i % 5 ? 'todo' : 'done' }));
const now = Date.parse('2026-03-10T09:00:00+08:00');
const hash = createHash('sha256');
for (const [i, text] of texts.entries()) {
  const recent = i % 2 ? names.slice(0, 10) : names.slice(i % 190, (i % 190) + 210);
  hash.update(JSON.stringify(extractor.extract(text, { now: now + i * 37_000, timeZone: 'Asia/Shanghai', recent })));
}
for (let i = 0; i < 2000; i++) hash.update(String(similarity(texts[i], texts[(i * 7) % texts.length])));
console.log(`${texts.length} messages: ${hash.digest('hex')}`);
