/**
 * The economics table: the paper's class rule, the table's arithmetic on rows worked out by hand,
 * and one session each that pays from the first call, later, and never — trimmed for real.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, Transcript, text, toolResult, toolUse, writeTranscript } from '../../../test/support/claude-transcript.js';
import { trimEconomics } from '../cache-model.js';
import { RolloutBuilder } from '../codex/testing.js';
import { priceFor } from '../pricing.js';
import { economicsGroup, economicsGroups, sessionClass, sessionEconomics, sessionsEconomics, type SessionEconomics } from './economics.js';
import { findSessionFiles } from './find-sessions.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir('ctxvm-economics-')));
afterAll(() => cleanup());

function row(reduction: number, breakEvenTurn: number | null, tokens: number, cls: 'mixed' | 'conversational'): SessionEconomics {
  return {
    file: `/s/${Math.random()}`,
    agent: 'claude',
    pricedAs: 'claude-sonnet-4-5',
    priced: true,
    tokens,
    trimmedTokens: Math.round(tokens * (1 - reduction)),
    reduction,
    systemAndTools: null,
    requestReduction: null,
    toolResultShare: cls === 'mixed' ? 0.5 : 0.05,
    class: cls,
    cacheWriteUsd: 0,
    firstCallExtraUsd: 0,
    perTurnSavingUsd: 0,
    breakEvenTurn,
  };
}

describe('the table', () => {
  it('classes a session by the share of tool results: 15% or more is mixed tool', () => {
    expect(sessionClass(0.15)).toBe('mixed');
    expect(sessionClass(0.8)).toBe('mixed');
    expect(sessionClass(0.1499)).toBe('conversational');
    expect(sessionClass(0)).toBe('conversational');
  });

  it('averages reduction and context over every session, break-even over those that break even', () => {
    const g = economicsGroup([row(0.6, 4, 100_000, 'mixed'), row(0.2, 30, 50_000, 'mixed'), row(0, null, 30_000, 'conversational'), row(0.4, 8, 20_000, 'mixed')]);
    expect(g.n).toBe(4);
    expect(g.reductionMean).toBeCloseTo((0.6 + 0.2 + 0 + 0.4) / 4, 9);
    expect(g.reductionPeak).toBe(0.6);
    expect(g.breakEvenMean).toBeCloseTo((4 + 30 + 8) / 3, 2);
    expect(g.breakEvenMedian).toBe(8);
    expect(g.neverBreakEven).toBe(1);
    expect(g.contextMean).toBe(50_000);
    // over 30%: 0.6 and 0.4
    expect(g.over30).toEqual({ n: 2, share: 0.5, breakEvenMean: 6 });
  });

  it('splits by class, and an empty class has n 0 and no break-even', () => {
    const groups = economicsGroups([row(0.5, 5, 10_000, 'mixed')]);
    expect(groups.all.n).toBe(1);
    expect(groups.mixed.n).toBe(1);
    expect(groups.conversational).toEqual({ n: 0, reductionMean: 0, reductionPeak: 0, breakEvenMean: null, breakEvenMedian: null, neverBreakEven: 0, contextMean: 0, over30: { n: 0, share: 0, breakEvenMean: null } });
  });
});

/** Large tool results early, a short conversation after: most of the context can be paged out. */
function toolHeavy(results: number, lines: number): Transcript {
  const t = new Transcript();
  t.user('look at the logs');
  for (let i = 0; i < results; i++) {
    t.assistant(`msg_${i}`, toolUse(`toolu_${i}`, 'Bash', { command: `cat build-${i}.log` }));
    t.results(toolResult(`toolu_${i}`, Array.from({ length: lines }, (_, k) => `[${k}] step ${k} of build ${i} finished in ${k % 17} ms`).join('\n')));
  }
  t.assistant('msg_sum', text('The builds are fine.'));
  for (let i = 0; i < 3; i++) {
    t.user(`question ${i}`);
    t.assistant(`msg_q${i}`, text(`answer ${i}`));
  }
  return t;
}

function chat(turns: number): Transcript {
  const t = new Transcript();
  for (let i = 0; i < turns; i++) {
    t.user(`Tell me about topic ${i}, in a few sentences please.`);
    t.assistant(`msg_${i}`, text(`Topic ${i} is a subject with a long history; here are a few sentences about it, none of them short.`));
  }
  return t;
}

