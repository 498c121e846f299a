// Deterministic pseudo-random chat text in Chinese and English for the memory benchmarks (no
// corpus needed), and the 100k-memory store the latency benchmark and its profiler fill with it.
// Each generator has its own state, so two in one process do not disturb each other's sequence.

export const ZH_SUBJ = ['项目评审', '周报', '预算', '客户会议', '季度总结', '合同', '招聘', '发布计划', '服务器迁移', '测试报告', '设计稿', '年会', '体检', '机票', '房租'];
export const ZH_VERB = ['讨论了', '完成了', '推迟了', '需要准备', '提交了', '更新了', '确认了', '跟进'];
export const ZH_TAIL = ['，大家都同意。', '，下周再看。', '，还有些问题。', '。', '，老板很满意。', '，需要再改一版。'];
export const EN_SUBJ = ['the release notes', 'the budget review', 'the hiring plan', 'the database migration', 'the client demo', 'the marketing deck', 'the offsite', 'the security audit', 'the roadmap', 'the onboarding doc'];
export const EN_VERB = ['we discussed', 'I finished', 'we postponed', 'I need to prepare', 'Sam reviewed', 'we shipped', 'Lee asked about'];
export const EN_TAIL = ['.', ' and it went well.', ', more next week.', ' but there are open questions.', ' with the team.'];

/**
 * A seeded generator (a 31-bit LCG): `rnd()` in [0, 1), `pick(xs)`, `sentence()` (half Chinese,
 * half English), `reseed(n)` to replay a stream; `ZH_SUBJ` is `zhSubjects` (default the list above).
 */
export function createBenchText({ seed = 42, zhSubjects = ZH_SUBJ } = {}) {
  let state = seed;
  const rnd = () => ((state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
  const sentence = () => (rnd() < 0.5 ? `${pick(ZH_VERB)}${pick(zhSubjects)}${pick(ZH_TAIL)}` : `${pick(EN_VERB)} ${pick(EN_SUBJ)}${pick(EN_TAIL)}`);
  return { rnd, pick, sentence, reseed: (n) => void (state = n), ZH_SUBJ: zhSubjects };
}

/** The latency benchmark's counts for `n` memories: 1% tasks, 1% facts, 0.5% decisions, the rest turns. */
export function benchCounts(n) {
  const nTasks = Math.round(n * 0.01), nFacts = Math.round(n * 0.01), nDecisions = Math.round(n * 0.005);
  return { nTasks, nFacts, nDecisions, nTurns: n - nTasks - nFacts - nDecisions };
}

/** Fills one user's store as the latency benchmark does; `onTurns(done, of)` after each batch. */
export async function fillBenchStore(u, { rnd, pick, sentence, ZH_SUBJ: subjects }, { n, t0, onTurns }) {
  const BATCH = 1000;
  const { nTasks, nFacts, nDecisions, nTurns } = benchCounts(n);
  for (let i = 0; i < nTurns; i += BATCH) {
    const turns = [];
    for (let j = i; j < Math.min(nTurns, i + BATCH); j++) turns.push({ id: `b${j}`, role: j % 2 ? 'assistant' : 'user', speaker: null, text: sentence(), atMs: t0 + j * 60_000, sessionId: `s${Math.floor(j / 200)}` });
    await u.addTurns(turns);
    onTurns?.(i, nTurns);
  }
  for (let i = 0; i < nTasks; i++) await u.createTask({ title: `${pick(ZH_VERB)}${pick(subjects)} ${i}`, status: rnd() < 0.8 ? 'done' : 'todo', dueAtMs: t0 + Math.floor(rnd() * n) * 60_000, sourceTurnIds: [`b${i}`] });
  for (let i = 0; i < nFacts; i++) await u.setFact({ kind: 'fact', text: sentence(), sourceTurnIds: [`b${i}`] });
  for (let i = 0; i < nDecisions; i++) await u.addDecision({ text: `决定${pick(ZH_VERB)}${pick(subjects)}`, sourceTurnIds: [`b${i}`] });
}

/** The latency benchmark's `i`-th ingested message: every third a reminder with a time. */
export const ingestText = ({ pick, sentence, ZH_SUBJ: subjects }, i) => (i % 3 === 0 ? `记得明天下午三点${pick(ZH_VERB)}${pick(subjects)}` : sentence());

/** The latency benchmark's questions. */
export const rebuildQueries = ({ ZH_SUBJ: subjects }) => [...subjects.map((s) => `${s}怎么样了？`), ...EN_SUBJ.map((s) => `what happened with ${s}?`), '下午还有什么要做的？', 'what are my open tasks?'];
