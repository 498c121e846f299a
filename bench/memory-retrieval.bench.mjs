// Retrieval benchmark of the memory rebuilder (src/memory/rebuild) over the real SQLite store,
// on two public corpora read at run time from ../shared/corpus (never copied into the repo).
//
//   npx tsc -p tsconfig.build.json && node bench/memory-retrieval.bench.mjs [--json]
//     [--only locomo|madial] [--budgets 1000,2000,4000] [--conversations N] [--madial-budget 600]
//
// LoCoMo (locomo/locomo-dev.json, 5 long two-person conversations): every turn is ingested into a
// fresh SQLite store (temp dir) for one user: id = dia_id ("D1:3"), speaker, text plus the shared
// image's BLIP caption, at = the session's date-time, sessionId = session_N. Each question is
// then answered by `rebuildContext` at each budget; evidence recall = share of the question's
// evidence dia_ids among the `sources` of the context's items, averaged over questions.
// QA categories (LoCoMo paper, Maharana et al. 2024; numbering as released, matching the
// paper's per-category counts): 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
// 5 adversarial. Category 5 (questions about things never said, whose evidence is a decoy) is
// excluded from "overall" and shown on its own line. Baselines over the same store and budget:
// "bm25±1" = the store's BM25 hits best first, each with one neighbour turn on each side, packed
// in full until the budget is spent; "recency" = the newest turns that fit.
//
// MADial-Bench zh (madial-zh/): each user's dated memory events are stored as facts (created at
// the event's date, sourceTurnIds = ["M<id>"]); each dev dialogue's turns before the marked
// assistant turn ("test-turn") are the query; a dialogue counts when its gold memory (the first
// of "relevant-id") is among the sources of a 600-token context. Baselines: "bm25 top-5" (the
// store's five best facts) and "bm25 packed" (BM25 order, packed to the same budget).
// The concept map below (MADIAL_CONCEPTS) is documented where it is defined.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { requireDist, root, sharedDir, table } from './lib.mjs';

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    only: { type: 'string' },
    budgets: { type: 'string', default: '1000,2000,4000' },
    conversations: { type: 'string' },
    'madial-budget': { type: 'string', default: '600' },
    'no-concepts': { type: 'boolean', default: false },
    bigrams: { type: 'string', default: 'auto' },
  },
});
requireDist();
const dist = (p) => import(pathToFileURL(join(root, 'dist', p)).href);
const { openMemoryStore } = await dist('memory/store/sql-memory-store.js');
const { rebuildContext } = await dist('memory/rebuild/index.js');
const { createSearchAnalyzer } = await dist('memory/analyzer.js');
const { createTokenCounter } = await dist('text/tokens.js');

const corpus = join(sharedDir, 'corpus');
const tokens = createTokenCounter();
const log = (msg) => process.stderr.write(`${msg}\n`);
const tmp = mkdtempSync(join(tmpdir(), 'ctxvm-retrieval-'));
const DAY_MS = 86_400_000;
const report = { corpus, startedAt: new Date().toISOString() };


// ---------------------------------------------------------------------------------------------
// LoCoMo

function locomoDate(text) {
  // "1:56 pm on 8 May, 2023"
  const m = /^(\d{1,2}):(\d{2})\s*(am|pm) on (\d{1,2}) (\w+),? (\d{4})$/i.exec(text.trim());
  if (!m) throw new Error(`locomo: unreadable session date ${JSON.stringify(text)}`);
  const months = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
  const month = months.indexOf(m[5].toLowerCase());
  if (month < 0) throw new Error(`locomo: unknown month in ${JSON.stringify(text)}`);
  const hour = (Number(m[1]) % 12) + (m[3].toLowerCase() === 'pm' ? 12 : 0);
  return Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]));
}

function locomoTurns(conv) {
  const c = conv.conversation;
  const turns = [];
  for (let n = 1; c[`session_${n}_date_time`] !== undefined; n++) {
    const session = c[`session_${n}`];
    if (!Array.isArray(session)) continue;
    const atMs = locomoDate(c[`session_${n}_date_time`]);
    for (const t of session) {
      const caption = t.blip_caption ? ` [shares a photo: ${t.blip_caption}]` : '';
      turns.push({ id: t.dia_id, role: t.speaker === c.speaker_a ? 'user' : 'assistant', speaker: t.speaker, text: `${t.text}${caption}`, atMs, sessionId: `session_${n}` });
    }
  }
  return turns;
}

/** Evidence ids as released, repaired where the typo is unambiguous ("D:11:26", "D8:6; D9:17"). */
function evidenceOf(qa) {
  const out = [];
  for (const raw of qa.evidence ?? []) {
    for (const part of String(raw).split(/[;,\s]+/)) {
      const m = /^D:?(\d+):(\d+)$/.exec(part);
      if (m) out.push(`D${m[1]}:${m[2]}`);
    }
  }
  return [...new Set(out)];
}

