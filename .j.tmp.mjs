import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
let t0 = performance.now();
const { Jieba } = require('@node-rs/jieba');
const { dict } = require('@node-rs/jieba/dict');
const j = Jieba.withDict(dict);
console.log('load ms', performance.now() - t0);
for (const s of ['写周报', '把写周报标记为完成', '项目评审会', '下午三点开项目评审会 review the PR #42 ASAP', 'Node.js v2 版本发布了 🎉！', '中华人民共和国', '我们需要讨论下周的发布计划以及数据库迁移方案']) {
  console.log(s, JSON.stringify(j.cutForSearch(s, true)), JSON.stringify(j.cut(s, true)));
}
const seg = new Intl.Segmenter('zh', { granularity: 'word' });
for (const s of ['写周报', '把写周报标记为完成', '项目评审会', '下午三点开项目评审会 review the PR #42 ASAP', 'node.js v2 版本发布了 🎉！']) {
  console.log('intl', s, JSON.stringify([...seg.segment(s)].filter(x => x.isWordLike).map(x=>x.segment)));
}
const big = '我们需要讨论下周的发布计划以及数据库迁移方案。'.repeat(20000);
t0 = performance.now(); const r = j.cutForSearch(big, true); console.log('jieba', big.length, r.length, performance.now()-t0);
t0 = performance.now(); let n=0; for (const x of seg.segment(big)) if (x.isWordLike) n++; console.log('intl', n, performance.now()-t0);
