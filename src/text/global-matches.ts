/**
 * The matches of a global regular expression, as `String.prototype.matchAll` finds them, without
 * the copy of the expression `matchAll` makes on every call (V8 builds and initialises a new
 * RegExp object each time: measured ~0.2 µs against ~0.07 µs for one short text, and the date
 * rules alone ran it about 30 times per message).
 */

/** Every match of `pattern` (which must have the g flag) in `text`, in order. */
export function globalMatches(pattern: RegExp, text: string): RegExpExecArray[] {
  if (!pattern.global) throw new TypeError(`globalMatches: ${String(pattern)} must have the g flag`);
  const matches: RegExpExecArray[] = [];
  pattern.lastIndex = 0;
  try {
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      matches.push(match);
      // An empty match does not move lastIndex: step over one character (a code point with u/v).
      if (match[0] === '') pattern.lastIndex = advance(text, pattern.lastIndex, pattern.unicode || pattern.flags.includes('v'));
    }
  } finally {
    pattern.lastIndex = 0;
  }
  return matches;
}

function advance(text: string, index: number, unicode: boolean): number {
  if (!unicode || index + 1 >= text.length) return index + 1;
  const code = text.charCodeAt(index);
  if (code < 0xd800 || code > 0xdbff) return index + 1;
  const next = text.charCodeAt(index + 1);
  return next >= 0xdc00 && next <= 0xdfff ? index + 2 : index + 1;
}
