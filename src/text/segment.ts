/**
 * Search tokens for mixed Chinese/English text, for the full-text index and for query terms.
 *
 * Text is NFKC-normalised (full-width "ＡＢＣ１２" becomes "ABC12") and lower-cased. Runs of
 * letters and digits become one token each ("node.js" gives "node", "js"; "v2" stays "v2"), and
 * runs of CJK characters go to a word segmenter: jieba's search mode, which also emits the
 * shorter words inside long ones ("评审会" gives "评审", "评审会"), or `Intl.Segmenter` when
 * jieba's native module cannot load. Punctuation, whitespace and emoji produce no tokens.
 */
import { createRequire } from 'node:module';
import { globalMatches } from './global-matches.js';

/** Splits text into search tokens. */
export interface Segmenter {
  /** Which CJK word segmenter is in use: "jieba" or "intl". */
  readonly name: 'jieba' | 'intl';
  /** Search tokens of `text` in order: lower-cased, never empty, duplicates kept. */
  segment(text: string): string[];
}

/** Options for createSegmenter. */
export interface SegmenterOptions {
  /** CJK segmenter to use; "jieba" (default) falls back to "intl" when it cannot load. */
  prefer?: 'jieba' | 'intl';
}

type CutCjk = (run: string) => Iterable<string>;

// A CJK run is Han ideographs (plus 〇 and the iteration mark 々) and Japanese kana; anything
// else made of letters, marks and digits is a word that needs no dictionary.
const CJK_CLASS = String.raw`[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}〇々ー]`;
const WORD_CHAR = String.raw`(?!${CJK_CLASS})[\p{L}\p{N}]`;
const RUN_PATTERN = new RegExp(String.raw`(${CJK_CLASS}+)|${WORD_CHAR}(?:(?!${CJK_CLASS})[\p{L}\p{M}\p{N}])*`, 'gu');
const HAS_WORD_CHAR = /[\p{L}\p{N}]/u;
const HAS_KANA = /[\p{Script=Hiragana}\p{Script=Katakana}]/u;

// Intl.Segmenter takes time quadratic in the length of the string it is given (about 0.2 s for
// 20 000 characters), so long CJK runs are fed to it in slices; a word cut at a slice edge
// becomes two tokens, which only affects unpunctuated runs longer than this.
const INTL_SLICE_CHARS = 200;

let jiebaCut: CutCjk | null | undefined;
let intlCut: CutCjk | undefined;
let defaultSegmenter: Segmenter | undefined;

/** Creates a segmenter; `name` reports whether jieba loaded or Intl.Segmenter is the fallback. */
export function createSegmenter(options: SegmenterOptions = {}): Segmenter {
  const jieba = options.prefer === 'intl' ? null : loadJieba();
  const name = jieba ? 'jieba' : 'intl';
  const cut = jieba ?? loadIntl();
  return { name, segment: (text) => segmentWith(text, cut) };
}

/** The search tokens of `text` joined by single spaces, for a full-text index column. */
export function segmentToString(text: string, segmenter: Segmenter = getDefaultSegmenter()): string {
  return segmenter.segment(text).join(' ');
}

function getDefaultSegmenter(): Segmenter {
  defaultSegmenter ??= createSegmenter();
  return defaultSegmenter;
}

function segmentWith(text: string, cutCjk: CutCjk): string[] {
  const tokens: string[] = [];
  const normalized = text.normalize('NFKC').toLowerCase();
  for (const match of globalMatches(RUN_PATTERN, normalized)) {
    if (match[1] === undefined) {
      tokens.push(match[0]);
      continue;
    }
    for (const word of cutCjk(match[1])) {
      // Segmenters may hand back whitespace or symbols they did not recognise.
      const trimmed = word.trim();
      if (trimmed.length > 0 && HAS_WORD_CHAR.test(trimmed)) tokens.push(trimmed);
    }
  }
  return tokens;
}

function loadJieba(): CutCjk | null {
  if (jiebaCut !== undefined) return jiebaCut;
  try {
    // Loaded lazily and synchronously: jieba is a native module whose default dictionary takes
    // about half a second to build, and a missing prebuilt binary must not break the import.
    const require = createRequire(import.meta.url);
    const { Jieba } = require('@node-rs/jieba') as typeof import('@node-rs/jieba');
    const { dict } = require('@node-rs/jieba/dict') as { dict: Uint8Array };
    const jieba = Jieba.withDict(dict);
    // jieba's dictionary is Chinese: it cuts Japanese kana into single characters, so runs
    // containing kana go to Intl.Segmenter, which knows Japanese.
    jiebaCut = (run) => (HAS_KANA.test(run) ? loadIntl()(run) : jieba.cutForSearch(run, true));
  } catch {
    jiebaCut = null;
  }
  return jiebaCut;
}

function loadIntl(): CutCjk {
  if (intlCut) return intlCut;
  const segmenter = new Intl.Segmenter('zh', { granularity: 'word' });
  intlCut = function* (run) {
    for (let start = 0; start < run.length; ) {
      let end = Math.min(start + INTL_SLICE_CHARS, run.length);
      const last = run.charCodeAt(end - 1);
      if (end < run.length && last >= 0xd800 && last <= 0xdbff) end += 1;
      for (const part of segmenter.segment(run.slice(start, end))) {
        if (part.isWordLike) yield part.segment;
      }
      start = end;
    }
  };
  return intlCut;
}
