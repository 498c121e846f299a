/**
 * Content-defined chunking that cuts only at line ends. A gear hash rolls over the bytes (each
 * step shifts the hash left and adds a random value for the byte, so the top bits depend on the
 * last 32 bytes); when its top bits are all zero past the minimum size — or the maximum size is
 * reached — a cut is due, and it happens after the next '\n'. Cut points therefore depend only on
 * nearby content, never on offsets, so a session that grows by appending keeps every earlier
 * chunk, and a chunk is always whole JSONL lines. FastCDC's normalisation is used: a harder mask
 * below the average size and an easier one above it, which narrows the size spread.
 *
 * A single line longer than the maximum is one chunk (lines are indivisible); callers stream such
 * chunks instead of buffering them.
 */

/** Smallest chunk, bytes (except the last one of a file). */
export const CHUNK_MIN_BYTES = 16 * 1024;
/** Target average chunk size, bytes (a power of two). */
export const CHUNK_AVG_BYTES = 64 * 1024;
/** Size after which a cut is forced at the next line end, bytes. */
export const CHUNK_MAX_BYTES = 256 * 1024;
/** Name and version of the algorithm, recorded in manifests (the gear table below is part of it). */
export const LINE_CHUNKER_ID = 'gear-lines/1';

const LF = 0x0a;

/** Chunk size limits, bytes. */
export interface ChunkSizes {
  minBytes: number;
  avgBytes: number;
  maxBytes: number;
}

/** The 256 gear values: a fixed splitmix32 sequence. Changing them changes every cut point. */
const GEAR: Int32Array = (() => {
  const table = new Int32Array(256);
  let state = 0x2545f491;
  for (let i = 0; i < 256; i++) {
    state = (state + 0x9e3779b9) | 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    table[i] = z ^ (z >>> 16);
  }
  return table;
})();

/** A mask of the top `bits` bits of a 32-bit word, as a signed 32-bit integer. */
function topBits(bits: number): number {
  return bits >= 32 ? -1 : ~((1 << (32 - bits)) - 1) | 0;
}

/** Streaming cut-point finder. Feed blocks in order; each call returns where chunks end in that block. */
export class LineChunker {
  readonly sizes: ChunkSizes;
  readonly #maskSmall: number;
  readonly #maskLarge: number;
  #length = 0; // bytes of the current chunk so far
  #hash = 0;
  #due = false; // a cut point was found; cut at the next line end

  constructor(sizes: Partial<ChunkSizes> = {}) {
    const s = { minBytes: CHUNK_MIN_BYTES, avgBytes: CHUNK_AVG_BYTES, maxBytes: CHUNK_MAX_BYTES, ...sizes };
    if (!(s.minBytes >= 0 && s.minBytes <= s.avgBytes && s.avgBytes <= s.maxBytes) || !Number.isInteger(Math.log2(s.avgBytes))) {
      throw new RangeError(`invalid chunk sizes ${JSON.stringify(s)}: need min <= avg <= max and avg a power of two`);
    }
    this.sizes = s;
    const bits = Math.log2(s.avgBytes);
    this.#maskSmall = topBits(bits);
    this.#maskLarge = topBits(Math.max(1, bits - 2));
  }

  /** Bytes of the chunk in progress (not yet cut). */
  get pendingBytes(): number {
    return this.#length;
  }

  /** Offsets in `block` just past each cut (so `block.subarray(prev, cut)` ends a chunk), ascending. */
  push(block: Uint8Array): number[] {
    const cuts: number[] = [];
    const n = block.length;
    const { minBytes, avgBytes, maxBytes } = this.sizes;
    let length = this.#length;
    let hash = this.#hash;
    let due = this.#due;
    let i = 0;
    while (i < n) {
      if (due) {
        const nl = block.indexOf(LF, i);
        if (nl === -1) {
          length += n - i;
          break;
        }
        i = nl + 1;
        cuts.push(i);
        length = 0;
        hash = 0;
        due = false;
        continue;
      }
      if (length < minBytes) {
        // Cut-point skipping: nothing before the minimum can be a cut, so do not hash it.
        const skip = Math.min(minBytes - length, n - i);
        length += skip;
        i += skip;
        continue;
      }
      while (i < n) {
        hash = ((hash << 1) + GEAR[block[i]!]!) | 0;
        i++;
        length++;
        if ((hash & (length < avgBytes ? this.#maskSmall : this.#maskLarge)) === 0 || length >= maxBytes) {
          due = true;
          break;
        }
      }
      if (due && block[i - 1] === LF) {
        cuts.push(i);
        length = 0;
        hash = 0;
        due = false;
      }
    }
    this.#length = length;
    this.#hash = hash;
    this.#due = due;
    return cuts;
  }
}
