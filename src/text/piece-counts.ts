/**
 * Token counts of short pre-tokenizer pieces, found by their characters in the text: no string
 * is made for a piece already counted. A Map keyed by piece strings cost a slice and a string
 * hash a piece, most of what counting a text took once pieces were split by hand
 * (ascii-pieces.ts). When full, it starts over, as the Map did.
 */

import { fnv1aOfChars, foldHigh } from '../core/fnv.js';

const EMPTY = 0;

export class PieceCounts {
  /** Pieces longer than this are not kept. */
  readonly maxChars: number;
  readonly #maxEntries: number;
  /** Open addressing: entry + 1 by hash slot, EMPTY for none. */
  readonly #slots: Int32Array;
  readonly #mask: number;
  readonly #starts: Int32Array;
  readonly #lengths: Uint8Array;
  readonly #counts: Int32Array;
  /** The characters of every piece kept, one after another. */
  readonly #chars: Uint16Array;
  #entries = 0;
  #used = 0;
  /** Where the piece the last lookup missed would go. */
  #missedSlot = -1;

  constructor(maxEntries = 100_000, maxChars = 32) {
    this.maxChars = Math.min(maxChars, 255);
    this.#maxEntries = maxEntries;
    let size = 1;
    while (size < maxEntries * 2.5) size *= 2;
    this.#slots = new Int32Array(size);
    this.#mask = size - 1;
    this.#starts = new Int32Array(maxEntries);
    this.#lengths = new Uint8Array(maxEntries);
    this.#counts = new Int32Array(maxEntries);
    // pieces are a few characters on average: room for 8 each
    this.#chars = new Uint16Array(maxEntries * 8);
  }

  /** The count kept for `text[start, end)` (at most maxChars long), or -1. */
  lookup(text: string, start: number, end: number): number {
    const length = end - start;
    const chars = this.#chars;
    for (let slot = foldHigh(fnv1aOfChars(text, start, end)) & this.#mask; ; slot = (slot + 1) & this.#mask) {
      const entry = this.#slots[slot]!;
      if (entry === EMPTY) {
        this.#missedSlot = slot;
        return -1;
      }
      if (this.#lengths[entry - 1] !== length) continue;
      const from = this.#starts[entry - 1]!;
      let k = 0;
      while (k < length && chars[from + k] === text.charCodeAt(start + k)) k++;
      if (k === length) return this.#counts[entry - 1]!;
    }
  }

  /** Keeps the count of `text[start, end)`, which the last lookup missed. */
  remember(text: string, start: number, end: number, count: number): void {
    const length = end - start;
    if (this.#entries >= this.#maxEntries || this.#used + length > this.#chars.length) {
      this.#slots.fill(EMPTY);
      this.#entries = 0;
      this.#used = 0;
      this.lookup(text, start, end); // its slot in the emptied table
    }
    const entry = this.#entries++;
    const at = this.#used;
    for (let k = 0; k < length; k++) this.#chars[at + k] = text.charCodeAt(start + k);
    this.#used += length;
    this.#starts[entry] = at;
    this.#lengths[entry] = length;
    this.#counts[entry] = count;
    this.#slots[this.#missedSlot] = entry + 1;
  }
}
