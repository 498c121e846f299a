/**
 * Which language's rules read a message. Mixed messages are common ("帮我 review 一下 PR"), so the
 * choice counts Han characters against Latin words: a message is Chinese when it has at least
 * one Han character for every Latin word (a Chinese word averages about 1.5 characters), so a
 * Chinese sentence naming English products stays Chinese and an English one quoting a Chinese
 * name ("remind me to call 王伟 tomorrow") stays English.
 */

/** The languages the rule tables cover. */
export type RuleLanguage = 'zh' | 'en';

const HAN = /\p{Script=Han}/gu;
const LATIN_WORD = /[A-Za-z]+(?:['’][A-Za-z]+)*/g;

/** Detects the language of `text`; text with neither script (empty, emoji, digits) is English. */
export function detectLanguage(text: string): RuleLanguage {
  const han = countMatches(text, HAN);
  if (han === 0) return 'en';
  return han >= countMatches(text, LATIN_WORD) ? 'zh' : 'en';
}

function countMatches(text: string, pattern: RegExp): number {
  let count = 0;
  pattern.lastIndex = 0;
  while (pattern.exec(text) !== null) count += 1;
  return count;
}