describe('sessions trimmed for real', () => {
  it('pays from the first call when the trim removes nearly everything', async () => {
    const file = await writeTranscript(dir, toolHeavy(6, 1500), 'first-call.jsonl');
    const e = await sessionEconomics(file);
    expect(e.class).toBe('mixed');
    // Sonnet 5m: a first call pays when after·3.75 ≤ before·0.3, i.e. reduction ≥ 92%
    expect(e.reduction).toBeGreaterThan(0.92);
    expect(e.firstCallExtraUsd).toBeLessThan(0);
    expect(e.breakEvenTurn).toBe(1);
  });

  it('breaks even later with a smaller reduction, exactly as the cache model says', async () => {
    const file = await writeTranscript(dir, toolHeavy(1, 60), 'later.jsonl');
    const e = await sessionEconomics(file);
    expect(e.reduction).toBeGreaterThan(0);
    expect(e.reduction).toBeLessThan(0.92);
    const expected = trimEconomics({ beforeTokens: e.tokens, afterTokens: e.trimmedTokens, price: priceFor(e.model), ttl: '5m' });
    expect(e.breakEvenTurn).toBe(expected.breakEvenTurn);
    expect(e.breakEvenTurn).toBeGreaterThan(1);
    // dollar amounts are rounded to 6 decimals
    expect(Math.abs(e.cacheWriteUsd - (e.trimmedTokens * 3.75) / 1e6)).toBeLessThanOrEqual(5e-7 + 1e-12);
  });

  it('never breaks even when there is nothing to trim', async () => {
    const file = await writeTranscript(dir, chat(6), 'never.jsonl');
    const e = await sessionEconomics(file);
    expect(e.class).toBe('conversational');
    expect(e.reduction).toBe(0);
    expect(e.perTurnSavingUsd).toBe(0);
    expect(e.breakEvenTurn).toBeNull();
  });

  it('prices as --model says and with the 1-hour write when asked', async () => {
    const file = await writeTranscript(dir, toolHeavy(1, 60), 'priced.jsonl');
    const own = await sessionEconomics(file);
    const opus = await sessionEconomics(file, { model: 'claude-opus-4-1', ttl: '1h' });
    expect(opus.pricedAs).toBe('claude-opus-4-1');
    expect(opus.cacheWriteUsd).toBeCloseTo((opus.trimmedTokens * 30) / 1e6, 6);
    expect(opus.tokens).toBe(own.tokens);
  });

  it('finds the sessions of a folder (no subagents, journals or tool results) and reports what it skips', async () => {
    const root = join(dir, 'folder');
    await mkdir(join(root, 'proj', 'sess', 'subagents'), { recursive: true });
    await mkdir(join(root, 'codex', '2025', '09', '26'), { recursive: true });
    await writeTranscript(join(root, 'proj'), toolHeavy(2, 200), 'a.jsonl');
    await writeTranscript(join(root, 'proj'), chat(3), 'b.jsonl');
    await writeTranscript(join(root, 'proj', 'sess', 'subagents'), chat(1), 'agent-x.jsonl');
    await writeTranscript(join(root, 'proj'), chat(1), 'agent-y.jsonl');
    await writeFile(join(root, 'proj', 'journal.jsonl'), '{"type":"started"}\n');
    await writeFile(join(root, 'proj', 'empty.jsonl'), '');
    const codex = new RolloutBuilder().meta().turnContext().user('run the tests');
    codex.shell('npm test', Array.from({ length: 800 }, (_, i) => `ok ${i} test number ${i}`).join('\n')).assistant('all pass').user('thanks').assistant('sure');
    await writeFile(join(root, 'codex', '2025', '09', '26', 'rollout-2025-09-26T10-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000.jsonl'), codex.toString());
    const files = await findSessionFiles([root]);
    expect(files.map((f) => f.slice(root.length + 1))).toEqual(['codex/2025/09/26/rollout-2025-09-26T10-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000.jsonl', 'proj/a.jsonl', 'proj/b.jsonl', 'proj/empty.jsonl']);
    const progress: number[] = [];
    const report = await sessionsEconomics([root], { onProgress: (done) => progress.push(done) });
    expect(progress).toEqual([0, 1, 2, 3, 4]);
    expect(report.sessions.map((s) => [s.agent, s.class])).toEqual([
      ['codex', 'mixed'],
      ['claude', 'mixed'],
      ['claude', 'conversational'],
    ]);
    expect(report.skipped).toEqual([{ file: join(root, 'proj', 'empty.jsonl'), reason: expect.stringContaining('empty file') }]);
    expect(report.groups.all.n).toBe(3);
    expect(report.groups.mixed.n).toBe(2);
    expect(Object.keys(report.tokenizers).sort()).toEqual(['claude', 'codex']);
  });
});
