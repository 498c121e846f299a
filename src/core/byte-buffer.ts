/**
 * A growable byte buffer for hot paths that assemble large objects from many small pieces: bytes
 * are copied once, into place, instead of collected in arrays and concatenated.
 */

/** Pieces up to this many bytes are copied byte by byte (see `append`). */
const SMALL_COPY = 64;

/** An append-only byte buffer that doubles its capacity as needed. */
export class ByteBuffer {
  #buf: Buffer;
  #length = 0;
  readonly #initialCapacity: number;
  readonly #shared: boolean;

  /**
   * `capacity`: bytes allocated up front (default 64 KiB). `shared`: in SharedArrayBuffers, so
   * another thread can read what is taken without a copy.
   */
  constructor(capacity = 64 * 1024, options: { shared?: boolean } = {}) {
    this.#initialCapacity = Math.max(16, capacity);
    this.#shared = options.shared === true;
    this.#buf = this.#allocate(this.#initialCapacity);
  }

  #allocate(bytes: number): Buffer {
    return this.#shared ? Buffer.from(new SharedArrayBuffer(bytes)) : Buffer.allocUnsafeSlow(bytes);
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
    const next = this.#allocate(capacity);
    this.#buf.copy(next, 0, 0, this.#length);
    this.#buf = next;
  }

  /** Appends `src[start, end)`. */
  append(src: Uint8Array, start = 0, end = src.length): void {
    const n = end - start;
    if (n <= 0) return;
    this.ensure(n);
    const buf = this.#buf;
    if (n <= SMALL_COPY) {
      // a call into the runtime costs more than copying a few bytes here
      const at = this.#length;
      for (let k = 0; k < n; k++) buf[at + k] = src[start + k]!;
    } else if (Buffer.isBuffer(src)) src.copy(buf, this.#length, start, end);
    else buf.set(src.subarray(start, end), this.#length);
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
    this.#buf = next ?? this.#allocate(this.#initialCapacity);
    this.#length = 0;
    return out;
  }
}
