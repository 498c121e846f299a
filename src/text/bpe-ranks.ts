/**
 * o200k_base's merge ranks in a few typed arrays, read from the tiktoken file gpt-tokenizer ships
 * (`data/o200k_base.tiktoken`: one "base64-bytes rank" line per token). Its JavaScript table holds
 * the same ranks as 200,000 strings: compiling it and keying a Map by them took ~0.3 s and ~70 MB
 * of RSS, paid by every command that shows an exact count. Here the tokens' bytes lie in one
 * buffer and an open-addressing table finds them by hash: ~5 MB, built in a few tens of ms.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fnv1a, fnv1aOfChars, foldHigh } from '../core/fnv.js';

/** Ranks of byte strings ("binary strings": one char, 0-255, per byte). */
export interface RankTable {
  /** Rank of the two-byte token (b0 << 8 | b1), or -1: the first merges of every piece. */
  readonly pairs: Int32Array;
  /** Rank of `bytes[start, end)`, or -1 when it is not a token. */
  rankOf(bytes: string, start: number, end: number): number;
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const PAD = 0x3d; // '='
const SPACE = 0x20;
const LF = 0x0a;

class TypedRankTable implements RankTable {
  readonly pairs = new Int32Array(65_536).fill(-1);
  /** Every token's bytes, one after another; token t is blob[starts[t], starts[t + 1]). */
  readonly #blob: Uint8Array;
  readonly #starts: Int32Array;
  readonly #ranks: Int32Array;
  /** Open addressing: token index + 1 by hash slot, 0 for empty. */
  readonly #slots: Int32Array;
  readonly #mask: number;

  constructor(file: Buffer) {
    let lines = 1;
    for (let i = file.indexOf(LF); i !== -1; i = file.indexOf(LF, i + 1)) lines++;
    const decode = new Int8Array(256).fill(-1);
    for (let i = 0; i < BASE64.length; i++) decode[BASE64.charCodeAt(i)] = i;
    const blob = new Uint8Array(Math.ceil((file.length * 3) / 4));
    this.#blob = blob;
    this.#starts = new Int32Array(lines + 1);
    this.#ranks = new Int32Array(lines);
    let size = 1;
    while (size < lines * 2) size *= 2;
    this.#slots = new Int32Array(size);
    this.#mask = size - 1;
    let tokens = 0;
    let at = 0;
    for (let i = 0; i < file.length; ) {
      let end = file.indexOf(LF, i);
      if (end === -1) end = file.length;
      const space = file.indexOf(SPACE, i);
      if (space === -1 || space > end) {
        if (end > i) throw new Error(`o200k_base.tiktoken: line ${tokens + 1} is not "bytes rank"`);
        i = end + 1;
        continue;
      }
      // base64: four characters to three bytes
      let bits = 0;
      let held = 0;
      for (let j = i; j < space; j++) {
        const c = file[j]!;
        if (c === PAD) break;
        const v = decode[c]!;
        if (v < 0) throw new Error(`o200k_base.tiktoken: line ${tokens + 1} has a bad base64 character`);
        bits = ((bits << 6) | v) & 0xffffff;
        held += 6;
        if (held >= 8) {
          held -= 8;
          blob[at++] = (bits >> held) & 0xff;
        }
      }
      let rank = 0;
      for (let j = space + 1; j < end; j++) {
        const digit = file[j]! - 0x30;
        if (digit < 0 || digit > 9) break; // a CR before the LF
        rank = rank * 10 + digit;
      }
      this.#ranks[tokens] = rank;
      this.#starts[tokens + 1] = at;
      tokens++;
      i = end + 1;
    }
    for (let t = 0; t < tokens; t++) {
      const start = this.#starts[t]!;
      const end = this.#starts[t + 1]!;
      if (end - start === 2) {
        this.pairs[(this.#blob[start]! << 8) | this.#blob[start + 1]!] = this.#ranks[t]!;
        continue;
      }
      let slot = foldHigh(fnv1a(this.#blob, start, end)) & this.#mask;
      while (this.#slots[slot] !== 0) slot = (slot + 1) & this.#mask;
      this.#slots[slot] = t + 1;
    }
  }

  rankOf(bytes: string, start: number, end: number): number {
    const length = end - start;
    if (length === 2) return this.pairs[(bytes.charCodeAt(start) << 8) | bytes.charCodeAt(start + 1)]!;
    const blob = this.#blob;
    const starts = this.#starts;
    for (let slot = foldHigh(fnv1aOfChars(bytes, start, end)) & this.#mask; ; slot = (slot + 1) & this.#mask) {
      const entry = this.#slots[slot]!;
      if (entry === 0) return -1;
      const from = starts[entry - 1]!;
      if (starts[entry]! - from !== length) continue;
      let same = true;
      for (let k = 0; k < length; k++) {
        if (blob[from + k] !== bytes.charCodeAt(start + k)) {
          same = false;
          break;
        }
      }
      if (same) return this.#ranks[entry - 1]!;
    }
  }
}

/** Reads o200k_base's ranks from gpt-tokenizer's tiktoken file. */
export function loadO200kRanks(): RankTable {
  const require = createRequire(import.meta.url);
  return new TypedRankTable(readFileSync(require.resolve('gpt-tokenizer/data/o200k_base.tiktoken')));
}
