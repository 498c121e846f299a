/**
 * Semantic recall end to end: a real HTTP server speaking the embeddings wire format (with a
 * deterministic bilingual embedder, test/support/embeddings-server.ts), a real SQLite store and
 * sqlite-vec vector store, the real rebuilder and manager.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEmbeddingsServer, type EmbeddingsServer } from '../../../test/support/embeddings-server.js';
import { createOpenAiEmbedder } from '../../text/embed.js';
import { createTokenCounter } from '../../text/tokens.js';
import { createMemoryManager } from '../manager.js';
import { rebuildContext } from '../rebuild/index.js';
import { openMemoryStore, type SqlMemoryStore } from '../store/sql-memory-store.js';
import { embedAndStore, fuseByRank, type SemanticRecall } from './semantic-recall.js';
import { openSqliteVectorStore } from './vector-store-sqlite.js';
import type { VectorStore } from './vector-store.js';

const tokens = createTokenCounter();
const DAY = 86_400_000;
const FILLERS = 40;
const T0 = Date.UTC(2025, 2, 3, 9, 0);
const sourcesOf = (ctx: { layers: Array<{ items: Array<{ sources: string[] }> }> }) => new Set(ctx.layers.flatMap((l) => l.items.flatMap((i) => i.sources)));

let dir: string;
let server: EmbeddingsServer;
let store: SqlMemoryStore;
let vectors: VectorStore;
let warnings: string[];
let semantic: SemanticRecall;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ctxvm-semantic-'));
  server = await startEmbeddingsServer();
  store = await openMemoryStore({ db: join(dir, 'ctxvm.db'), now: () => T0 });
  vectors = await openSqliteVectorStore({ path: join(dir, 'ctxvm.db') });
  warnings = [];
  semantic = { embedder: createOpenAiEmbedder({ model: 'lexicon-1', baseURL: server.baseURL, apiKey: 'sk-test-key', timeoutMs: 300 }), vectors, onWarning: (m) => warnings.push(m) };
});

afterEach(async () => {
  await vectors.close();
  await store.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A user with a Chinese fact and an English turn, both embedded, among unrelated memories. */
async function seed(userId = 'u1', embed = true) {
  const u = store.forUser(userId);
  await u.setFact({ kind: 'fact', text: '下周二上午去看牙医，诊所在人民路。', sourceTurnIds: ['zh-1'] });
  await u.setFact({ kind: 'fact', text: '喜欢在周末骑自行车。', sourceTurnIds: ['zh-2'] });
  // Unrelated memories enough that not all of them fit: what is shown must be chosen.
  for (let i = 0; i < FILLERS; i++) await u.setFact({ kind: 'fact', text: `第${i + 1}次读书会讨论了一本小说。`, importance: 0.6, sourceTurnIds: [`filler-${i}`] });
  await u.addTurns([
    { id: 't1', role: 'user', speaker: null, text: 'My sister sent me a huge bouquet for my birthday.', atMs: T0, sessionId: 's1' },
    { id: 't2', role: 'assistant', speaker: null, text: 'That sounds lovely.', atMs: T0 + 1000, sessionId: 's1' },
    { id: 't3', role: 'user', speaker: null, text: 'The quarterly numbers look fine.', atMs: T0 + 2000, sessionId: 's1' },
  ]);
  if (embed) await embedAll(userId);
  return u;
}

/** Embeds every fact and turn of `userId`. */
async function embedAll(userId: string) {
  const u = store.forUser(userId);
  const facts = (await u.listFacts()).map((f) => ({ kind: 'fact' as const, id: f.id, text: f.text }));
  const turns = (await u.recentTurns(100)).map((t) => ({ kind: 'turn' as const, id: t.id, text: t.text }));
  expect(await embedAndStore(semantic, userId, [...facts, ...turns])).toBe(true);
}

const rebuild = (u: ReturnType<SqlMemoryStore['forUser']>, query: string, withSemantic: boolean) =>
  rebuildContext(u, query, { tokens, budgetTokens: 400, now: T0 + DAY, timeZone: 'UTC', touch: false, ...(withSemantic ? { semantic } : {}) });

