import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CtxvmError } from '../../errors.js';
import { MAX_ANALYZED_CHARS, createRuleExtractor, extract } from './extract.js';
import { normalizeEnglishNumbers } from './en-numbers.js';
import { detectLanguage } from './language.js';

const OPTIONS = { now: Date.parse('2026-03-10T09:30:00+08:00'), timeZone: 'Asia/Shanghai' };

describe('bad and odd input', () => {
  it('reads the empty string as chat', () => {
    const e = extract('', OPTIONS);
    expect(e).toMatchObject({ intent: 'chat', entities: [], language: 'en', source: 'rules' });
  });

  it('reads only the start of a 1 MB message, quickly and without throwing', () => {
    const huge = `明天下午三点提醒我交报告。${'这是一段很长的粘贴内容，里面什么都有 🚀 and some English too. '.repeat(30_000)}`;
    expect(huge.length).toBeGreaterThan(1_000_000);
    const started = performance.now();
    const e = extract(huge, OPTIONS);
    // Generous bound: this guards against scanning the whole megabyte, not a benchmark.
    expect(performance.now() - started).toBeLessThan(2000);
    expect(e.intent).toBe('create_task');
    expect(e.task?.title.length).toBeLessThanOrEqual(121);
  });

  it('never splits a surrogate pair when cutting a long message', () => {
    const text = `${'a'.repeat(MAX_ANALYZED_CHARS - 1)}😀${'b'.repeat(10)}`;
    expect(() => extract(text, OPTIONS)).not.toThrow();
  });

  it('handles emoji, SQL metacharacters and markup as text', () => {
    for (const text of ['😀😀😀', "'; DROP TABLE tasks; --", 'Robert"); DELETE FROM users WHERE 1=1; --', '<script>alert(1)</script>', '%s %d ${x} \\u0000', '\u0000\u0001\u200b']) {
      const e = extract(text, OPTIONS);
      expect(e.confidence).toBeGreaterThanOrEqual(0);
      expect(e.confidence).toBeLessThanOrEqual(1);
    }
    const emoji = extract('明天早上9点提醒我买咖啡☕️', OPTIONS);
    expect(emoji.intent).toBe('create_task');
    expect(emoji.task?.title).toBe('买咖啡☕️');
  });

  it('keeps a SQL-looking task title verbatim (it is data, never a query)', () => {
    const e = extract("remind me tomorrow to run DROP TABLE 'tmp'; on staging", { ...OPTIONS, timeZone: 'UTC' });
    expect(e.intent).toBe('create_task');
    expect(e.task?.title).toContain("DROP TABLE 'tmp'");
  });

  it('detects the language of mixed scripts by weight', () => {
    expect(detectLanguage('帮我 review 一下 PR')).toBe('zh');
    expect(detectLanguage('remind me to call 王伟 tomorrow')).toBe('en');
    expect(detectLanguage('olly 安静')).toBe('zh');
    expect(detectLanguage('😀 123')).toBe('en');
    expect(extract('请把 Q3 OKR review 改到 Friday', OPTIONS).language).toBe('zh');
  });

  it('throws a UsageError for bad options, not for bad text', () => {
    expect(() => extract('hi', { now: Number.NaN, timeZone: 'UTC' })).toThrow(CtxvmError);
    expect(() => extract('hi', { now: 0, timeZone: 'Mars/Olympus' })).toThrow(CtxvmError);
    expect(() => extract('hi', { now: 0, timeZone: 'UTC', recent: 'nope' as never })).toThrow(CtxvmError);
    expect(() => extract(undefined as never, OPTIONS)).not.toThrow();
  });

  it('never throws and keeps its invariants for arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), (text) => {
        const e = extract(text, OPTIONS);
        expect(e.confidence).toBeGreaterThanOrEqual(0);
        expect(e.confidence).toBeLessThanOrEqual(1);
        for (const entity of e.entities) expect(entity.text.length).toBeGreaterThan(0);
        if (e.task) expect(e.task.title.length).toBeLessThanOrEqual(121);
      }),
      { numRuns: 150 },
    );
  });

  it('is exposed behind the Extractor seam', () => {
    const rules = createRuleExtractor();
    expect(rules.name).toBe('rules');
    expect(rules.extract('下班前交周报', OPTIONS).intent).toBe('create_task');
  });
});

describe('spelled-out English numbers (for the date resolver)', () => {
  const cases: Array<[string, string]> = [
    ['five p. m.', '5 pm'],
    ['seven thirty am', '7:30 am'],
    ['six oh five', '6:05'],
    ['seven hundred and thirty am', '7:30 am'],
    ['one thousand two hundred p. m.', '12:00 pm'],
    ['in fifty minutes', 'in 50 minutes'],
    ['march twenty second', 'march 22nd'],
    ['the fifth of may', 'the 5th of may'],
    ['twenty five people', '25 people'],
    ['delete the second one', 'delete the second 1'],
  ];
  for (const [input, output] of cases) {
    it(`${input} → ${output}`, () => expect(normalizeEnglishNumbers(input).text).toBe(output));
  }

  it('maps ranges of the rewritten text back to the words written', () => {
    const n = normalizeEnglishNumbers('call at five p. m. sharp');
    const start = n.text.indexOf('5 pm');
    expect(n.toOriginal(start, start + 4)).toEqual([8, 18]);
    expect(n.toOriginal(0, 4)).toEqual([0, 4]);
  });
});
