/**
 * The search analyzer of the memory store: what the full-text index and the query are made of.
 * One function, used for both sides, so a query term and an indexed term meet exactly.
 *
 * It starts from the segmenter's tokens (NFKC, lower-case, jieba words for Chinese) and then
 * - drops stopwords: English function words and Chinese particles, pronouns and fillers, which
 *   match nearly every turn and only add noise to BM25;
 * - stems English words with Porter's algorithm (1980), so "painted", "painting" and "paints"
 *   all meet at "paint";
 * - adds CJK character bigrams (on by default), which let "晚会上" meet "晚会" when jieba cuts
 *   the two texts differently;
 * - adds WordNet concepts of English nouns (src/text/wordnet.ts; on by default), so a class
 *   ("martial arts", "European countries") meets its members ("taekwondo", "Spain");
 * - optionally adds concept tags from a caller-given map (word → tag), so words of one field
 *   ("跑步", "一百米", "比赛") share a token. The map is data the caller owns; none is built in.
 */
import { createSegmenter, type Segmenter } from '../text/segment.js';
import { remembered } from '../core/remembered.js';
import { globalMatches } from '../text/global-matches.js';
import { createTextMemo, type TextMemoOptions } from '../text/text-memo.js';
import { createWordNet, nounBaseForms, type WordNet, type WordNetOptions } from '../text/wordnet.js';

/**
 * Turns text into index/query terms; the same function must be used for both. With `query`, a
 * query's terms are `query(text)` instead: a subset of what indexing the same text gives (a
 * query names a concept, an indexed text also every concept above it), so the two still meet.
 */
export interface SearchAnalyzer {
  (text: string): string[];
  query?: (text: string) => string[];
}

/** Options of `createSearchAnalyzer`. */
export interface SearchAnalyzerOptions {
  /** The segmenter (default: `createSegmenter()`, jieba with Intl fallback). */
  segmenter?: Segmenter;
  /** Porter-stem English words (default true). */
  stem?: boolean;
  /** Drop English and Chinese stopwords (default true). */
  stopwords?: boolean;
  /**
   * Add character bigrams of every CJK run of 3+ characters (default true): they let texts meet
   * where jieba cut them differently ("晚会上" / "晚会"). On MADial-Bench zh they raised the share
   * of dialogues whose gold memory reached a 600-token context from 0.79 to 0.81.
   */
  cjkBigrams?: boolean;
  /**
   * Concept tags: tag → words. A token that is one of the words (English: after stemming) or,
   * for CJK tokens, contains one, also yields the tag. Tags should not collide with real words
   * (e.g. "c_sport"). Default none.
   */
  concepts?: Readonly<Record<string, readonly string[]>>;
  /**
   * Add WordNet concepts of English nouns (src/text/wordnet.ts): each noun's first sense and its
   * nearest hypernyms, as "wn:<offset>" terms, so "martial arts" meets "taekwondo" and "kids"
   * meets "children". Default true (the default levels); false turns it off. On LoCoMo's tune
   * half (docs/benchmarks.md) it raised evidence recall at 2,000 tokens from 0.882 to 0.90.
   */
  wordnet?: boolean | WordNetOptions;
}

// Short English function words; words that carry meaning in questions about memory ("when",
// "where", "who") are function words too: every question has one and no answer does.
const EN_STOPWORDS = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other ' +
    'our ours ourselves out over own same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which while who whom why will ' +
    'with would you your yours yourself yourselves s t d ll m re ve y don didn doesn isn wasn aren weren won wouldn ' +
    'also yeah yes oh hey hi wow really well ok okay like got get gets just much many thing things'
  ).split(' '),
);

// Chinese function words: particles, pronouns, copulas, common adverbs and fillers.
const ZH_STOPWORDS = new Set(
  (
    '的 了 着 过 是 在 和 与 及 或 而 就 都 也 还 又 再 才 很 太 更 最 挺 真 好 吗 呢 吧 啊 呀 哦 哇 嗯 哈 哈哈 啦 嘛 呗 ' +
    '我 你 您 他 她 它 我们 你们 他们 她们 它们 咱们 自己 这 那 这个 那个 这些 那些 这样 那样 这么 那么 这里 那里 ' +
    '个 一个 一些 有 没 没有 不 不是 会 能 要 想 可以 可能 应该 把 被 给 让 对 从 向 往 到 为 为了 因为 所以 但是 可是 ' +
    '如果 虽然 然后 还是 就是 什么 怎么 怎么样 为什么 哪 哪里 哪个 谁 多少 几 吗 呢 一下 一起 已经 正在 觉得 知道 ' +
    '真的 非常 特别 超级 有点 一点 时候 的话 之后 之前 上 下 里 中'
  ).split(' '),
);

