/**
 * Puts Chinese date phrases into one form before the date grammar reads them: Traditional script
 * becomes Simplified through OpenCC's Hong Kong/Taiwan-to-mainland dictionaries (opencc-js), and
 * Cantonese time words become their Mandarin equivalents (聽日 → 明天, 宜家 → 现在, 晏晝 → 下午,
 * 兩個鐘 → 两小时), so that one rule set serves 下週三, 兩小時後 and 聽日.
 *
 * Every replacement keeps the text's length in UTF-16 code units, so offsets into the normalised
 * text are offsets into the text as written. OpenCC converts phrase by phrase; should a phrase
 * ever change length, the text is converted character by character instead.
 */
import { createRequire } from 'node:module';

type Convert = (text: string) => string;
interface OpenCCModule {
  Converter(options: { from: string; to: string }): Convert;
  Locale: { from: Record<string, ReadonlyArray<ReadonlyArray<string | ReadonlyArray<readonly [string, string]>>>>; to: Record<string, ReadonlyArray<ReadonlyArray<string | ReadonlyArray<readonly [string, string]>>>> };
}

/**
 * Cantonese time words and their Mandarin forms, the same length, applied after conversion to
 * Simplified script. A dialect lexicon, not a list of dates: each entry is one word.
 */
const CANTONESE_TIME_WORDS: ReadonlyArray<readonly [string, string]> = [
  ['听日', '明天'],
  ['听朝', '明早'],
  ['寻日', '昨天'],
  ['琴日', '昨天'],
  ['噚日', '昨天'],
  ['后日', '后天'],
  ['前日', '前天'],
  ['宜家', '现在'],
  ['而家', '现在'],
  ['依家', '现在'],
  ['晏昼', '下午'],
  ['下昼', '下午'],
  ['朝早', '早上'],
  ['今朝', '今早'],
  ['挨晚', '傍晚'],
  ['今个月', '这个月'],
  ['今个礼拜', '这个礼拜'],
  ['今个星期', '这个星期'],
  ['个钟', '小时'],
];
const CANTONESE = new RegExp(CANTONESE_TIME_WORDS.map(([from]) => from).join('|'), 'gu');
const CANTONESE_MAP = new Map(CANTONESE_TIME_WORDS);
const HAS_HAN = /\p{Script=Han}/u;

/** Converts Traditional to Simplified; loaded on the first text that needs it. */
class TraditionalToSimplified {
  private convert: Convert | undefined;
  private traditional: Set<string> | undefined;

  /** `text` in Simplified script, the same length. */
  apply(text: string): string {
    if (!this.mayHaveTraditional(text)) return text;
    const convert = this.load();
    const converted = convert(text);
    if (converted.length === text.length) return converted;
    let out = '';
    for (const char of text) {
      const one = convert(char);
      out += one.length === char.length ? one : char;
    }
    return out;
  }

  /** Whether any character of `text` is one the dictionaries convert (a cheap test first). */
  private mayHaveTraditional(text: string): boolean {
    this.load();
    for (const char of text) if (this.traditional!.has(char)) return true;
    return false;
  }

  private load(): Convert {
    if (this.convert) return this.convert;
    // Synchronous and lazy: the dictionaries take a while to build and most text is not Chinese.
    const require = createRequire(import.meta.url);
    const opencc = require('opencc-js/t2cn') as OpenCCModule;
    this.convert = opencc.Converter({ from: 'hk', to: 'cn' });
    this.traditional = new Set();
    for (const groups of [opencc.Locale.from.hk ?? [], opencc.Locale.from.tw ?? [], opencc.Locale.to.cn ?? []]) {
      for (const group of groups) for (const dict of group) this.collect(dict);
    }
    return this.convert;
  }

  private collect(dict: string | ReadonlyArray<readonly [string, string]>): void {
    const pairs = typeof dict === 'string' ? dict.split('|').map((entry) => entry.split(' ') as [string, string]) : dict;
    for (const [from, to] of pairs) {
      if (from === undefined || to === undefined || from === to) continue;
      const a = [...from];
      const b = [...to];
      a.forEach((char, i) => {
        if (char !== b[i]) this.traditional!.add(char);
      });
    }
  }
}

let converter: TraditionalToSimplified | undefined;

/** `text` with Chinese date words in Simplified Mandarin form; the same length as `text`. */
export function normalizeChineseDates(text: string): string {
  if (!HAS_HAN.test(text)) return text;
  // One converter per process: its dictionaries are read-only once built, like a lexicon.
  converter ??= new TraditionalToSimplified();
  return converter.apply(text).replace(CANTONESE, (word) => CANTONESE_MAP.get(word) ?? word);
}
