import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSegmenter, segmentToString } from './segment.js';
import type { Segmenter } from './segment.js';

const jieba = createSegmenter();
const intl = createSegmenter({ prefer: 'intl' });

describe('createSegmenter', () => {
  it('loads jieba by default and Intl.Segmenter on request', () => {
    // jieba ships as a prebuilt native module for this platform; if it failed to load,
    // the fallback would silently hide it, so the default must really be jieba here.
    expect(jieba.name).toBe('jieba');
    expect(intl.name).toBe('intl');
  });
});

/** Behaviour both implementations must share. */
describe.each<[string, Segmenter]>([
  ['jieba', jieba],
  ['intl', intl],
])('%s segmenter', (_name, segmenter) => {
  it('lower-cases English words, keeps digits, splits on punctuation', () => {
    expect(segmenter.segment('Review the PR #42 ASAP, node.js v2!')).toEqual(['review', 'the', 'pr', '42', 'asap', 'node', 'js', 'v2']);
  });

  it('cuts Chinese into words', () => {
    expect(segmenter.segment('写周报')).toEqual(['写', '周报']);
    expect(segmenter.segment('把写周报标记为完成')).toContain('周报');
    const meeting = segmenter.segment('项目评审会');
    expect(meeting).toContain('项目');
    expect(meeting).toContain('评审');
  });

  it('handles mixed text and drops punctuation, whitespace and emoji', () => {
    const tokens = segmenter.segment('下午三点开项目评审会 review the PR #42 ASAP 🎉！');
    for (const word of ['下午', '开', '项目', '评审', 'review', 'the', 'pr', '42', 'asap']) expect(tokens).toContain(word);
    expect(tokens.join('')).not.toMatch(/[\s#！!🎉]/u);
    // Order follows the text: Chinese words come before the English ones.
    expect(tokens.indexOf('项目')).toBeLessThan(tokens.indexOf('review'));
  });

  it('normalises full-width characters and keeps accented words whole', () => {
    expect(segmenter.segment('ＡＢＣ１２３ Café naïve')).toEqual(['abc123', 'café', 'naïve']);
  });

  it('separates CJK from adjacent Latin', () => {
    expect(segmenter.segment('abc中文def')).toEqual(['abc', '中文', 'def']);
  });

  it('returns nothing for empty or symbol-only text', () => {
    expect(segmenter.segment('')).toEqual([]);
    expect(segmenter.segment(' \n\t，。！？…🎉👍 --- ### ')).toEqual([]);
  });

  it('never yields empty tokens, whitespace or case', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 80 }), (text) => {
        for (const token of segmenter.segment(text)) {
          expect(token.length).toBeGreaterThan(0);
          expect(token).not.toMatch(/\s/u);
          expect(token).toBe(token.toLowerCase());
          expect(token).toMatch(/[\p{L}\p{N}]/u);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('keeps every Han character of a long unpunctuated run', () => {
    const run = '我们需要讨论下周的发布计划以及数据库迁移方案'.repeat(40);
    const tokens = segmenter.segment(run);
    // Search mode may add sub-words, so cover at least every character once.
    expect(tokens.join('').length).toBeGreaterThanOrEqual(run.length);
    expect(tokens).toContain('计划');
  });
});

describe('jieba segmenter', () => {
  it('adds search-mode sub-words of long words', () => {
    const tokens = jieba.segment('中华人民共和国');
    expect(tokens).toContain('中华人民共和国');
    expect(tokens).toContain('人民');
  });

  it('sends Japanese kana to Intl.Segmenter rather than cutting it per character', () => {
    expect(jieba.segment('カタカナ')).toEqual(intl.segment('カタカナ'));
    expect(jieba.segment('カタカナ')).not.toEqual(['カ', 'タ', 'カ', 'ナ']);
  });
});

describe('segmentToString', () => {
  it('joins tokens with single spaces for a full-text column', () => {
    expect(segmentToString('把写周报标记为完成 ASAP')).toBe(jieba.segment('把写周报标记为完成 ASAP').join(' '));
    expect(segmentToString('写周报', intl)).toBe('写 周报');
    expect(segmentToString('')).toBe('');
  });
});