const ASCII_WORD = /^[a-z]+$/;
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}〇々ー]{3,}/gu;
const HAS_CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/** Creates the analyzer: segmenter tokens, minus stopwords, Porter-stemmed, plus optional bigrams and concept tags. */
export function createSearchAnalyzer(options: SearchAnalyzerOptions = {}): SearchAnalyzer {
  const segmenter = options.segmenter ?? createSegmenter();
  const stem = options.stem ?? true;
  const dropStopwords = options.stopwords ?? true;
  const bigrams = options.cjkBigrams ?? true;
  const concepts = compileConcepts(options.concepts, stem);
  const wordnetOption = options.wordnet ?? true;
  const wordnet = wordnetOption ? createWordNet(wordnetOption === true ? {} : wordnetOption) : undefined;

  const analyze = (text: string, side: 'index' | 'query'): string[] => {
    const out: string[] = [];
    const tokens = segmenter.segment(text);
    for (const raw of tokens) {
      const isAscii = ASCII_WORD.test(raw);
      if (dropStopwords && (isAscii ? EN_STOPWORDS.has(raw) : ZH_STOPWORDS.has(raw))) continue;
      const term = isAscii && stem ? porterStem(raw) : raw;
      out.push(term);
      if (concepts) concepts(term, out);
    }
    if (wordnet) addNounConcepts(wordnet, tokens, capitalisedWords(text), side === 'index', out);
    if (bigrams) {
      for (const match of globalMatches(CJK_RUN, text.normalize('NFKC'))) {
        const run = [...match[0]];
        for (let i = 0; i + 1 < run.length; i++) out.push(run[i]! + run[i + 1]!);
      }
    }
    return out;
  };
  const analyzer: SearchAnalyzer = (text) => analyze(text, 'index');
  if (wordnet) analyzer.query = (text) => analyze(text, 'query');
  return analyzer;
}

/**
 * `analyzer` with a bounded memo of its results (see text-memo.ts), for callers that analyse
 * the same texts again and again (the rebuilder: task titles, sentences of stored turns). The
 * arrays it returns are shared between calls and frozen.
 */
export function memoizeAnalyzer(analyzer: SearchAnalyzer, options: TextMemoOptions = {}): SearchAnalyzer {
  const memoized = (fn: (text: string) => string[]) => {
    const memo = createTextMemo<readonly string[]>(options, (terms) => terms.reduce((sum, t) => sum + t.length + 8, 0));
    return (text: string) => {
      let terms = memo.get(text);
      if (terms === undefined) {
        terms = Object.freeze(fn(text));
        memo.set(text, terms);
      }
      return terms as string[];
    };
  };
  const out: SearchAnalyzer = memoized(analyzer);
  if (analyzer.query) out.query = memoized(analyzer.query);
  return out;
}

const MIN_NOUN_CHARS = 3;

// A capitalised word not at the start of a sentence.
const MID_SENTENCE_CAPITAL = /(?<![.!?:]\s*|^\s*)\b[A-Z][a-z]+/g;

/** Lower-cased words `text` capitalises mid-sentence: names, as far as the text tells. */
function capitalisedWords(text: string): ReadonlySet<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(MID_SENTENCE_CAPITAL)) out.add(m[0].toLowerCase());
  return out;
}

/**
 * `wn:` terms of the English nouns in `tokens`; two words that form a WordNet compound ("martial
 * arts") count as one. A word the text capitalises is taken as a name: only a name sense counts
 * ("Spain"; not "John" as the toilet, WordNet's first sense of "john").
 */
