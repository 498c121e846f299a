// Retrieval benchmark of the memory rebuilder (src/memory/rebuild) over the real SQLite store,
// on two public corpora read at run time from ../shared/corpus (never copied into the repo).
//
//   npx tsc -p tsconfig.build.json && node bench/memory-retrieval.bench.mjs [--json]
//     [--only locomo|madial] [--budgets 1000,2000,4000] [--conversations N] [--madial-budget 600]
//     [--half tune|check|both] [--wordnet off]   (off: the analyzers without WordNet concepts)
//
// LoCoMo (locomo/locomo-dev.json, 5 long two-person conversations): every turn is ingested into a
// fresh SQLite store (temp dir) for one user: id = dia_id ("D1:3"), speaker, text plus the shared
// image's BLIP caption, at = the session's date-time, sessionId = session_N. Each question is
// then answered by `rebuildContext` (default options, `touch: false` so that earlier questions
// do not change later ones) at each budget; evidence recall = share of the question's evidence
// dia_ids among the `sources` of the context's items, averaged over questions.
// QA categories (LoCoMo paper, Maharana et al. 2024; numbering as released, which matches the
// paper's per-category counts): 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
// 5 adversarial. Category 5 (questions about things never said, whose evidence is a decoy) is
// excluded from "overall" and shown on its own. Baselines, same budgets:
//   bm25±1      the store's BM25 hits (same store, same analyzer) best first, each with one
//               neighbour turn on each side, whole groups packed in full while they fit;
//   bm25±1 seg  the same over a second store indexed with the plain segmenter (jieba + Intl,
//               lower-cased, no stemming or stopwords), to show what the analyzer adds;
//   recency     the newest turns that fit.
//
// MADial-Bench zh (madial-zh/): each user's dated memory events are stored as facts (created at
// the event's date, sourceTurnIds = ["M<id>"]); each dev dialogue's turns before the marked
// assistant turn ("test-turn", an index into `dialogue` where 0 is "<BOD>"), user and assistant
// alike, are the query; a dialogue counts when its gold memory (the first of "relevant-id") is
// among the sources of a 600-token context. "ours" uses the analyzer with the concept map below
// (MADIAL_CONCEPTS, documented there); "ours, no concepts" the default analyzer. Baselines:
// "bm25 top-5" (the five best facts of the same store), "bm25 packed" (BM25 order packed to the
// same budget), "jieba bm25 top-5" (plain segmenter store).
//
// Tune and check halves. Every number is printed for two disjoint halves of each corpus: "tune",
// the half the ranking may be tuned on (its failures read, its numbers compared), and "check",
// the half no tuning reads — quote that one. LoCoMo splits by conversation (tune: the 1st, 3rd
// and 5th; check: the 2nd and 4th); MADial-Bench by dialogue (tune: ids divisible by 4; check:
// the other even ids). The halves are fixed here, not chosen by a score.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { median, percentile, requireDist, root, sharedDir, table } from './lib.mjs';
import { CATEGORY, evidenceOf, locomoTurns } from './locomo.mjs';

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    only: { type: 'string' },
    budgets: { type: 'string', default: '1000,2000,4000' },
    conversations: { type: 'string' },
    'madial-budget': { type: 'string', default: '600' },
    half: { type: 'string', default: 'both' },
    wordnet: { type: 'string', default: 'on' },
  },
});
requireDist();
const dist = (p) => import(pathToFileURL(join(root, 'dist', p)).href);
const { openMemoryStore } = await dist('memory/store/sql-memory-store.js');
const { rebuildContext } = await dist('memory/rebuild/index.js');
const { createSearchAnalyzer } = await dist('memory/analyzer.js');
const { createTokenCounter } = await dist('text/tokens.js');
const { createSegmenter } = await dist('text/segment.js');

