import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTokenCounter } from '../../text/tokens.js';
import { LAYER_NAMES, type LayerName } from '../context.js';
import { DEFAULT_LAYER_SHARES } from './options.js';
import { joinedCount, linesCount, packContext, type PackCandidate } from './pack.js';
import { blockText } from './render.js';

const tokens = createTokenCounter();
const shares = DEFAULT_LAYER_SHARES;

function cand(layer: LayerName, id: string, full: string, extra: Partial<PackCandidate> = {}): PackCandidate {
  return { layer, kind: layer === 'history' ? 'turn' : layer === 'tasks' ? 'task' : 'fact', id, sources: [`t-${id}`], full, priority: 1, order: id, ...extra };
}

const words = 'alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega 周报 评审 项目 会议 明天'.split(' ');
const sentence = (n: number, seed: number) => Array.from({ length: n }, (_, i) => words[(seed * 7 + i * 3) % words.length]).join(' ');

describe('packContext', () => {
  it('fills quotas in layer order and renders stable layers first', () => {
    const result = packContext(
      [cand('history', 'h1', 'Alice: we met on Monday'), cand('profile', 'p1', '- timeZone: Europe/Berlin'), cand('system', 's', 'You are helpful.')],
      200,
      shares,
      tokens,
    );
    expect(result.text).toBe('You are helpful.\n\n# User profile\n- timeZone: Europe/Berlin\n\n# Related conversation history\nAlice: we met on Monday\n');
    expect(result.stablePrefixChars).toBe('You are helpful.\n\n# User profile\n- timeZone: Europe/Berlin\n'.length);
    expect(result.tokens).toBe(tokens.count(result.text));
    expect(result.dropped).toEqual([]);
    expect(result.layers.map((l) => l.name)).toEqual([...LAYER_NAMES]);
    expect(result.layers.find((l) => l.name === 'history')!.items).toEqual([{ kind: 'turn', id: 'h1', text: 'Alice: we met on Monday', sources: ['t-h1'] }]);
  });

  it('gives unused quota of empty layers to the layers that need it', () => {
    const history = Array.from({ length: 40 }, (_, i) => cand('history', `h${i}`, `Bob: ${sentence(12, i)}`, { priority: 40 - i }));
    const result = packContext(history, 500, shares, tokens);
    // Only the history layer has candidates: it may use nearly the whole budget.
    expect(result.tokens).toBeGreaterThan(450);
    expect(result.tokens).toBeLessThanOrEqual(500);
    // Best first: every dropped item ranks below every packed one.
    const packed = new Set(result.layers.flatMap((l) => l.items.map((i) => i.id)));
    const worstPacked = Math.min(...history.filter((c) => packed.has(c.id)).map((c) => c.priority));
    for (const d of result.dropped) expect(history.find((c) => c.id === d.id)!.priority).toBeLessThan(worstPacked);
    expect(result.dropped.every((d) => d.reason === 'budget')).toBe(true);
    // A dropped item says what its full line would have taken.
    expect(result.dropped.length).toBeGreaterThan(0);
    for (const d of result.dropped) expect(d.tokens).toBe(tokens.count(`${history.find((c) => c.id === d.id)!.full}\n`));
  });

  it('compresses an item before it drops it', () => {
    const long = `Carol: ${sentence(60, 1)}`;
    const result = packContext(
      [cand('history', 'a', `Ann: ${sentence(30, 2)}`, { priority: 2 }), cand('history', 'b', long, { priority: 1, compact: 'Carol: … the key sentence …' })],
      tokens.count(`# Related conversation history\nAnn: ${sentence(30, 2)}\nCarol: … the key sentence …\n`) + 4,
      shares,
      tokens,
    );
    const items = result.layers.find((l) => l.name === 'history')!.items;
    expect(items.map((i) => [i.id, i.compressed ?? false])).toEqual([
      ['a', false],
      ['b', true],
    ]);
    expect(result.text).toContain('Carol: … the key sentence …');
    expect(result.dropped).toEqual([]);
  });

  it('upgrades compressed items to full text when tokens are left over', () => {
    const result = packContext([cand('history', 'n', 'Dan: a long neighbour turn with many words', { preferCompact: true, compact: 'Dan: …' })], 500, shares, tokens);
    const item = result.layers.find((l) => l.name === 'history')!.items[0]!;
    expect(item.text).toBe('Dan: a long neighbour turn with many words');
    expect(item.compressed).toBeUndefined();
  });

  it('never drops a protected open task while its compact form fits', () => {
    const history = Array.from({ length: 30 }, (_, i) => cand('history', `h${i}`, `Eve: ${sentence(20, i)}`, { priority: 100 }));
    const task = cand('tasks', 'task1', `- [todo] Write the weekly report · due 2024-05-03 Fri 18:00 · ${sentence(20, 3)}`, {
      priority: 0,
      protected: true,
      compact: '- [todo] Write the weekly report · due 2024-05-03',
    });
    const result = packContext([...history, task], 120, { ...shares, tasks: 0.01 }, tokens);
    expect(result.layers.find((l) => l.name === 'tasks')!.items.map((i) => i.id)).toEqual(['task1']);
    expect(result.tokens).toBeLessThanOrEqual(120);
  });

  it('keeps the stable prefix byte-identical whatever the volatile layers hold', () => {
    const stable = [cand('system', 's', 'You are a careful assistant.'), cand('profile', 'p', '- name: Li Lei'), cand('project', 'pr', 'Project: Apollo')];
    const a = packContext([...stable, cand('history', 'x', 'Li: first question')], 300, shares, tokens);
    const b = packContext([...stable, cand('tasks', 'y', '- [todo] other thing'), cand('memories', 'z', '- 2024-01-01: met Bob')], 300, shares, tokens);
    const c = packContext(stable, 300, shares, tokens);
    expect(a.text.slice(0, a.stablePrefixChars)).toBe(c.text);
    expect(b.text.slice(0, b.stablePrefixChars)).toBe(c.text);
    expect(a.stablePrefixChars).toBe(c.text.length);
  });

  it('renders the same bytes whatever order the candidates come in', () => {
    const items = Array.from({ length: 20 }, (_, i) =>
      cand(i % 2 ? 'history' : 'memories', `i${i}`, `${sentence(8, i)}`, { priority: i % 5, order: String(100 - i), group: `g${i % 3}`, groupHeader: `## g${i % 3}` }),
    );
    const a = packContext(items, 150, shares, tokens);
    const b = packContext([...items].reverse(), 150, shares, tokens);
    expect(b.text).toBe(a.text);
    expect(b.dropped).toEqual(a.dropped);
  });

  it('groups items under one header per group, groups in time order', () => {
    const result = packContext(
      [
        cand('history', 'b2', 'B: later', { order: '3', group: 's2', groupHeader: '## day 2' }),
        cand('history', 'a1', 'A: first', { order: '1', group: 's1', groupHeader: '## day 1' }),
        cand('history', 'a2', 'A: second', { order: '2', group: 's1', groupHeader: '## day 1' }),
      ],
      300,
      shares,
      tokens,
    );
    expect(result.text).toBe('# Related conversation history\n## day 1\nA: first\nA: second\n## day 2\nB: later\n');
  });

  it('never exceeds the budget and accounts for every candidate (property)', () => {
    const layer = fc.constantFrom(...LAYER_NAMES);
    const text = fc.array(fc.constantFrom(...words, 'Hello,', 'world.', '🎉', '\n', '…'), { minLength: 1, maxLength: 40 }).map((w) => w.join(' '));
    const candidate = fc.record({
      layer,
      full: text,
      compact: fc.option(text, { nil: undefined }),
      priority: fc.double({ min: 0, max: 10, noNaN: true }),
      protected: fc.boolean(),
      preferCompact: fc.boolean(),
      group: fc.option(fc.constantFrom('g1', 'g2', 'g3'), { nil: undefined }),
    });
    const shareArb = fc.record(Object.fromEntries(LAYER_NAMES.map((n) => [n, fc.double({ min: 0.01, max: 1, noNaN: true })])) as Record<LayerName, fc.Arbitrary<number>>);
    fc.assert(
      fc.property(fc.array(candidate, { maxLength: 25 }), fc.integer({ min: 0, max: 400 }), shareArb, (raw, budget, rawShares) => {
        const sum = LAYER_NAMES.reduce((s, n) => s + rawShares[n], 0);
        const normalised = Object.fromEntries(LAYER_NAMES.map((n) => [n, rawShares[n] / sum])) as Record<LayerName, number>;
        const candidates: PackCandidate[] = raw.map((r, i) => ({
          layer: r.layer,
          kind: 'k',
          id: `c${i}`,
          sources: [`t${i}`],
          full: r.full,
          ...(r.compact !== undefined ? { compact: r.compact } : {}),
          priority: r.priority,
          protected: r.protected,
          preferCompact: r.preferCompact,
          order: String(i).padStart(3, '0'),
          ...(r.group !== undefined ? { group: r.group, groupHeader: `## ${r.group}` } : {}),
        }));
        const result = packContext(candidates, budget, normalised, tokens);
        expect(result.tokens).toBe(tokens.count(result.text));
        expect(result.tokens).toBeLessThanOrEqual(budget);
        const placed = result.layers.flatMap((l) => l.items.map((i) => i.id));
        const dropped = result.dropped.map((d) => d.id);
        expect([...placed, ...dropped].sort()).toEqual(candidates.map((c) => c.id).sort());
        for (const l of result.layers) for (const item of l.items) expect(result.text).toContain(item.text);
        expect(result.stablePrefixChars).toBeLessThanOrEqual(result.text.length);
      }),
      { numRuns: 200 },
    );
  });

  it('packs the same way on a repeat, with its line costs remembered, as a new counter does', () => {
    const candidates = Array.from({ length: 60 }, (_, i) =>
      cand(i % 3 === 0 ? 'tasks' : i % 3 === 1 ? 'history' : 'memories', `r${i}`, `- ${sentence(6 + (i % 9), i)}`, {
        compact: `- ${sentence(3, i)}`,
        priority: (i * 37) % 11,
        preferCompact: i % 4 === 0,
      }),
    );
    const first = packContext(candidates, 300, shares, tokens);
    const again = packContext(candidates.map((c) => ({ ...c })), 300, shares, tokens);
    const fresh = packContext(candidates, 300, shares, createTokenCounter());
    expect(again).toEqual(first);
    expect(fresh).toEqual(first);
    // Another counter's line costs are its own: twice the tokens, fewer items.
    const doubled = createTokenCounter({ calibration: 2 });
    const wide = packContext(candidates, 300, shares, doubled);
    expect(wide.tokens).toBe(doubled.count(wide.text));
    expect(packContext(candidates, 300, shares, createTokenCounter({ calibration: 2 }))).toEqual(wide);
    expect(wide.dropped.length).toBeGreaterThan(first.dropped.length);
  });
});

