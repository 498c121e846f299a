// PostgreSQL full text: which ranks LoCoMo's evidence better over the same segmented column
// (memory_search.tokens, the analyzer's terms) — the `simple` tsvector the store uses (exact terms,
// BM25's IDF; src/memory/store/fulltext-postgres.ts) or pg_trgm (trigram similarity)?
//
// Every turn of the 5 LoCoMo conversations goes into a real PostgreSQL memory store, one user per
// conversation, in a schema of its own (dropped at the end). For every question with evidence
// (adversarial ones left out, as in bench:memory), each method ranks that user's turns for the
// question; reported: evidence recall at 5 / 10 / 20 hits and the mean reciprocal rank of the first
// evidence turn, plus the median query time.
//   tsvector         the store's own search (`search(question, { kinds: ['turn'] })`);
//   trgm similarity  ORDER BY similarity(tokens, <the question's terms>) (pg_trgm's `%` measure);
//   trgm word_sim.   ORDER BY word_similarity(<terms>, tokens) (best matching extent of a turn).
// The trigram queries read the same analyzer terms as the index, so both sides see the same words.
//
// Usage: npm run build && npm run bench:pg-fulltext      Env: DATABASE_URL (default
// postgres://postgres:postgres@127.0.0.1:5432/ctxvm_test); needs the pg_trgm extension (contrib).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median, requireDist, root, sharedDir } from './lib.mjs';
import { CATEGORY, evidenceOf, locomoTurns } from './locomo.mjs';

requireDist();
const dist = (p) => import(pathToFileURL(join(root, 'dist', p)).href);
const { openWarmDatabase } = await dist('store/warm/open.js');
const { createSqlMemoryStore, defaultAnalyzer } = await dist('memory/store/sql-memory-store.js');
const { default: pg } = await import('pg');

const URL = process.env.DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/ctxvm_test';
const KS = [5, 10, 20];
const log = (msg) => process.stderr.write(`${msg}\n`);

const schema = `ctxvm_ftbench_${Date.now().toString(36)}`;
const admin = new pg.Client({ connectionString: URL });
await admin.connect();
try {
  await admin.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
} catch (error) {
  throw new Error(`bench:pg-fulltext needs the pg_trgm extension on ${URL.replace(/:[^:@/]+@/, ':***@')}: ${error.message} (install PostgreSQL's contrib package)`);
}
const trgm = (await admin.query("SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'")).rows[0].nspname;
await admin.query(`CREATE SCHEMA ${schema}`);
const db = await openWarmDatabase({ db: URL, postgres: { searchPath: schema, poolSize: 4 } });
const analyze = defaultAnalyzer();
const store = createSqlMemoryStore(db, { analyzer: analyze });

const methods = {
  tsvector: async (user, question, k) => (await user.search(question, { kinds: ['turn'], limit: k })).map((h) => h.id),
  'trgm similarity': (user, question, k) => trigram((terms) => [`${trgm}.similarity(d.tokens, ?)`, terms], user.userId, question, k),
  'trgm word_similarity': (user, question, k) => trigram((terms) => [`${trgm}.word_similarity(?, d.tokens)`, terms], user.userId, question, k),
};

/** The user's turns ranked by a pg_trgm measure of the question's terms against their terms. */
async function trigram(measure, userId, question, k) {
  const terms = analyze(question).join(' ');
  if (terms === '') return [];
  const [score, param] = measure(terms);
  const rows = await db.all(`SELECT d.record_id FROM memory_search d WHERE d.user_id = ? AND d.kind = 'turn' ORDER BY ${score} DESC, d.doc_id DESC LIMIT ?`, [userId, param, k]);
  return rows.map((r) => r.record_id);
}

try {
  const data = JSON.parse(readFileSync(join(sharedDir, 'corpus', 'locomo', 'locomo-dev.json'), 'utf8'));
  const scores = Object.fromEntries(Object.keys(methods).map((m) => [m, { recall: KS.map(() => 0), rr: 0, ms: [], byCategory: {} }]));
  let questions = 0;
  for (const [ci, conv] of data.entries()) {
    const user = store.forUser(`locomo-${ci}`);
    const turns = locomoTurns(conv);
    for (let i = 0; i < turns.length; i += 200) await user.addTurns(turns.slice(i, i + 200));
    for (const qa of conv.qa ?? []) {
      const evidence = evidenceOf(qa);
      if (qa.category === 5 || evidence.length === 0) continue;
      questions++;
      for (const [name, rank] of Object.entries(methods)) {
        const t = performance.now();
        const ids = await rank(user, String(qa.question), Math.max(...KS));
        const s = scores[name];
        s.ms.push(performance.now() - t);
        KS.forEach((k, j) => (s.recall[j] += evidence.filter((e) => ids.slice(0, k).includes(e)).length / evidence.length));
        const first = ids.findIndex((id) => evidence.includes(id));
        s.rr += first === -1 ? 0 : 1 / (first + 1);
        const cat = (s.byCategory[CATEGORY[qa.category] ?? `cat${qa.category}`] ??= { n: 0, recall10: 0 });
        cat.n++;
        cat.recall10 += evidence.filter((e) => ids.slice(0, 10).includes(e)).length / evidence.length;
      }
    }
    log(`pg-fulltext: conversation ${ci + 1}/${data.length} (${turns.length} turns) ranked`);
  }
  const r3 = (x) => Math.round(x * 1000) / 1000;
  const report = Object.fromEntries(
    Object.entries(scores).map(([name, s]) => [
      name,
      {
        ...Object.fromEntries(KS.map((k, j) => [`recall@${k}`, r3(s.recall[j] / questions)])),
        mrr: r3(s.rr / questions),
        medianMs: Math.round(median(s.ms) * 100) / 100,
        recall10ByCategory: Object.fromEntries(Object.entries(s.byCategory).map(([c, v]) => [c, r3(v.recall10 / v.n)])),
      },
    ]),
  );
  if (process.argv.includes('--json')) console.log(JSON.stringify({ questions, methods: report }, null, 2));
  else {
    console.log(`LoCoMo evidence ranking on PostgreSQL (${data.length} conversations, ${questions} questions with evidence, adversarial left out)`);
    console.log(`${'method'.padEnd(22)}${KS.map((k) => `recall@${k}`.padStart(11)).join('')}${'MRR'.padStart(8)}${'median ms'.padStart(11)}`);
    for (const [name, r] of Object.entries(report)) console.log(`${name.padEnd(22)}${KS.map((k) => String(r[`recall@${k}`]).padStart(11)).join('')}${String(r.mrr).padStart(8)}${String(r.medianMs).padStart(11)}`);
    console.log(`recall@10 by category: ${Object.entries(report).map(([name, r]) => `${name} ${Object.entries(r.recall10ByCategory).map(([c, v]) => `${c} ${v}`).join(', ')}`).join(' | ')}`);
  }
} finally {
  await store.close();
  await db.close();
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin.end();
}
