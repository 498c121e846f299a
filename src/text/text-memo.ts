/**
 * A bounded memo keyed by short texts (token counts, analyzer terms). Texts that come back again
 * and again — the lines of a context rebuilt for every message, task titles, the system prompt —
 * are then worked out once. Bounded by total characters, oldest entry out first, so its memory
 * stays small whatever passes through it.
 */

/** Options of `createTextMemo`. */
export interface TextMemoOptions {
  /** Longer texts are not remembered, UTF-16 code units (default 2 048). */
  maxTextChars?: number;
  /** Characters kept across all entries (texts plus `weigh` of their values), UTF-16 code units (default 1 048 576, about 2 MiB). */
  maxTotalChars?: number;
}

/** A bounded text → value memo. */
export interface TextMemo<V> {
  /** The value remembered for `text`, or undefined. */
  get(text: string): V | undefined;
  /** Remembers `value` for `text` (ignored when `text` is too long). */
  set(text: string, value: V): void;
  /** Entries held. */
  readonly size: number;
}

/** Default longest text remembered, UTF-16 code units. */
export const DEFAULT_MEMO_TEXT_CHARS = 2048;
/** Default characters held by one memo, UTF-16 code units. */
export const DEFAULT_MEMO_TOTAL_CHARS = 1 << 20;

/**
 * Creates a memo. `weigh` is the size of a value in characters (default 0, for numbers).
 * Eviction is first-in first-out, which keeps `get` a plain map lookup.
 */
export function createTextMemo<V>(options: TextMemoOptions = {}, weigh: (value: V) => number = () => 0): TextMemo<V> {
  const maxText = options.maxTextChars ?? DEFAULT_MEMO_TEXT_CHARS;
  const maxTotal = Math.max(maxText, options.maxTotalChars ?? DEFAULT_MEMO_TOTAL_CHARS);
  const entries = new Map<string, { value: V; chars: number }>();
  let chars = 0;
  return {
    get: (text) => (text.length <= maxText ? entries.get(text)?.value : undefined),
    set(text, value) {
      if (text.length > maxText || entries.has(text)) return;
      const size = text.length + weigh(value);
      chars += size;
      entries.set(text, { value, chars: size });
      if (chars <= maxTotal) return;
      // Map iterates in insertion order: the first keys are the oldest.
      for (const [old, entry] of entries) {
        if (chars <= maxTotal) break;
        entries.delete(old);
        chars -= entry.chars;
      }
    },
    get size() {
      return entries.size;
    },
  };
}