if (args.wordnet !== 'on' && args.wordnet !== 'off') throw new Error(`--wordnet: on or off, got ${args.wordnet}`);
// WordNet concepts are on in the default analyzer; `--wordnet off` weighs what they add.
const analyzerOptions = args.wordnet === 'off' ? { wordnet: false } : {};
const corpus = join(sharedDir, 'corpus');
const tokens = createTokenCounter();
// The "seg" baselines' analyzer: the plain segmenter's tokens (jieba + Intl, NFKC, lower-cased),
// no stopwords, stemming or bigrams. (A store opened without an analyzer uses the default one.)
const plainSegmenter = createSegmenter();
const segmenterAnalyzer = (text) => plainSegmenter.segment(text);
const log = (msg) => process.stderr.write(`${msg}\n`);
const tmp = mkdtempSync(join(tmpdir(), 'ctxvm-retrieval-'));
const DAY_MS = 86_400_000;
const report = { corpus, startedAt: new Date().toISOString(), wordnet: args.wordnet };


// ---------------------------------------------------------------------------------------------
// LoCoMo

function sourcesOf(ctx) {
  return new Set(ctx.layers.flatMap((l) => l.items.flatMap((i) => i.sources)));
}

const lineOf = (t) => `${t.speaker}: ${t.text.replace(/\s+/g, ' ').trim()}`;

/** Baseline groups: BM25 hits best first, each with its ±1 neighbours (computed once per question). */
async function bm25Groups(user, query) {
  const hits = await user.search(query, { kinds: ['turn'], limit: 120 });
  const groups = [];
  for (const h of hits) groups.push((await user.turnNeighbours(h.id, 1, 1)).map((t) => ({ id: t.id, cost: tokens.count(`${lineOf(t)}\n`) })));
  return groups;
}

/** Packs whole groups in order while they fit (turns already taken cost nothing again). */
function packGroups(groups, budget) {
  const taken = new Set();
  let used = 0;
  for (const group of groups) {
    const fresh = group.filter((t) => !taken.has(t.id));
    const cost = fresh.reduce((sum, t) => sum + t.cost, 0);
    if (used + cost > budget) continue;
    used += cost;
    for (const t of fresh) taken.add(t.id);
  }
  return { sources: taken, tokens: used };
}

/** Baseline: the newest turns that fit. */
function recencyBaseline(turns, budget) {
  const taken = new Set();
  let used = 0;
  for (let i = turns.length - 1; i >= 0; i--) {
    const cost = tokens.count(`${lineOf(turns[i])}\n`);
    if (used + cost > budget) break;
    used += cost;
    taken.add(turns[i].id);
  }
  return { sources: taken, tokens: used };
}

function recallOf(evidence, sources) {
  return evidence.filter((e) => sources.has(e)).length / evidence.length;
}

const mean = (slot) => (slot && slot.n ? slot.sum / slot.n : undefined);

/** The half a LoCoMo conversation (0-based index in the file) belongs to. */
export const locomoHalf = (index) => (index % 2 === 0 ? 'tune' : 'check');
/** The half a MADial-Bench dialogue (its `id`; the file holds even ids) belongs to. */
export const madialHalf = (id) => (id % 4 === 0 ? 'tune' : 'check');
const HALVES = args.half === 'both' ? ['tune', 'check'] : [args.half];
if (!HALVES.every((h) => h === 'tune' || h === 'check')) throw new Error(`--half: tune, check or both, got ${args.half}`);

