import { describe, expect, it } from 'vitest';
import { createSearchAnalyzer, memoizeAnalyzer, porterStem } from './analyzer.js';

describe('porterStem', () => {
  it('matches the reference outputs of Porter (1980)', () => {
    const pairs: Array<[string, string]> = [
      ['caresses', 'caress'], ['ponies', 'poni'], ['cats', 'cat'], ['feed', 'feed'], ['agreed', 'agre'],
      ['plastered', 'plaster'], ['motoring', 'motor'], ['sing', 'sing'], ['conflated', 'conflat'],
      ['hopping', 'hop'], ['falling', 'fall'], ['filing', 'file'], ['happy', 'happi'], ['relational', 'relat'],
      ['generalization', 'gener'], ['triplicate', 'triplic'], ['hopeful', 'hope'], ['goodness', 'good'],
      ['adjustment', 'adjust'], ['adoption', 'adopt'], ['controll', 'control'], ['roll', 'roll'],
    ];
    for (const [word, stem] of pairs) expect(porterStem(word), word).toBe(stem);
  });

  it('brings inflections of one word together', () => {
    expect(new Set(['paint', 'paints', 'painted', 'painting'].map(porterStem))).toEqual(new Set(['paint']));
  });

  it('leaves short and non-ASCII words alone', () => {
    expect(porterStem('is')).toBe('is');
    expect(porterStem('café')).toBe('café');
  });
});

describe('createSearchAnalyzer', () => {
  const analyze = createSearchAnalyzer();

  it('drops English stopwords and stems the rest', () => {
    expect(analyze('When did Caroline go to the LGBTQ support groups?')).toEqual(['carolin', 'go', 'lgbtq', 'support', 'group']);
  });

  it('drops Chinese function words and keeps content words', () => {
    const terms = createSearchAnalyzer({ cjkBigrams: false })('我今天在学校摔倒了，膝盖好痛。');
    expect(terms).toEqual(expect.arrayContaining(['今天', '学校', '摔倒', '膝盖']));
    for (const stop of ['我', '在', '了', '好']) expect(terms).not.toContain(stop);
  });

  it('is deterministic and query/index symmetric', () => {
    const text = 'Melanie painted a sunrise 下周三开项目评审会';
    expect(analyze(text)).toEqual(analyze(text));
    expect(analyze('painting')).toEqual(analyze('paints'));
  });

  it('adds CJK bigrams unless asked not to', () => {
    expect(analyze('圣诞节晚会上跳舞')).toEqual(expect.arrayContaining(['晚会', '会上', '上跳', '跳舞']));
    expect(createSearchAnalyzer({ cjkBigrams: false })('圣诞节晚会上跳舞')).not.toContain('会上');
  });

  it('adds concept tags for words of a field, in English after stemming', () => {
    const a = createSearchAnalyzer({ concepts: { c_sport: ['跑步', '比赛', 'running'] } });
    expect(a('我们比赛谁跑步最快')).toEqual(expect.arrayContaining(['比赛', 'c_sport']));
    expect(a('She runs every day')).toContain('c_sport');
    expect(a('She reads every day')).not.toContain('c_sport');
  });

  it('can keep stopwords and skip stemming', () => {
    const raw = createSearchAnalyzer({ stopwords: false, stem: false });
    expect(raw('The cats were running')).toEqual(['the', 'cats', 'were', 'running']);
  });
});

describe('memoizeAnalyzer', () => {
  it('returns what the analyzer returns, frozen, and analyses a text once', () => {
    let calls = 0;
    const inner = createSearchAnalyzer();
    const memo = memoizeAnalyzer((text) => {
      calls++;
      return inner(text);
    });
    for (const text of ['下班前把周报发给我', 'Painting the fences', '下班前把周报发给我', '']) expect(memo(text)).toEqual(inner(text));
    expect(calls).toBe(3);
    expect(Object.isFrozen(memo('Painting the fences'))).toBe(true);
  });
});