describe('semantic recall', () => {
  it('finds a Chinese memory for an English question, which words alone do not', async () => {
    const u = await seed();
    const query = 'When is my dentist appointment?';
    expect(sourcesOf(await rebuild(u, query, false)).has('zh-1')).toBe(false);
    expect(sourcesOf(await rebuild(u, query, true)).has('zh-1')).toBe(true);
    expect(server.requests.at(-1)).toMatchObject({ model: 'lexicon-1', input: [query], authorization: 'Bearer sk-test-key' });
  });

  it('finds an English turn for a Chinese question', async () => {
    const u = await seed();
    const query = '我生日那天姐姐送了什么？';
    expect(sourcesOf(await rebuild(u, query, false)).has('t1')).toBe(false);
    expect(sourcesOf(await rebuild(u, query, true)).has('t1')).toBe(true);
  });

  it('changes nothing without it: contexts are byte-identical before and after vectors are stored', async () => {
    const u = await seed('u1', false);
    const queries = ['When is my dentist appointment?', '我生日那天姐姐送了什么？', 'quarterly numbers', '骑自行车'];
    const before = await Promise.all(queries.map((q) => rebuild(u, q, false)));
    await embedAll('u1');
    const asked = server.requests.length;
    for (const [i, query] of queries.entries()) {
      const after = await rebuild(u, query, false);
      expect(after.text).toBe(before[i]!.text);
      expect(after.layers).toEqual(before[i]!.layers);
    }
    expect(server.requests.length).toBe(asked);
  });

  it('a failing endpoint degrades to full text, with a warning that holds no message text', async () => {
    const u = await seed();
    server.mode = 'fail';
    const query = 'When is my dentist appointment and the quarterly numbers?';
    const ctx = await rebuild(u, query, true);
    expect(ctx.text).toBe((await rebuild(u, query, false)).text);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('HTTP 500');
    for (const w of warnings) {
      expect(w).not.toContain('dentist');
      expect(w).not.toContain('sk-test-key');
    }
  });

  it('a stalled endpoint degrades within its timeout', async () => {
    const u = await seed();
    server.mode = 'stall';
    const started = Date.now();
    const ctx = await rebuild(u, 'quarterly numbers', true);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(sourcesOf(ctx).has('t3')).toBe(true);
    expect(warnings.join('\n')).toContain('no answer within 300 ms');
  });

  it('keeps users apart: one user\'s vectors never reach another\'s context', async () => {
    await seed('u1');
    const other = store.forUser('u2');
    await other.setFact({ kind: 'fact', text: 'Likes hiking.', sourceTurnIds: ['u2-1'] });
    await embedAndStore(semantic, 'u2', [{ kind: 'fact', id: (await other.listFacts())[0]!.id, text: 'Likes hiking.' }]);
    const ctx = await rebuild(other, 'When is my dentist appointment?', true);
    for (const s of sourcesOf(ctx)) expect(s.startsWith('u2-')).toBe(true);
  });

  it('the manager embeds what a message writes, and a failing endpoint never fails a message', async () => {
    const manager = createMemoryManager({ store, defaultTimeZone: 'UTC', clock: { now: () => T0 }, semantic });
    const first = await manager.processMessage({ userId: 'm1', text: '记住：我每周三去游泳。' });
    expect(first.response.length).toBeGreaterThan(0);
    const embedded = server.requests.flatMap((r) => r.input);
    expect(embedded).toContain('记住：我每周三去游泳。');
    const near = await vectors.nearest('m1', (await semantic.embedder.embed(['swimming pool']))[0]!, { model: 'lexicon-1', kinds: ['turn'] });
    expect(near[0]?.id).toBe(first.turnIds.user);

    server.mode = 'fail';
    const second = await manager.processMessage({ userId: 'm1', text: 'How often do I go swimming?' });
    expect(second.response.length).toBeGreaterThan(0);
    expect(await store.forUser('m1').getTurns([second.turnIds.user, second.turnIds.assistant])).toHaveLength(2);
    expect(warnings.length).toBeGreaterThanOrEqual(2);
    for (const w of warnings) expect(w).not.toContain('swimming');
  });
});

describe('fuseByRank', () => {
  it('adds 1 / (k + rank) per list, best first, ties by id', () => {
    const a = [
      { kind: 'turn' as const, id: 'x', score: 9 },
      { kind: 'turn' as const, id: 'y', score: 5 },
    ];
    const b = [
      { kind: 'turn' as const, id: 'y', score: 0.9 },
      { kind: 'turn' as const, id: 'z', score: 0.8 },
    ];
    const fused = fuseByRank([a, b], 10, 60);
    expect(fused.map((h) => h.id)).toEqual(['y', 'x', 'z']);
    expect(fused[0]!.score).toBeCloseTo(1 / 62 + 1 / 61, 10);
    expect(fuseByRank([a, b], 1)).toHaveLength(1);
  });
});