async function runLocomo() {
  const data = JSON.parse(readFileSync(join(corpus, 'locomo', 'locomo-dev.json'), 'utf8'));
  const budgets = args.budgets.split(',').map(Number);
  const convs = (args.conversations ? data.slice(0, Number(args.conversations)) : data).map((conv, index) => ({ conv, index, half: locomoHalf(index) }));
  const analyzer = createSearchAnalyzer(analyzerOptions);
  const methods = ['ours', 'bm25±1', 'bm25±1 seg', 'recency'];
  const acc = {}; // acc[half][method][budget][category] = { sum, n }
  const ctxTokens = {}; // ctxTokens[half][method][budget] = { sum, n }
  const add = (table, keys, value) => {
    let node = table;
    for (const k of keys.slice(0, -1)) node = node[k] ??= {};
    const slot = (node[keys.at(-1)] ??= { sum: 0, n: 0 });
    slot.sum += value;
    slot.n++;
  };
  const fullTokensSum = {};
  const questions = {};
  const latencyMs = {}; // per budget, ms per rebuild
  const t0 = Date.now();
  const chosen = convs.filter((c) => HALVES.includes(c.half));
  for (const [n, { conv, index: ci, half }] of chosen.entries()) {
    const turns = locomoTurns(conv);
    const fullTokens = tokens.count(turns.map(lineOf).join('\n'));
    const store = await openMemoryStore({ db: join(tmp, `locomo-${ci}.db`), analyzer });
    const plain = await openMemoryStore({ db: join(tmp, `locomo-${ci}-plain.db`), analyzer: segmenterAnalyzer });
    try {
      const userId = conv.sample_id ?? `conv-${ci}`;
      const user = store.forUser(userId);
      const plainUser = plain.forUser(userId);
      await user.addTurns(turns);
      await plainUser.addTurns(turns);
      const now = Math.max(...turns.map((t) => t.atMs)) + DAY_MS;
      const recent = Object.fromEntries(budgets.map((b) => [b, recencyBaseline(turns, b)]));
      for (const qa of conv.qa) {
        const evidence = evidenceOf(qa);
        if (evidence.length === 0) continue;
        const cat = CATEGORY[qa.category] ?? `cat${qa.category}`;
        const keys = qa.category === 5 ? [cat] : [cat, 'overall'];
        if (qa.category !== 5) {
          questions[half] = (questions[half] ?? 0) + 1;
          fullTokensSum[half] = (fullTokensSum[half] ?? 0) + fullTokens;
        }
        const groups = await bm25Groups(user, qa.question);
        const plainGroups = await bm25Groups(plainUser, qa.question);
        for (const budget of budgets) {
          const started = process.hrtime.bigint();
          const ctx = await rebuildContext(user, qa.question, { tokens, budgetTokens: budget, now, timeZone: 'UTC', touch: false, analyzer });
          ((latencyMs[budget] ??= [])).push(Number(process.hrtime.bigint() - started) / 1e6);
          const results = {
            ours: { sources: sourcesOf(ctx), tokens: ctx.tokens },
            'bm25±1': packGroups(groups, budget),
            'bm25±1 seg': packGroups(plainGroups, budget),
            recency: recent[budget],
          };
          for (const m of methods) {
            const r = recallOf(evidence, results[m].sources);
            for (const key of keys) add(acc, [half, m, budget, key], r);
            if (qa.category !== 5) add(ctxTokens, [half, m, budget], results[m].tokens);
          }
        }
      }
      log(`locomo: conversation ${ci + 1} (${half}; ${n + 1}/${chosen.length}, ${turns.length} turns, ${fullTokens} tokens) done after ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    } finally {
      await store.close();
      await plain.close();
    }
  }
  const cats = ['overall', 'single-hop', 'multi-hop', 'temporal', 'open-domain', 'adversarial'];
  const out = { note: 'category 5 (adversarial) is not part of "overall"; it has its own row', halves: {} };
  for (const half of HALVES) {
    const recall = {};
    for (const m of methods) {
      for (const b of budgets) {
        for (const c of cats) {
          const slot = acc[half]?.[m]?.[b]?.[c];
          if (slot) ((recall[m] ??= {})[b] ??= {})[c] = { recall: mean(slot), questions: slot.n };
        }
      }
    }
    const meanTokens = Object.fromEntries(methods.map((m) => [m, Object.fromEntries(budgets.map((b) => [b, mean(ctxTokens[half][m][b])]))]));
    const parts = convs.filter((c) => c.half === half);
    out.halves[half] = {
      conversations: parts.map((c) => c.conv.sample_id ?? `conv-${c.index}`),
      questions: questions[half],
      meanFullConversationTokens: fullTokensSum[half] / questions[half],
      recall,
      meanContextTokens: meanTokens,
    };
    if (!args.json) {
      console.log(`\nLoCoMo evidence recall, ${half} half (${parts.map((c) => c.conv.sample_id).join(', ')}: ${questions[half]} questions; category 5 not in overall)`);
      const rows = [];
      for (const m of methods) {
        for (const b of budgets) {
          const row = { method: m, budget: b, tokens: Math.round(meanTokens[m][b]) };
          for (const c of cats) row[c] = recall[m][b][c] ? recall[m][b][c].recall.toFixed(3) : '-';
          rows.push(row);
        }
      }
      table(rows);
      console.log(`questions per category: ${cats.map((c) => `${c} ${recall.ours[budgets[0]][c]?.questions ?? 0}`).join(', ')}`);
      console.log(`mean full-conversation tokens: ${Math.round(out.halves[half].meanFullConversationTokens)}`);
    }
  }
  out.rebuildMs = Object.fromEntries(budgets.map((b) => [b, { median: median(latencyMs[b]), p95: percentile(latencyMs[b], 95) }]));
  out.seconds = (Date.now() - t0) / 1000;
  if (!args.json) console.log(`rebuild time, ms (median / p95): ${budgets.map((b) => `${b}: ${out.rebuildMs[b].median.toFixed(1)} / ${out.rebuildMs[b].p95.toFixed(1)}`).join(', ')}`);
  return out;
}

// ---------------------------------------------------------------------------------------------
// MADial-Bench (Chinese)

/**
 * Concept tags for Chinese event words: words of one everyday field share a tag, so a dialogue
 * about 跑步 can find a memory about 一百米. Built by hand from general knowledge of children's
 * everyday topics and from the vocabulary of the memory archive (memories.jsonl, which is
 * input, not labels); not from the dev dialogues' gold ids, which this run scores.
 */
const MADIAL_CONCEPTS = {
  c_sport: ['运动', '体育', '跑', '赛跑', '一百米', '比赛', '足球', '篮球', '游泳', '跳绳', '冠军', '第一名', '锻炼', '骑自行车', '滑板', '羽毛球', '乒乓球', '踢球'],
  c_art: ['画', '绘画', '画画', '美术', '涂色', '手工', '折纸', '彩笔', '蜡笔'],
  c_music: ['唱歌', '歌', '音乐', '钢琴', '乐器', '小提琴', '合唱', '吉他'],
  c_perform: ['表演', '舞台', '晚会', '跳舞', '舞蹈', '魔术', '演出', '话剧', '节目'],
  c_food: ['吃', '食物', '蛋糕', '冰淇淋', '巧克力', '早餐', '午餐', '晚餐', '饭', '零食', '水果', '草莓', '糖果', '甜点', '披萨', '汉堡', '饺子', '面条', '好吃', '美味', '食堂'],
  c_holiday: ['节日', '圣诞', '圣诞节', '元旦', '春节', '新年', '过年', '中秋', '万圣节', '儿童节', '生日', '派对', '庆祝', '礼物'],
  c_nature: ['海边', '沙滩', '公园', '草地', '花园', '森林', '山', '爬山', '露营', '野餐', '郊游', '大自然', '星星', '月亮', '天空', '雪', '下雨'],
  c_space: ['宇宙', '太空', '星球', '行星', '星际', '黑洞', '火箭', '宇航员', '天文', '木星', '月球'],
  c_animal: ['动物', '狗', '小狗', '猫', '小猫', '宠物', '兔子', '鱼', '鸟', '动物园', '熊猫', '仓鼠'],
  c_school: ['学校', '老师', '同学', '班', '上课', '下课', '作业', '考试', '成绩', '满分', '数学', '语文', '英语', '学习', '课'],
  c_reading: ['书', '故事', '读', '阅读', '图书馆', '绘本', '童话'],
  c_screen: ['电影', '动画', '视频', '电视', '看片', '游戏', '动画片'],
  c_family: ['爸爸', '妈妈', '家人', '奶奶', '爷爷', '外婆', '姥姥', '哥哥', '姐姐', '弟弟', '妹妹', '父母'],
  c_friend: ['朋友', '好朋友', '伙伴', '玩伴'],
  c_play: ['玩', '游乐园', '游戏', '捉迷藏', '积木', '拼图', '玩具', '乐高', '放风筝', '风筝', '下棋', '棋'],
  c_flower: ['花', '花束', '向日葵', '玫瑰', '鲜花', '植物', '种'],
  c_worry: ['紧张', '担心', '害怕', '焦虑', '难过', '伤心', '哭', '失望', '生气', '不开心', '压力'],
  c_hurt: ['摔倒', '受伤', '痛', '疼', '生病', '感冒', '医院', '发烧'],
  c_travel: ['旅行', '旅游', '出游', '坐飞机', '火车', '度假'],
  c_clothes: ['衣服', '裙子', '鞋', '帽子', '穿'],
  c_decorate: ['装饰', '布置', '彩灯', '挂件', '圣诞树'],
  c_win: ['获奖', '奖', '赢', '冠军', '第一名', '第二名', '优胜', '表扬', '夸'],
  c_help: ['帮助', '帮忙', '志愿', '分享', '教'],
};

function parseDialogueTurn(line) {
  const m = /^<([^>]+)>\s*:\s*"?([\s\S]*?)"?\s*$/.exec(line.trim());
  return m ? { speaker: m[1], text: m[2] } : null;
}

/** A store holding every user's memories as facts, dated by a settable clock. */
async function madialStore(name, memories, analyzer) {
  let clock = 0;
  const store = await openMemoryStore({ db: join(tmp, `${name}.db`), ...(analyzer ? { analyzer } : {}), now: () => clock });
  for (const m of [...memories].sort((a, b) => a.time.localeCompare(b.time) || Number(a.id) - Number(b.id))) {
    clock = Date.parse(`${m.time}T00:00:00Z`);
    await store.forUser(`madial-${m['user-id']}`).setFact({ kind: 'fact', text: m.event, importance: 0.5, sourceTurnIds: [`M${m.id}`] });
  }
  return store;
}

async function runMadial() {
  const budget = Number(args['madial-budget']);
  const memories = [];
  for (const line of readFileSync(join(corpus, 'madial-zh', 'memories.jsonl'), 'utf8').split('\n')) {
    if (line.trim() !== '') memories.push(...Object.values(JSON.parse(line)));
  }
  const dialogues = readFileSync(join(corpus, 'madial-zh', 'dialogues-dev.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
  const now = Math.max(...memories.map((m) => Date.parse(`${m.time}T00:00:00Z`))) + DAY_MS;
  const withConcepts = createSearchAnalyzer({ ...analyzerOptions, concepts: MADIAL_CONCEPTS });
  const plainAnalyzer = createSearchAnalyzer(analyzerOptions);
  const stores = {
    concepts: await madialStore('madial-concepts', memories, withConcepts),
    default: await madialStore('madial-default', memories, plainAnalyzer),
    segmenter: await madialStore('madial-segmenter', memories, segmenterAnalyzer),
  };
  const t0 = Date.now();
  const methods = ['ours', 'ours + hand concepts', 'bm25 top-5', 'bm25 packed', 'jieba bm25 top-5'];
  const rows = Object.fromEntries(methods.map((m) => [m, []]));
  const tokensUsed = { ours: [], 'ours + hand concepts': [] };
  try {
    for (const d of dialogues) {
      const half = madialHalf(d.id);
      if (!HALVES.includes(half)) continue;
      const userId = `madial-${d['user-id']}`;
      const k = d['test-turn'][0];
      const query = d.dialogue.slice(1, k).map(parseDialogueTurn).filter(Boolean).map((t) => t.text).join('\n');
      const relevant = d['relevant-id'].map((id) => `M${id}`);
      const score = (m, sources) => rows[m].push({ id: d.id, half, gold: sources.has(relevant[0]), any: relevant.some((r) => sources.has(r)), recall: relevant.filter((r) => sources.has(r)).length / relevant.length });
      for (const [m, store, analyzer] of [['ours', stores.default, plainAnalyzer], ['ours + hand concepts', stores.concepts, withConcepts]]) {
        const ctx = await rebuildContext(store.forUser(userId), query, { tokens, budgetTokens: budget, now, timeZone: 'UTC', touch: false, analyzer });
        score(m, sourcesOf(ctx));
        tokensUsed[m].push(ctx.tokens);
      }
      const user = stores.default.forUser(userId);
      const facts = new Map((await user.listFacts()).map((f) => [f.id, f]));
      const hits = await user.search(query, { kinds: ['fact'], limit: 200 });
      score('bm25 top-5', new Set(hits.slice(0, 5).flatMap((h) => facts.get(h.id).sourceTurnIds)));
      const packed = new Set();
      let used = 0;
      for (const h of hits) {
        const f = facts.get(h.id);
        const cost = tokens.count(`- ${new Date(f.createdAtMs).toISOString().slice(0, 10)}: ${f.text}\n`);
        if (used + cost > budget) continue;
        used += cost;
        for (const id of f.sourceTurnIds) packed.add(id);
      }
      score('bm25 packed', packed);
      const seg = stores.segmenter.forUser(userId);
      const segFacts = new Map((await seg.listFacts()).map((f) => [f.id, f]));
      score('jieba bm25 top-5', new Set((await seg.search(query, { kinds: ['fact'], limit: 5 })).flatMap((h) => segFacts.get(h.id).sourceTurnIds)));
    }
  } finally {
    for (const store of Object.values(stores)) await store.close();
  }
  const share = (xs, f) => xs.filter(f).length / xs.length;
  const results = {};
  for (const m of methods) {
    results[m] = {};
    for (const half of HALVES) {
      const xs = rows[m].filter((r) => r.half === half);
      results[m][half] = {
        dialogues: xs.length,
        goldInContext: share(xs, (r) => r.gold),
        anyRelevantInContext: share(xs, (r) => r.any),
        relevantRecall: xs.reduce((sum, r) => sum + r.recall, 0) / xs.length,
      };
    }
  }
  const out = {
    dialogues: Object.fromEntries(HALVES.map((h) => [h, results.ours[h].dialogues])),
    memories: memories.length,
    budgetTokens: budget,
    meanContextTokens: Object.fromEntries(Object.entries(tokensUsed).map(([m, xs]) => [m, xs.reduce((a, b) => a + b, 0) / xs.length])),
    results,
    seconds: (Date.now() - t0) / 1000,
  };
  if (!args.json) {
    console.log(`\nMADial-Bench zh: gold memory in the context (${HALVES.map((h) => `${h} ${results.ours[h].dialogues} dialogues`).join(', ')}; ${memories.length} memories; budget ${budget} tokens)`);
    table(
      methods.map((m) => {
        const row = { method: m };
        for (const h of HALVES) {
          row[`gold ${h}`] = results[m][h].goldInContext.toFixed(3);
          row[`any relevant ${h}`] = results[m][h].anyRelevantInContext.toFixed(3);
          row[`relevant recall ${h}`] = results[m][h].relevantRecall.toFixed(3);
        }
        return row;
      }),
    );
    console.log(`mean context tokens: ${Object.entries(out.meanContextTokens).map(([m, t]) => `${m} ${Math.round(t)}`).join(', ')}`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Main (last: the functions above use module-level constants)

try {
  if (!args.only || args.only === 'locomo') report.locomo = await runLocomo();
  if (!args.only || args.only === 'madial') report.madial = await runMadial();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
if (args.json) console.log(JSON.stringify(report, null, 2));
