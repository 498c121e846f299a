/**
 * Byte-pair-encoding token counter for OpenAI's o200k_base, using gpt-tokenizer's ranks (its
 * tiktoken file, read by bpe-ranks.ts) and pre-tokenizer regex but its own merge loop. gpt-tokenizer decodes a byte array to a string
 * for every candidate pair, which makes unique pieces (identifiers, base64, hashes) cost tens of
 * microseconds each, and its merge is quadratic in the piece length; here ranks are looked up by
 * "binary strings" (one char per byte), short pieces use the array merge and long ones a heap,
 * so counting is exact and O(n log n) for any input.
 */
import { createRequire } from 'node:module';
import { loadO200kRanks, type RankTable } from './bpe-ranks.js';

/** Counts o200k_base tokens of one pre-tokenized piece. */
export interface BpeCounter {
  /** Splits text into pieces; global, so reset lastIndex before use. */
  readonly splitRegex: RegExp;
  /** Tokens in one piece produced by splitRegex. */
  countPiece(piece: string): number;
}

// Above this many bytes a piece is merged with a heap instead of rescanning an array.
const HEAP_THRESHOLD_BYTES = 48;
const NO_RANK = Number.POSITIVE_INFINITY;
const POSITION_RANGE = 4_294_967_296; // heap keys pack rank * 2^32 + byte position

let cached: BpeCounter | undefined;

/** The rank of bytes[start, end), or NO_RANK. */
function rankOf(ranks: RankTable, bytes: string, start: number, end: number): number {
  const rank = ranks.rankOf(bytes, start, end);
  return rank < 0 ? NO_RANK : rank;
}

/** Loads the o200k_base ranks on first use and returns the shared counter. */
export function loadO200kCounter(): BpeCounter {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  const { O200K_TOKEN_SPLIT_REGEX } = require('gpt-tokenizer/encodingParams/constants') as { O200K_TOKEN_SPLIT_REGEX: RegExp };
  const ranks = loadO200kRanks();
  const count = (bytes: string) => countBinary(bytes, ranks);
  cached = {
    // A private copy: the library's regex object is global (/g) and shared with its encoder.
    splitRegex: new RegExp(O200K_TOKEN_SPLIT_REGEX.source, O200K_TOKEN_SPLIT_REGEX.flags),
    countPiece: (piece) => count(toBinary(piece)),
  };
  return cached;
}

/** The UTF-8 bytes of `text` as a string with one char (0-255) per byte. */
function toBinary(text: string): string {
  // ASCII is its own UTF-8; checking is much cheaper than encoding.
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0x7f) return Buffer.from(text, 'utf8').toString('latin1');
  }
  return text;
}

function countBinary(bytes: string, ranks: RankTable): number {
  if (bytes.length <= 1) return bytes.length;
  if (rankOf(ranks, bytes, 0, bytes.length) !== NO_RANK) return 1;
  return bytes.length <= HEAP_THRESHOLD_BYTES ? mergeWithArray(bytes, ranks) : mergeWithHeap(bytes, ranks);
}

/** tiktoken's merge loop: repeatedly join the adjacent pair with the lowest rank (leftmost on ties). */
function mergeWithArray(bytes: string, ranks: RankTable): number {
  const starts: number[] = [];
  for (let i = 0; i <= bytes.length; i++) starts.push(i);
  // pairRanks[i] is the rank of parts i and i+1 joined, i.e. bytes[starts[i], starts[i + 2]).
  const pairRank = (i: number) => (i + 2 < starts.length ? rankOf(ranks, bytes, starts[i]!, starts[i + 2]!) : NO_RANK);
  const pairRanks: number[] = [];
  for (let i = 0; i + 1 < starts.length; i++) pairRanks.push(pairRank(i));
  for (;;) {
    let best = NO_RANK;
    let at = -1;
    for (let i = 0; i < pairRanks.length; i++) {
      if (pairRanks[i]! < best) {
        best = pairRanks[i]!;
        at = i;
      }
    }
    if (at === -1) break;
    starts.splice(at + 1, 1);
    pairRanks.splice(at + 1, 1);
    pairRanks[at] = pairRank(at);
    if (at > 0) pairRanks[at - 1] = pairRank(at - 1);
  }
  return starts.length - 1;
}

/** The same merge order as mergeWithArray, in O(n log n): parts form a linked list, pairs a heap. */
function mergeWithHeap(bytes: string, ranks: RankTable): number {
  const n = bytes.length;
  // Part p starts at byte p; next[p] is the start of the following part (n at the end).
  const next = new Int32Array(n + 1);
  const prev = new Int32Array(n + 1);
  const alive = new Uint8Array(n).fill(1);
  const rankAt = new Float64Array(n);
  for (let p = 0; p <= n; p++) {
    next[p] = p + 1;
    prev[p] = p - 1;
  }
  const heap = new MinHeap();
  const rankOfPair = (p: number) => {
    const second = next[p]!;
    if (second >= n) return NO_RANK;
    return rankOf(ranks, bytes, p, next[second]!);
  };
  const refresh = (p: number) => {
    const rank = rankOfPair(p);
    rankAt[p] = rank;
    if (rank !== NO_RANK) heap.push(rank * POSITION_RANGE + p);
  };
  for (let p = 0; p < n; p++) refresh(p);
  let parts = n;
  while (heap.size > 0) {
    const key = heap.pop();
    const rank = Math.floor(key / POSITION_RANGE);
    const p = key - rank * POSITION_RANGE;
    // Stale entries: the part was merged away, or its pair changed since this entry was pushed.
    if (!alive[p] || rankAt[p] !== rank) continue;
    const second = next[p]!;
    alive[second] = 0;
    next[p] = next[second]!;
    prev[next[second]!] = p;
    parts--;
    refresh(p);
    if (prev[p]! >= 0) refresh(prev[p]!);
  }
  return parts;
}

/** A binary min-heap of numbers. */
class MinHeap {
  private readonly items: number[] = [];

  get size(): number {
    return this.items.length;
  }

  push(value: number): void {
    const items = this.items;
    let i = items.push(value) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]! <= value) break;
      items[i] = items[parent]!;
      i = parent;
    }
    items[i] = value;
  }

  pop(): number {
    const items = this.items;
    const top = items[0]!;
    const last = items.pop()!;
    if (items.length > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= items.length) break;
        const right = left + 1;
        const child = right < items.length && items[right]! < items[left]! ? right : left;
        if (items[child]! >= last) break;
        items[i] = items[child]!;
        i = child;
      }
      items[i] = last;
    }
    return top;
  }
}