describe('joinedCount', () => {
  // Characters around the cuts the claim rests on: letters, CJK, digits, punctuation (which takes
  // following newlines), spaces, tabs, "/" and carriage returns (where a cut is not taken).
  const piece = fc.constantFrom('a', 'Word', ' the', '周报', '。', '.', '?', ')', '#', '## Tasks', '- ', '-', '/', ' ', '  ', '\t', '\r', '12', '2025-06-01', "'s", '…', '😀', '<|endoftext|>');
  const line = fc.array(piece, { minLength: 0, maxLength: 8 }).map((xs) => xs.join('').replaceAll('\n', ''));
  const block = fc.array(line, { minLength: 1, maxLength: 5 }).map((ls) => `${ls.join('\n')}\n`);

  it('equals the count of the joined text whenever it answers', () => {
    let answered = 0;
    fc.assert(
      fc.property(fc.array(block, { minLength: 1, maxLength: 6 }), (texts) => {
        const n = joinedCount(texts.map((text) => ({ text, tokens: tokens.count(text) })), tokens);
        if (n === undefined) return;
        answered++;
        expect(n).toBe(tokens.count(texts.join('\n')));
      }),
      { numRuns: 2000 },
    );
    expect(answered).toBeGreaterThan(100); // the shortcut is taken often, not only in trivial cases
  });

  it('gives the same totals as counting the rendered context', () => {
    const candidates = LAYER_NAMES.flatMap((layer, i) => Array.from({ length: 6 }, (_, j) => cand(layer, `${layer}${j}`, `- ${words[(i + j) % words.length]} item ${j}${j % 2 ? '。' : '.'}`)));
    const packed = packContext(candidates, 400, shares, tokens);
    expect(packed.tokens).toBe(tokens.count(packed.text));
    expect(joinedCount([], tokens)).toBe(0);
    const calibrated = createTokenCounter({ calibration: 1.2 });
    expect(joinedCount([{ text: 'a\n', tokens: 1 }], calibrated)).toBeUndefined();
  });
});

describe('linesCount', () => {
  // As for joinedCount: characters around the cuts between lines, and lines holding newlines.
  const piece = fc.constantFrom('a', 'Word', ' the', '周报', '。', '.', '?', ')', '#', '## Tasks', '- ', '-', '/', ' ', '  ', '\t', '\r', '\n', '12', "'s", '…', '😀', '<|endoftext|>');
  const line = fc.array(piece, { minLength: 0, maxLength: 8 }).map((xs) => xs.join(''));
  const lineCost = (text: string) => tokens.count(`${text}\n`);

  it('equals the count of the block whenever it answers', () => {
    let answered = 0;
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 6 }), (lines) => {
        const n = linesCount(lines, tokens, lineCost);
        if (n === undefined) return;
        answered++;
        expect(n).toBe(tokens.count(blockText(lines)));
      }),
      { numRuns: 2000 },
    );
    expect(answered).toBeGreaterThan(100);
  });

  it('does not answer for a calibrated counter, whose counts are rounded per text', () => {
    expect(linesCount(['a', 'b'], createTokenCounter({ calibration: 1.2 }), lineCost)).toBeUndefined();
  });
});
