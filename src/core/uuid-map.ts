/**
 * A compact map from ids to small values, for indexes that must cover every line of a file of
 * hundreds of MB: a canonical lowercase UUID key is kept as 16 bytes in an open-addressing table
 * of typed arrays (~40 bytes an entry instead of ~150 for a `Map` of strings); any other key
 * falls back to an ordinary `Map`. Values are interned, since such maps hold few distinct ones.
 */

const EMPTY = -1;

/** Parses a canonical lowercase 8-4-4-4-12 UUID into `out` (4 words); false for anything else. */
function parseUuid(s: string, out: Uint32Array): boolean {
  if (s.length !== 36) return false;
  let word = 0;
  let w = 0;
  let digits = 0;
  for (let i = 0; i < 36; i++) {
    const c = s.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 0x2d) return false;
      continue;
    }
    let v: number;
    if (c >= 0x30 && c <= 0x39) v = c - 0x30;
    else if (c >= 0x61 && c <= 0x66) v = c - 0x57;
    else return false;
    word = ((word << 4) | v) >>> 0;
    if (++digits === 8) {
      out[w++] = word;
      word = 0;
      digits = 0;
    }
  }
  return true;
}

/** A map from ids (UUIDs stored compactly) to values of type `V`. */
export class CompactIdMap<V> {
  #keys = new Uint32Array(4 * 1024);
  #slots = new Int32Array(1024).fill(EMPTY);
  #size = 0;
  readonly #others = new Map<string, number>();
  readonly #values: V[] = [];
  readonly #valueIndex = new Map<V, number>();
  readonly #probe = new Uint32Array(4);

  /** Entries in the map. */
  get size(): number {
    return this.#size + this.#others.size;
  }

  #intern(value: V): number {
    let i = this.#valueIndex.get(value);
    if (i === undefined) {
      i = this.#values.length;
      this.#values.push(value);
      this.#valueIndex.set(value, i);
    }
    return i;
  }

  /** Slot of the probed key, or of the empty slot where it would go. */
  #find(k: Uint32Array): number {
    const mask = this.#slots.length - 1;
    let h = Math.imul(k[0]! ^ Math.imul(k[1]!, 0x9e3779b1) ^ Math.imul(k[2]!, 0x85ebca6b) ^ Math.imul(k[3]!, 0xc2b2ae35), 0x27d4eb2d);
    h = (h ^ (h >>> 15)) & mask;
    for (;;) {
      if (this.#slots[h] === EMPTY) return h;
      const at = h * 4;
      if (this.#keys[at] === k[0] && this.#keys[at + 1] === k[1] && this.#keys[at + 2] === k[2] && this.#keys[at + 3] === k[3]) return h;
      h = (h + 1) & mask;
    }
  }

  #grow(): void {
    const keys = this.#keys;
    const slots = this.#slots;
    this.#keys = new Uint32Array(keys.length * 2);
    this.#slots = new Int32Array(slots.length * 2).fill(EMPTY);
    const k = new Uint32Array(4);
    for (let s = 0; s < slots.length; s++) {
      if (slots[s] === EMPTY) continue;
      k.set(keys.subarray(s * 4, s * 4 + 4));
      const h = this.#find(k);
      this.#keys.set(k, h * 4);
      this.#slots[h] = slots[s]!;
    }
  }

  /** Sets `key` to `value` (replacing an earlier value). */
  set(key: string, value: V): void {
    const v = this.#intern(value);
    if (!parseUuid(key, this.#probe)) {
      this.#others.set(key, v);
      return;
    }
    let h = this.#find(this.#probe);
    if (this.#slots[h] === EMPTY) {
      if ((this.#size + 1) * 2 > this.#slots.length) {
        this.#grow();
        h = this.#find(this.#probe);
      }
      this.#keys.set(this.#probe, h * 4);
      this.#size++;
    }
    this.#slots[h] = v;
  }

  /** True when `key` is in the map. */
  has(key: string): boolean {
    if (!parseUuid(key, this.#probe)) return this.#others.has(key);
    return this.#slots[this.#find(this.#probe)] !== EMPTY;
  }

  /** The value of `key`, or undefined. */
  get(key: string): V | undefined {
    let v: number | undefined;
    if (!parseUuid(key, this.#probe)) v = this.#others.get(key);
    else {
      const slot = this.#slots[this.#find(this.#probe)]!;
      v = slot === EMPTY ? undefined : slot;
    }
    return v === undefined ? undefined : this.#values[v];
  }
}