function addNounConcepts(wordnet: WordNet, tokens: readonly string[], names: ReadonlySet<string>, withHypernyms: boolean, out: string[]): void {
  const push = (lemma: string) => {
    // A query names the noun's own sense; an indexed text also the senses above it.
    if (withHypernyms) for (const c of wordnet.concepts(lemma)) out.push(`wn:${c}`);
    else {
      const c = wordnet.concept(lemma);
      if (c !== undefined) out.push(`wn:${c}`);
    }
  };
  const usable = (lemma: string, word: string) => wordnet.has(lemma) && (!names.has(word) || wordnet.isNameSense(lemma));
  for (let i = 0; i < tokens.length; i++) {
    const word = tokens[i]!;
    if (!ASCII_WORD.test(word) || EN_STOPWORDS.has(word)) continue;
    const next = tokens[i + 1];
    if (next !== undefined && ASCII_WORD.test(next) && !EN_STOPWORDS.has(next)) {
      const compound = nounBaseForms(`${word}_${next}`).find((w) => usable(w, word));
      if (compound) {
        push(compound);
        i++;
        continue;
      }
    }
    if (word.length < MIN_NOUN_CHARS) continue;
    const lemma = nounBaseForms(word).find((w) => usable(w, word));
    if (lemma) push(lemma);
  }
}

type ConceptTagger = (term: string, out: string[]) => void;

function compileConcepts(map: SearchAnalyzerOptions['concepts'], stem: boolean): ConceptTagger | undefined {
  if (!map) return undefined;
  const exact = new Map<string, string[]>();
  const cjkWords: Array<[word: string, tag: string]> = [];
  for (const tag of Object.keys(map).sort()) {
    for (const word of map[tag] ?? []) {
      const w = word.normalize('NFKC').toLowerCase();
      if (HAS_CJK.test(w)) cjkWords.push([w, tag]);
      else {
        const key = stem && ASCII_WORD.test(w) ? porterStem(w) : w;
        const tags = exact.get(key) ?? [];
        if (!tags.includes(tag)) tags.push(tag);
        exact.set(key, tags);
      }
    }
  }
  return (term, out) => {
    const tags = exact.get(term);
    if (tags) out.push(...tags);
    if (!HAS_CJK.test(term)) return;
    let last = '';
    for (const [word, tag] of cjkWords) {
      // One tag per term: jieba's search mode already repeats sub-words, which count again.
      if (tag !== last && term.includes(word)) {
        out.push(tag);
        last = tag;
      }
    }
  };
}

// ---------------------------------------------------------------------------------------------
// Porter stemmer (M. F. Porter, "An algorithm for suffix stripping", 1980), for lower-case a-z.

