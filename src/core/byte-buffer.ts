/**
 * A growable byte buffer for hot paths that assemble large objects from many small pieces: bytes
 * are copied once, into place, instead of collected in arrays and concatenated.
 */

/** An append-only byte buffer that doubles its capacity as needed. */
export class ByteBuffer {
  #buf: Buffer;
  #length = 0;
  readonly #initialCapacity: number;

  /** `capacity`: bytes allocated up front (default 64 KiB). */
  constructor(capacity = 64 * 1024) {
    this.#initialCapacity = Math.max(16, capacity);
    this.#buf = Buffer.allocUnsafeSlow(this.#initialCapacity);
  }

  /** Bytes written so far. */
  get length(): number {
    return this.#length;
  }

  /** Makes room for `extra` more bytes. */
  ensure(extra: number): void {
    const need = this.#length + extra;
    if (need <= this.#buf.length) return;
    let capacity = this.#buf.length * 2;
    while (capacity < need) capacity *= 2;
    const next = Buffer.allocUnsafeSlow(capacity);
    this.#buf.copy(next, 0, 0, this.#length);
    this.#buf = next;
  }

  /** Appends `src[start, end)`. */
  append(src: Uint8Array, start = 0, end = src.length): void {
    const n = end - start;
    if (n <= 0) return;
    this.ensure(n);
    if (Buffer.isBuffer(src)) src.copy(this.#buf, this.#length, start, end);
    else this.#buf.set(src.subarray(start, end), this.#length);
    this.#length += n;
  }

  /** Appends one byte. */
  appendByte(byte: number): void {
    this.ensure(1);
    this.#buf[this.#length++] = byte;
  }

  /** Drops everything after the first `length` bytes. */
  truncate(length: number): void {
    if (length < this.#length) this.#length = Math.max(0, length);
  }

  /** The byte at `index` (no bounds check beyond the buffer's own). */
  at(index: number): number {
    return this.#buf[index]!;
  }

  /** A view of the bytes written so far (valid until the next write or `take`). */
  view(start = 0, end = this.#length): Buffer {
    return this.#buf.subarray(start, end);
  }

  /** Bytes allocated now. */
  get capacity(): number {
    return this.#buf.length;
  }

  /**
   * Hands over the bytes written so far and starts again, empty, in `next` (a buffer the caller
   * recycles; it must not be in use elsewhere) or a fresh allocation.
   */
  take(next?: Buffer): Buffer {
    const out = this.#buf.subarray(0, this.#length);
    this.#buf = next ?? Buffer.allocUnsafeSlow(this.#initialCapacity);
    this.#length = 0;
    return out;
  }
}
