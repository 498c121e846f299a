import { describe, expect, it } from 'vitest';
import { createSearchAnalyzer } from '../analyzer.js';
import type { Project } from '../model.js';
import { keySentence } from './compress.js';
import { analyseQuery, coverage, entityMatch, inDateWindow } from './query.js';

const analyzer = createSearchAnalyzer();
const NOW = Date.UTC(2024, 0, 20, 12);
const DAY = 86_400_000;
const apollo: Project = { id: 'p1', userId: 'u', name: 'Apollo', createdAtMs: 0, updatedAtMs: 0, sourceTurnIds: [] };

describe('analyseQuery', () => {
  it('finds names, projects and finished-task cues', () => {
    const q = analyseQuery('What did Caroline finish for the Apollo launch?', analyzer, [apollo], NOW, 'UTC');
    expect([...q.names].sort()).toEqual(['apollo', 'caroline']);
    expect([...q.projectIds]).toEqual(['p1']);
    expect(q.asksDone).toBe(true);
    expect(q.terms.has('launch')).toBe(true);
  });

  it('turns explicit calendar dates into windows of when they were talked about', () => {
    const q = analyseQuery('What painting did Melanie show on October 13, 2023?', analyzer, [], NOW, 'UTC');
    expect(inDateWindow(Date.UTC(2023, 9, 13, 18), q)).toBe(true);
    expect(inDateWindow(Date.UTC(2023, 9, 20), q)).toBe(true);
    expect(inDateWindow(Date.UTC(2023, 9, 1), q)).toBe(false);
    // A month without a year that lies ahead means the last one.
    const june = analyseQuery('When did Melanie go camping in June?', analyzer, [], NOW, 'UTC');
    expect(inDateWindow(Date.UTC(2023, 5, 20), june)).toBe(true);
    expect(inDateWindow(Date.UTC(2024, 5, 20), june)).toBe(false);
    // Relative phrases are not calendar dates.
    expect(analyseQuery('What did I do last year?', analyzer, [], NOW, 'UTC').dateWindows).toEqual([]);
  });

  it('scores entity matches of records', () => {
    const q = analyseQuery('What did Caroline say on 3 June 2023?', analyzer, [], NOW, 'UTC');
    expect(entityMatch('Caroline adopted a dog', Date.UTC(2023, 5, 3), q)).toBe(1);
    expect(entityMatch('Caroline adopted a dog', Date.UTC(2022, 5, 3), q)).toBe(0.5);
    expect(entityMatch('Nothing here', NOW - DAY, q)).toBe(0);
  });
});

describe('keySentence', () => {
  const terms = (q: string) => new Set(analyzer(q));

  it('keeps the sentence sharing most query terms and marks the cuts', () => {
    const text = 'We had a lovely weekend at the lake. The kids swam a lot. Then I finally finished the sunrise painting I started in May, which took ages.';
    expect(keySentence(text, terms('When did Melanie paint the sunrise?'), analyzer)).toBe('… Then I finally finished the sunrise painting I started in May, which took ages.');
  });

  it('cuts one long sentence at clause boundaries', () => {
    const text = '我们上周去了海边，孩子们在沙滩上堆了一个很大的沙堡，后来还一起放了风筝，玩得特别开心，回家的路上大家都睡着了';
    const key = keySentence(text, terms('放风筝'), analyzer)!;
    expect(key).toContain('放了风筝');
    expect(key.length).toBeLessThan(text.length);
  });

  it('leaves short texts alone', () => {
    expect(keySentence('Short one. Another.', terms('short'), analyzer)).toBeUndefined();
  });
});

describe('coverage', () => {
  const bySet = (item: readonly string[], query: ReadonlySet<string>) => {
    const distinct = new Set(item);
    return distinct.size === 0 ? 0 : [...distinct].filter((t) => query.has(t)).length / distinct.size;
  };

  it('is the share of distinct item terms the query has, repeats counted once', () => {
    const q = new Set(['周报', 'report']);
    expect(coverage([], q)).toBe(0);
    expect(coverage(['周报'], q)).toBe(1);
    expect(coverage(['周报', '周报', '写'], q)).toBe(0.5);
    expect(coverage(['a', 'b', 'a', 'report'], q)).toBeCloseTo(1 / 3);
  });

  it('agrees with the Set definition on short and long term lists', () => {
    let seed = 3;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const vocab = Array.from({ length: 12 }, (_, i) => `t${i}`);
    for (let n = 0; n < 2000; n++) {
      const item = Array.from({ length: Math.floor(rnd() * 45) }, () => vocab[Math.floor(rnd() * vocab.length)]!);
      const query = new Set(vocab.filter(() => rnd() < 0.3));
      expect(coverage(item, query)).toBe(bySet(item, query));
    }
  });
});