function isConsonant(w: string, i: number): boolean {
  const c = w[i];
  if (c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u') return false;
  if (c === 'y') return i === 0 || !isConsonant(w, i - 1);
  return true;
}

/** Porter's m: the number of vowel-consonant sequences in `stem`. */
function measure(stem: string): number {
  let m = 0;
  let i = 0;
  const n = stem.length;
  while (i < n && isConsonant(stem, i)) i++;
  while (i < n) {
    while (i < n && !isConsonant(stem, i)) i++;
    if (i >= n) break;
    while (i < n && isConsonant(stem, i)) i++;
    m++;
  }
  return m;
}

function hasVowel(stem: string): boolean {
  for (let i = 0; i < stem.length; i++) if (!isConsonant(stem, i)) return true;
  return false;
}

function endsDoubleConsonant(w: string): boolean {
  const n = w.length;
  return n >= 2 && w[n - 1] === w[n - 2] && isConsonant(w, n - 1);
}

/** *o: ends consonant-vowel-consonant, the last not w, x or y ("hop", not "snow"). */
function endsCvc(w: string): boolean {
  const n = w.length;
  if (n < 3 || !isConsonant(w, n - 1) || isConsonant(w, n - 2) || !isConsonant(w, n - 3)) return false;
  const c = w[n - 1];
  return c !== 'w' && c !== 'x' && c !== 'y';
}

/** Replaces the first matching suffix whose stem satisfies `when`; stops at the first suffix that matches at all. */
function replaceSuffix(w: string, rules: ReadonlyArray<readonly [string, string]>, when: (stem: string) => boolean): string {
  for (const [suffix, replacement] of rules) {
    if (w.endsWith(suffix)) {
      const stem = w.slice(0, w.length - suffix.length);
      return when(stem) ? stem + replacement : w;
    }
  }
  return w;
}

const STEP2: ReadonlyArray<readonly [string, string]> = [
  ['ational', 'ate'], ['tional', 'tion'], ['enci', 'ence'], ['anci', 'ance'], ['izer', 'ize'], ['bli', 'ble'],
  ['alli', 'al'], ['entli', 'ent'], ['eli', 'e'], ['ousli', 'ous'], ['ization', 'ize'], ['ation', 'ate'],
  ['ator', 'ate'], ['alism', 'al'], ['iveness', 'ive'], ['fulness', 'ful'], ['ousness', 'ous'], ['aliti', 'al'],
  ['iviti', 'ive'], ['biliti', 'ble'], ['logi', 'log'],
];
const STEP3: ReadonlyArray<readonly [string, string]> = [
  ['icate', 'ic'], ['ative', ''], ['alize', 'al'], ['iciti', 'ic'], ['ical', 'ic'], ['ful', ''], ['ness', ''],
];
const STEP4 = ['al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ion', 'ou', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize'];

/** Words whose stems are remembered: a vocabulary, not a text (cleared when full). */
const STEM_MEMO_WORDS = 50_000;
/** Longest word remembered (a longer one is not vocabulary: an id, a hash, base64). */
const STEM_MEMO_WORD_CHARS = 40;
const stemMemo = new Map<string, string>();

/** The Porter stem of a lower-case English word; words of one or two letters come back unchanged. */
export function porterStem(word: string): string {
  if (word.length <= 2) return word;
  // The same words come back in every message and every rebuilt context: each is stemmed once
  // (about 25 suffix tests a word; a stem was half a microsecond, a lookup is a fraction of that).
  return word.length > STEM_MEMO_WORD_CHARS ? stemWord(word) : remembered(stemMemo, word, STEM_MEMO_WORDS, stemWord);
}

function stemWord(word: string): string {
  if (!ASCII_WORD.test(word)) return word;
  let w = word;

  // Step 1a: plurals.
  if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('ies')) w = w.slice(0, -2);
  else if (!w.endsWith('ss') && w.endsWith('s')) w = w.slice(0, -1);

  // Step 1b: -eed, -ed, -ing.
  if (w.endsWith('eed')) {
    if (measure(w.slice(0, -3)) > 0) w = w.slice(0, -1);
  } else {
    const suffix = w.endsWith('ed') ? 'ed' : w.endsWith('ing') ? 'ing' : '';
    if (suffix && hasVowel(w.slice(0, -suffix.length))) {
      w = w.slice(0, -suffix.length);
      if (w.endsWith('at') || w.endsWith('bl') || w.endsWith('iz')) w += 'e';
      else if (endsDoubleConsonant(w) && !/[lsz]$/.test(w)) w = w.slice(0, -1);
      else if (measure(w) === 1 && endsCvc(w)) w += 'e';
    }
  }

  // Step 1c: y → i after a vowel-bearing stem.
  if (w.endsWith('y') && hasVowel(w.slice(0, -1))) w = w.slice(0, -1) + 'i';

  w = replaceSuffix(w, STEP2, (stem) => measure(stem) > 0);
  w = replaceSuffix(w, STEP3, (stem) => measure(stem) > 0);

  // Step 4: drop a suffix when m > 1 (-ion only after s or t).
  for (const suffix of STEP4) {
    if (!w.endsWith(suffix)) continue;
    const stem = w.slice(0, w.length - suffix.length);
    if (measure(stem) > 1 && (suffix !== 'ion' || /[st]$/.test(stem))) w = stem;
    // Porter tries only the longest suffix that matches ("-ement" before "-ment" before "-ent").
    break;
  }

  // Step 5a: final -e.
  if (w.endsWith('e')) {
    const stem = w.slice(0, -1);
    const m = measure(stem);
    if (m > 1 || (m === 1 && !endsCvc(stem))) w = stem;
  }
  // Step 5b: -ll → -l when m > 1.
  if (measure(w) > 1 && endsDoubleConsonant(w) && w.endsWith('l')) w = w.slice(0, -1);
  return w;
}
