import fc from 'fast-check';
import { countTokens as libraryCount, encode } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { CtxvmError } from '../errors.js';
import { MODEL_CALIBRATION, calibrationForModel, calibrationFromUsage } from './calibration.js';
import { createMeasurementCounters, createTokenCounter } from './tokens.js';

const plain = { disallowedSpecial: new Set<string>() };
const reference = (text: string) => libraryCount(text, plain);
const counter = createTokenCounter();

/** Deterministic pseudo-random generator (mulberry32), so corpora are the same on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = 'the context window of a model is small and expensive while the store behind it is large cheap and versioned so we page out bulky tool output'.split(' ');
const ZH = ['下午三点开项目评审会', '请大家准时参加', '我们需要讨论下周的发布计划', '以及数据库迁移方案', '把写周报标记为完成', '明天下班前提交代码'];

const corpora: Record<string, string> = (() => {
  const r = random(42);
  const pick = <T>(items: readonly T[]) => items[Math.floor(r() * items.length)]!;
  const prose = Array.from({ length: 3000 }, (_, i) => pick(WORDS) + (i % 13 === 12 ? '.\n' : ' ')).join('');
  const code = Array.from(
    { length: 400 },
    (_, i) => `export function handle${i}(input: Record<string, number>): number {\n  return input['key${i % 17}'] ?? ${i * 31};\n}\n`,
  ).join('');
  const json = JSON.stringify(
    Array.from({ length: 300 }, (_, i) => ({ id: `msg_${(i * 2654435761) >>> 0}`, role: i % 2 ? 'assistant' : 'user', tokens: i * 7, ok: i % 3 === 0 })),
    null,
    2,
  );
  const base64 = Buffer.from(Array.from({ length: 30000 }, () => Math.floor(r() * 256))).toString('base64');
  const chinese = Array.from({ length: 800 }, (_, i) => pick(ZH) + (i % 4 === 3 ? '。\n' : '，')).join('');
  const mixed = Array.from({ length: 300 }, (_, i) => `${pick(ZH)} review the PR #${i} ASAP，@user${i} 🎉\n`).join('');
  return { prose, code, json, base64, chinese, mixed };
})();

describe('TokenCounter.count', () => {
  it('counts known strings', () => {
    expect(counter.count('')).toBe(0);
    expect(counter.count('hello world')).toBe(2);
    expect(counter.count('hello world')).toBe(encode('hello world').length);
    expect(counter.count('你好，世界')).toBe(encode('你好，世界').length);
    expect(counter.name).toBe('o200k_base');
    expect(counter.calibration).toBe(1);
  });

  it.each(Object.keys(corpora))('matches gpt-tokenizer exactly on %s', (name) => {
    const text = corpora[name]!;
    expect(counter.count(text)).toBe(reference(text));
    // Twice: the second run is served from the piece cache.
    expect(counter.count(text)).toBe(reference(text));
  });

  it('matches gpt-tokenizer on arbitrary mixed text', () => {
    const alphabet = fc.constantFrom(...'aZ9 \n\t.,\'"-_/=:;(){}<>|'.split(''), '中', '文', '。', 'é', '😀', "'s", '  ', '\r\n');
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 120 }), (chars) => {
        const text = chars.join('');
        expect(counter.count(text)).toBe(reference(text));
      }),
      { numRuns: 400 },
    );
    // Any code units at all, lone surrogates included (both sides encode them as U+FFFD).
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        expect(counter.count(text)).toBe(reference(text));
      }),
      { numRuns: 400 },
    );
  });

  it('counts special-token strings as plain text instead of throwing', () => {
    const text = 'before <|endoftext|> after <|im_start|>';
    expect(counter.count(text)).toBe(reference(text));
    expect(counter.count(text)).toBeGreaterThan(4);
  });

  it('is exact on long unbroken pieces (heap merge) too', () => {
    // One pre-token each, far above the 48-byte switch to the heap merge.
    for (const text of ['='.repeat(3000), 'ab'.repeat(1500), '项目评审会议'.repeat(400), 'x'.repeat(49), ' '.repeat(777), '😀'.repeat(300)]) {
      expect(counter.count(text)).toBe(reference(text));
    }
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'b', 'c', 'e', 'n', 'o', 's', 't', 'ü', '中'), { minLength: 40, maxLength: 400 }), (chars) => {
        const text = chars.join('');
        expect(counter.count(text)).toBe(reference(text));
      }),
      { numRuns: 200 },
    );
  });

  it('handles a multi-megabyte input with a huge unbroken run', () => {
    // gpt-tokenizer's own merge is quadratic per piece: this 1 MB run would not finish there.
    expect(reference('='.repeat(64))).toBe(1);
    const run = '='.repeat(64 * 15_625);
    expect(counter.count(run)).toBe(15_625);
    // A digit cannot join a punctuation piece, so the text splits exactly after the run.
    const rest = `42\n${corpora.prose!.repeat(10)}${corpora.mixed}`;
    expect(counter.count(run + rest)).toBe(15_625 + reference(rest));
  });

  it('rejects non-strings', () => {
    expect(() => counter.count(42 as unknown as string)).toThrow(CtxvmError);
  });
});

describe('TokenCounter.isWithin', () => {
  it('agrees with count() at, below and above the limit', () => {
    const calibrated = createTokenCounter({ calibration: 1.37 });
    for (const c of [counter, calibrated]) {
      for (const text of ['', 'hello world', corpora.prose!.slice(0, 5000), corpora.chinese!.slice(0, 800)]) {
        const n = c.count(text);
        for (const limit of [0, n - 1, n, n + 1, Math.floor(n / 2)]) {
          expect(c.isWithin(text, limit)).toBe(n <= limit);
        }
      }
    }
  });

  it('agrees with count() on arbitrary text and limits', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.nat(200), (text, limit) => {
        expect(counter.isWithin(text, limit)).toBe(counter.count(text) <= limit);
      }),
      { numRuns: 300 },
    );
  });

  it('treats negative limits as unreachable and rejects NaN', () => {
    expect(counter.isWithin('', -1)).toBe(false);
    expect(counter.isWithin('a', Number.POSITIVE_INFINITY)).toBe(true);
    expect(() => counter.isWithin('a', Number.NaN)).toThrow(CtxvmError);
  });
});

describe('TokenCounter.estimate', () => {
  it.each(Object.keys(corpora))('is at or above the real count, within 1.6x, on %s', (name) => {
    const text = corpora[name]!;
    const real = counter.count(text);
    const estimate = counter.estimate(text);
    expect(estimate).toBeGreaterThanOrEqual(real);
    expect(estimate).toBeLessThanOrEqual(real * 1.6);
  });

  it('with a limit: the estimate itself up to the limit, some number above it past it', () => {
    const calibrated = createTokenCounter({ calibration: 1.3 });
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 20_000 }), fc.integer({ min: 0, max: 3000 }), (text, limit) => {
        for (const c of [counter, calibrated]) {
          const full = c.estimate(text);
          const limited = c.estimate(text, limit);
          if (full <= limit) expect(limited).toBe(full);
          else expect(limited).toBeGreaterThan(limit);
        }
      }),
      { numRuns: 200 },
    );
    // a long text is not read to its end once the limit is passed
    const long = 'word '.repeat(2_000_000);
    expect(counter.estimate(long, 100)).toBeGreaterThan(100);
    expect(counter.estimate(long, 100)).toBeLessThan(counter.estimate(long) / 100);
  });

  it('is zero for empty text and scales with the calibration', () => {
    expect(counter.estimate('')).toBe(0);
    const text = corpora.prose!;
    expect(createTokenCounter({ calibration: 2 }).estimate(text)).toBeGreaterThanOrEqual(2 * counter.estimate(text) - 1);
  });
});

describe('calibration', () => {
  it('scales counts by the model factor and rounds', () => {
    const claude = createTokenCounter({ model: 'claude-sonnet-4-5' });
    const factor = calibrationForModel('claude-sonnet-4-5');
    expect(factor).toBe(MODEL_CALIBRATION.find((row) => row.prefix === 'claude')!.factor);
    expect(factor).not.toBe(1);
    const text = corpora.mixed!;
    expect(claude.count(text)).toBe(Math.round(reference(text) * factor));
    expect(claude.name).toBe(`o200k_base*${factor}`);
    expect(claude.isWithin(text, claude.count(text))).toBe(true);
    expect(claude.isWithin(text, claude.count(text) - 1)).toBe(false);
  });

  it('matches model names by longest prefix, ignoring case and provider prefixes', () => {
    expect(calibrationForModel('anthropic/Claude-3-5-Haiku')).toBe(calibrationForModel('claude'));
    expect(calibrationForModel('gpt-4o-mini')).toBe(1);
    expect(calibrationForModel('some-local-model')).toBe(1);
    expect(calibrationForModel(undefined)).toBe(1);
    expect(createTokenCounter({ model: 'gpt-4o' }).name).toBe('o200k_base');
  });

  it('lets an explicit calibration override the table', () => {
    const c = createTokenCounter({ model: 'claude-opus-4', calibration: 1.5 });
    expect(c.calibration).toBe(1.5);
    expect(c.count('hello world')).toBe(3);
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createTokenCounter({ calibration: bad })).toThrow(CtxvmError);
    }
  });

  it('derives a factor from usage as the median ratio', () => {
    expect(calibrationFromUsage([{ localTokens: 100, reportedTokens: 120 }])).toBeCloseTo(1.2);
    const samples = [
      { localTokens: 100, reportedTokens: 110 },
      { localTokens: 200, reportedTokens: 260 },
      { localTokens: 50, reportedTokens: 500 }, // an outlier (a cached system prompt?) does not move the median
      { localTokens: 1000, reportedTokens: 1150 },
    ];
    expect(calibrationFromUsage(samples)).toBeCloseTo((1.15 + 1.3) / 2);
    expect(calibrationFromUsage([...samples, { localTokens: 0, reportedTokens: 5 }, { text: 'x', localTokens: 10, reportedTokens: Number.NaN }])).toBeCloseTo(
      (1.15 + 1.3) / 2,
    );
    expect(() => calibrationFromUsage([])).toThrow(CtxvmError);
    expect(() => calibrationFromUsage([{ localTokens: 0, reportedTokens: 10 }])).toThrow(/none of the 1 samples/);
  });

  it('round-trips: a counter calibrated from usage reproduces the reported counts', () => {
    const texts = [corpora.prose!.slice(0, 4000), corpora.code!.slice(0, 4000), corpora.chinese!.slice(0, 1500)];
    const samples = texts.map((text) => ({ text, localTokens: counter.count(text), reportedTokens: Math.round(counter.count(text) * 1.25) }));
    const calibrated = createTokenCounter({ calibration: calibrationFromUsage(samples) });
    for (const sample of samples) expect(Math.abs(calibrated.count(sample.text) - sample.reportedTokens)).toBeLessThanOrEqual(1);
  });
});

describe('createMeasurementCounters', () => {
  it.each([['claude-sonnet-4-5'], ['gpt-4o']])('counts what createTokenCounter counts, calibrated and raw, texts of any length (%s)', (model) => {
    const plainCounter = createTokenCounter({ model });
    const { counter, raw } = createMeasurementCounters({ model });
    expect(counter.name).toBe(plainCounter.name);
    expect(counter.calibration).toBe(plainCounter.calibration);
    expect(raw.calibration).toBe(1);
    // long texts are past the default memo: the raw counter remembers them, and a second count agrees
    for (const text of [...Object.values(corpora), corpora.prose!.repeat(3), '', 'x']) {
      for (let round = 0; round < 2; round++) {
        expect(counter.count(text)).toBe(plainCounter.count(text));
        expect(raw.count(text)).toBe(reference(text));
      }
    }
    const text = corpora.mixed!;
    expect(counter.isWithin(text, plainCounter.count(text))).toBe(true);
    expect(counter.isWithin(text, plainCounter.count(text) - 1)).toBe(false);
    expect(counter.estimate(text)).toBe(plainCounter.estimate(text));
  });
});
