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
  // The word pipeline alone (WordNet concepts have their own tests below).
  const analyze = createSearchAnalyzer({ wordnet: false });

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
    const raw = createSearchAnalyzer({ stopwords: false, stem: false, wordnet: false });
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

describe('WordNet concepts', () => {
  const analyze = createSearchAnalyzer();
  const query = (text: string) => analyze.query!(text);
  const concepts = (terms: readonly string[]) => terms.filter((t) => t.startsWith('wn:'));
  const meets = (q: string, doc: string) => concepts(query(q)).some((t) => analyze(doc).includes(t));

  it('lets a class in a query meet its members in a text', () => {
    expect(meets('What martial arts has John done?', "I'm off to do some taekwondo!")).toBe(true);
    expect(meets('What European countries has Maria been to?', 'Last year I took a solo trip and took this pic in Spain.')).toBe(true);
    expect(meets('What do the kids like?', 'The children loved the dinosaur exhibit.')).toBe(true);
  });

  it('does not let unrelated nouns meet', () => {
    expect(meets('What martial arts has John done?', 'We went to a homeless shelter to give out food.')).toBe(false);
    expect(meets('What European countries has Maria been to?', 'I bought new shoes and figurines.')).toBe(false);
  });

  it('reads a capitalised word as a name: "John" is not a toilet', () => {
    expect(concepts(analyze('Then John called.'))).toEqual([]);
    expect(concepts(analyze('The john was out of order.'))).not.toEqual([]);
  });

  it('gives a query a subset of the terms its own text is indexed with', () => {
    for (const text of ['Caroline went to a pride parade with her friends', 'kickboxing and painting classes in England', '周末去海边放风筝']) {
      const indexed = new Set(analyze(text));
      for (const t of query(text)) expect(indexed.has(t), `${text}: ${t}`).toBe(true);
    }
  });

  it('adds nothing to Chinese text, and nothing when turned off', () => {
    expect(concepts(analyze('我们比赛谁跑步最快'))).toEqual([]);
    const off = createSearchAnalyzer({ wordnet: false });
    expect(off.query).toBeUndefined();
    expect(concepts(off('kickboxing and taekwondo'))).toEqual([]);
  });

  it('keeps the query form through memoizeAnalyzer', () => {
    const memo = memoizeAnalyzer(analyze);
    expect(memo.query!('martial arts')).toEqual(query('martial arts'));
    expect(memo('martial arts')).toEqual(analyze('martial arts'));
  });
});