const CATEGORY = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop', 5: 'adversarial' };

function sourcesOf(ctx) {
  return new Set(ctx.layers.flatMap((l) => l.items.flatMap((i) => i.sources)));
}

const lineOf = (t) => `${t.speaker}: ${t.text.replace(/\s+/g, ' ').trim()}`;

/** Baseline: BM25 hits best first, each with ±1 neighbours, whole groups packed while they fit. */
async function bm25Baseline(user, query, budget) {
  const hits = await user.search(query, { kinds: ['turn'], limit: 200 });
  const taken = new Set();
  let used = 0;
  for (const h of hits) {
    const group = (await user.turnNeighbours(h.id, 1, 1)).filter((t) => !taken.has(t.id));
    const cost = group.reduce((s, t) => s + tokens.count(`${lineOf(t)}\n`), 0);
    if (used + cost > budget) continue;
    used += cost;
    for (const t of group) taken.add(t.id);
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

async function runLocomo() {
  const data = JSON.parse(readFileSync(join(corpus, 'locomo', 'locomo-dev.json'), 'utf8'));
  const budgets = args.budgets.split(',').map(Number);
  const convs = args.conversations ? data.slice(0, Number(args.conversations)) : data;
  const analyzer = createSearchAnalyzer();
  const methods = ['ours', 'bm25±1', 'recency'];
  // acc[method][budget][category] = { sum, n }
  const acc = {};
  const ctxTokens = {};
  let fullTokensSum = 0;
  let questions = 0;
  const t0 = Date.now();
  for (const [ci, conv] of convs.entries()) {
    const turns = locomoTurns(conv);
    const fullTokens = tokens.count(turns.map(lineOf).join('\n'));
    const store = await openMemoryStore({ db: join(tmp, `locomo-${ci}.db`), analyzer });
    try {
      const user = store.forUser(conv.sample_id ?? `conv-${ci}`);
      await user.addTurns(turns);
      const now = Math.max(...turns.map((t) => t.atMs)) + DAY_MS;
      const recent = Object.fromEntries(budgets.map((b) => [b, recencyBaseline(turns, b)]));
      for (const qa of conv.qa) {
        const evidence = evidenceOf(qa);
        if (evidence.length === 0) continue;
        const cat = CATEGORY[qa.category] ?? `cat${qa.category}`;
        questions++;
        fullTokensSum += fullTokens;
        for (const budget of budgets) {
          const ctx = await rebuildContext(user, qa.question, { tokens, budgetTokens: budget, now, timeZone: 'UTC', touch: false, analyzer });
          const bm25 = await bm25Baseline(user, qa.question, budget);
          const results = { ours: sourcesOf(ctx), 'bm25±1': bm25.sources, recency: recent[budget].sources };
          const used = { ours: ctx.tokens, 'bm25±1': bm25.tokens, recency: recent[budget].tokens };
          for (const m of methods) {
            const r = recallOf(evidence, results[m]);
            for (const key of [cat, qa.category === 5 ? null : 'overall'].filter(Boolean)) {
              const slot = (((acc[m] ??= {})[budget] ??= {})[key] ??= { sum: 0, n: 0 });
              slot.sum += r;
              slot.n++;
            }
            if (qa.category !== 5) {
              const t = ((ctxTokens[m] ??= {})[budget] ??= { sum: 0, n: 0 });
              t.sum += used[m];
              t.n++;
            }
          }
        }
      }
      log(`locomo: conversation ${ci + 1}/${convs.length} (${turns.length} turns, ${fullTokens} tokens) done after ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    } finally {
      await store.close();
    }
  }
  const cats = ['overall', 'single-hop', 'multi-hop', 'temporal', 'open-domain', 'adversarial'];
  const recall = {};
  for (const m of methods) {
    recall[m] = {};
    for (const b of budgets) {
      recall[m][b] = {};
      for (const c of cats) {
        const s = acc[m]?.[b]?.[c];
        if (s) recall[m][b][c] = { recall: s.sum / s.n, questions: s.n };
      }
    }
  }
  const meanTokens = Object.fromEntries(methods.map((m) => [m, Object.fromEntries(budgets.map((b) => [b, ctxTokens[m][b].sum / ctxTokens[m][b].n]))]));
  const out = {
    conversations: convs.length,
    questions,
    excluded: 'category 5 (adversarial) is not in "overall"',
    meanFullConversationTokens: fullTokensSum / questions,
    recall,
    meanContextTokens: meanTokens,
    seconds: (Date.now() - t0) / 1000,
  };
  if (!args.json) {
    console.log(`\nLoCoMo evidence recall (${convs.length} conversations; category 5 excluded from overall)`);
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
    console.log(`mean full-conversation tokens: ${Math.round(out.meanFullConversationTokens)}`);
  }
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

async function runMadial() {
  const budget = Number(args['madial-budget']);
  const memories = [];
  for (const line of readFileSync(join(corpus, 'madial-zh', 'memories.jsonl'), 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    for (const m of Object.values(JSON.parse(line))) memories.push(m);
  }
  const dialogues = readFileSync(join(corpus, 'madial-zh', 'dialogues-dev.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
  const bigrams = args.bigrams === 'auto' ? true : args.bigrams === 'true';
  const analyzer = createSearchAnalyzer({ cjkBigrams: bigrams, ...(args['no-concepts'] ? {} : { concepts: MADIAL_CONCEPTS }) });
  let clock = 0;
  const store = await openMemoryStore({ db: join(tmp, 'madial.db'), analyzer, now: () => clock });
  const t0 = Date.now();
  const byMethod = { ours: [], 'bm25 top-5': [], 'bm25 packed': [] };
  const tokensUsed = [];
  try {
    let latest = 0;
    for (const m of [...memories].sort((a, b) => a.time.localeCompare(b.time) || Number(a.id) - Number(b.id))) {
      clock = Date.parse(`${m.time}T00:00:00Z`);
      latest = Math.max(latest, clock);
      await store.forUser(`madial-${m['user-id']}`).setFact({ kind: 'fact', text: m.event, importance: 0.5, sourceTurnIds: [`M${m.id}`] });
    }
    const now = latest + DAY_MS;
    const facts = new Map();
    for (const d of dialogues) {
      const user = store.forUser(`madial-${d['user-id']}`);
      const k = d['test-turn'][0];
      const before = d.dialogue.slice(1, k).map(parseDialogueTurn).filter(Boolean);
      const query = before.map((t) => t.text).join('\n');
      const gold = `M${d['relevant-id'][0]}`;
      const relevant = d['relevant-id'].map((id) => `M${id}`);
      const ctx = await rebuildContext(user, query, { tokens, budgetTokens: budget, now, timeZone: 'UTC', touch: false, analyzer });
      const ours = sourcesOf(ctx);
      tokensUsed.push(ctx.tokens);
      const hits = await user.search(query, { kinds: ['fact'], limit: 200 });
      if (!facts.has(user.userId)) facts.set(user.userId, new Map((await user.listFacts()).map((f) => [f.id, f])));
      const byId = facts.get(user.userId);
      const top5 = new Set(hits.slice(0, 5).flatMap((h) => byId.get(h.id)?.sourceTurnIds ?? []));
      const packed = new Set();
      let used = 0;
      for (const h of hits) {
        const f = byId.get(h.id);
        const cost = tokens.count(`- ${new Date(f.createdAtMs).toISOString().slice(0, 10)}: ${f.text}\n`);
        if (used + cost > budget) continue;
        used += cost;
        for (const s of f.sourceTurnIds) packed.add(s);
      }
      const row = (sources) => ({ id: d.id, gold: sources.has(gold), anyRelevant: relevant.some((r) => sources.has(r)), relevantRecall: relevant.filter((r) => sources.has(r)).length / relevant.length });
      byMethod.ours.push(row(ours));
      byMethod['bm25 top-5'].push(row(top5));
      byMethod['bm25 packed'].push(row(packed));
    }
  } finally {
    await store.close();
  }
  // Dialogues 0-22 were read, with their gold ids, while working out the file format.
  const seen = (r) => r.id <= 22;
  const summary = {};
  for (const [m, rows] of Object.entries(byMethod)) {
    const share = (xs, f) => xs.filter(f).length / xs.length;
    summary[m] = {
      goldInContext: share(rows, (r) => r.gold),
      anyRelevantInContext: share(rows, (r) => r.anyRelevant),
      relevantRecall: rows.reduce((s, r) => s + r.relevantRecall, 0) / rows.length,
      goldInContextUnseen: share(rows.filter((r) => !seen(r)), (r) => r.gold),
    };
  }
  const out = {
    dialogues: dialogues.length,
    memories: memories.length,
    budgetTokens: budget,
    analyzer: { cjkBigrams: bigrams, concepts: !args['no-concepts'] },
    meanContextTokens: tokensUsed.reduce((a, b) => a + b, 0) / tokensUsed.length,
    results: summary,
    unseenDialogues: byMethod.ours.filter((r) => !seen(r)).length,
    seconds: (Date.now() - t0) / 1000,
  };
  if (!args.json) {
    console.log(`\nMADial-Bench zh: gold memory in a ${budget}-token context (${dialogues.length} dialogues, ${memories.length} memories)`);
    table(
      Object.entries(summary).map(([m, s]) => ({
        method: m,
        gold: s.goldInContext.toFixed(3),
        'gold (unseen ids>22)': s.goldInContextUnseen.toFixed(3),
        'any relevant': s.anyRelevantInContext.toFixed(3),
        'relevant recall': s.relevantRecall.toFixed(3),
      })),
    );
    console.log(`mean context tokens: ${Math.round(out.meanContextTokens)}; analyzer: bigrams ${bigrams}, concepts ${!args['no-concepts']}`);
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
