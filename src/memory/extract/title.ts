/**
 * Cuts a task title out of a message: "记得下午三点要开项目评审会。" → 开项目评审会,
 * "remind me to call mom tomorrow at 5pm" → call mom. The date phrases found by the resolver
 * are cut first, then the language's leading fillers ("记得", "remind me to"), trailing
 * particles and punctuation, priority words, and dangling joiners, repeatedly until nothing
 * changes. A change request (complete, update, delete) also loses its verb phrase
 * ("把写周报标记为完成" → 写周报), leaving the name of the task it is about.
 */
import type { TitleRules } from './rule-types.js';

/** Longest title kept, in UTF-16 code units; longer ones are cut at a word or character. */
export const MAX_TITLE_CHARS = 120;

/** A [start, end) range of the message, UTF-16 code units. */
export type TextRange = readonly [number, number];

const MAX_ROUNDS = 8;
const WORD_CHAR = /[A-Za-z0-9]/;
const caseless = new WeakMap<RegExp, RegExp>();

/**
 * The title left after removing `cut` ranges and the rules' fillers; '' when nothing is left.
 * `forChange` also applies the change-request patterns (TitleRules.target).
 */
export function cutTitle(text: string, cut: readonly TextRange[], rules: TitleRules, forChange: boolean): string {
  let title = removeRanges(text, cut.map((range) => withCues(text, range, rules)));
  const leading = forChange ? [...rules.target, ...rules.leading] : rules.leading;
  const trailing = forChange ? [...rules.target, ...rules.trailing] : rules.trailing;
  for (const pattern of rules.anywhere) title = title.replace(ci(pattern), ' ');
  title = tidy(title);
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    const before = title;
    for (const pattern of leading) title = without(title, pattern);
    for (const pattern of trailing) title = without(title, pattern);
    title = without(title, rules.dangling);
    if (title === before) break;
  }
  return clip(title);
}

/**
 * `title` (tidy) without what `pattern` matches, tidied. Most patterns match nothing, and tidying
 * an unchanged title gives it back (`tidy` is idempotent): only a changed one is tidied again.
 */
function without(title: string, pattern: RegExp): string {
  const cut = title.replace(ci(pattern), '');
  return cut === title ? title : tidy(cut);
}

/** A fallback title for a message whose title cut to nothing ("set an alarm for 7am" → alarm). */
export function fallbackTitle(text: string, rules: TitleRules): string {
  for (const [pattern, title] of rules.fallback) if (ci(pattern).test(text)) return title;
  return clip(tidy(text.replace(/[\s。！？!?，,；;.]+$/, '')));
}

/** Widens a date phrase's range over its deadline cue ("by Friday", "周五前"). */
function withCues(text: string, [start, end]: TextRange, rules: TitleRules): TextRange {
  const before = ci(rules.dateCue.before).exec(text.slice(Math.max(0, start - 16), start));
  const after = ci(rules.dateCue.after).exec(text.slice(end, end + 8));
  return [start - (before?.[0].length ?? 0), end + (after?.[0].length ?? 0)];
}

function removeRanges(text: string, ranges: readonly TextRange[]): string {
  if (ranges.length === 0) return text;
  let out = '';
  let cursor = 0;
  for (const [start, end] of [...ranges].sort((a, b) => a[0] - b[0])) {
    if (start < cursor) continue;
    // Joining two Latin words needs a space; joining Han text must not add one.
    const joint = WORD_CHAR.test(text[start - 1] ?? '') && WORD_CHAR.test(text[end] ?? '') ? ' ' : '';
    out += text.slice(cursor, start) + joint;
    cursor = end;
  }
  return out + text.slice(cursor);
}

/** Collapses whitespace and trims separators at the ends. */
function tidy(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .replace(/^[\s,，、;；:：.。!！?？\-–—]+/, '')
    .trim();
}

function clip(title: string): string {
  if (title.length <= MAX_TITLE_CHARS) return title;
  const cut = title.slice(0, MAX_TITLE_CHARS);
  const space = cut.lastIndexOf(' ');
  const end = space > MAX_TITLE_CHARS / 2 ? space : /[\uD800-\uDBFF]$/.test(cut) ? MAX_TITLE_CHARS - 1 : MAX_TITLE_CHARS;
  return `${title.slice(0, end).trimEnd()}…`;
}

/** The rules are written in lower case; titles keep the user's case, so match without it. */
function ci(pattern: RegExp): RegExp {
  if (pattern.flags.includes('i')) return pattern;
  let cached = caseless.get(pattern);
  if (!cached) {
    cached = new RegExp(pattern.source, `${pattern.flags}i`);
    caseless.set(pattern, cached);
  }
  cached.lastIndex = 0;
  return cached;
}
