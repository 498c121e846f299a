/**
 * Writes a stream of chunks into the object store: bytes are appended to the current chunk and
 * `cut()` ends it. Up to `maxInFlight` puts run at once (compression runs in the thread pool), so
 * memory stays bounded while the disk and the compressor overlap with reading. A chunk that
 * outgrows `spillBytes` (one enormous JSONL line) switches to a streaming put instead of being
 * buffered whole.
 */
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { ObjectInfo, ObjectStore } from '../../store/object-store.js';
import type { ManifestChunk } from './manifest.js';

/** Options of `ChunkSink`. */
export interface ChunkSinkOptions {
  /** Puts running at once (default 8). */
  maxInFlight?: number;
  /** A chunk larger than this is streamed into the store instead of buffered, bytes (default 1 MiB). */
  spillBytes?: number;
  /** Called for every stored chunk (also for deduplicated ones). */
  onStored?: (info: ObjectInfo) => void;
}

interface Streaming {
  pass: PassThrough;
  done: Promise<ObjectInfo>;
}

/** Ordered chunk writer for one stream. */
export class ChunkSink {
  readonly #store: ObjectStore;
  readonly #maxInFlight: number;
  readonly #spillBytes: number;
  readonly #onStored: ((info: ObjectInfo) => void) | undefined;
  readonly #chunks: (ManifestChunk | undefined)[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  #parts: Buffer[] = [];
  #partBytes = 0;
  #streaming: Streaming | undefined;
  #failure: unknown;
  #bytes = 0;

  constructor(store: ObjectStore, options: ChunkSinkOptions = {}) {
    this.#store = store;
    this.#maxInFlight = options.maxInFlight ?? 8;
    this.#spillBytes = options.spillBytes ?? 1 << 20;
    this.#onStored = options.onStored;
  }

  /** Bytes written so far. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Appends bytes to the current chunk. The buffer must not be modified afterwards. */
  async write(bytes: Buffer): Promise<void> {
    this.#check();
    if (bytes.length === 0) return;
    this.#bytes += bytes.length;
    if (this.#streaming) return this.#pipe(bytes);
    this.#parts.push(bytes);
    this.#partBytes += bytes.length;
    if (this.#partBytes > this.#spillBytes) {
      const pass = new PassThrough({ highWaterMark: 1 << 20 });
      this.#streaming = { pass, done: this.#store.putStream(pass) };
      const parts = this.#parts;
      this.#parts = [];
      this.#partBytes = 0;
      for (const part of parts) await this.#pipe(part);
    }
  }

  /** Ends the current chunk (a no-op when it is empty). */
  async cut(): Promise<void> {
    this.#check();
    const slot = this.#chunks.length;
    if (this.#streaming) {
      const { pass, done } = this.#streaming;
      this.#streaming = undefined;
      this.#chunks.push(undefined);
      pass.end();
      this.#record(slot, await done);
      return;
    }
    if (this.#partBytes === 0) return;
    const data = this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts, this.#partBytes);
    this.#parts = [];
    this.#partBytes = 0;
    this.#chunks.push(undefined);
    while (this.#inFlight.size >= this.#maxInFlight) await Promise.race(this.#inFlight);
    this.#check();
    const task: Promise<void> = this.#store.put(data).then(
      (info) => this.#record(slot, info),
      (error: unknown) => {
        this.#failure ??= error;
      },
    );
    const tracked = task.finally(() => this.#inFlight.delete(tracked));
    this.#inFlight.add(tracked);
  }

  /** Ends the last chunk, waits for every put, and returns the chunks in order. */
  async finish(): Promise<ManifestChunk[]> {
    await this.cut();
    await Promise.all(this.#inFlight);
    this.#check();
    return this.#chunks.map((c, i) => {
      if (!c) throw new Error(`chunk ${i} was never stored`);
      return c;
    });
  }

  /** Waits for puts in flight without reporting their failures (for cleanup after an error). */
  async settle(): Promise<void> {
    this.#streaming?.pass.destroy();
    await Promise.allSettled([...this.#inFlight, ...(this.#streaming ? [this.#streaming.done] : [])]);
  }

  #record(slot: number, info: ObjectInfo): void {
    this.#chunks[slot] = [info.hash, info.size];
    this.#onStored?.(info);
  }

  async #pipe(bytes: Buffer): Promise<void> {
    const streaming = this.#streaming!;
    if (!streaming.pass.write(bytes)) {
      // A failed put stops reading; its rejection ends the wait instead of a drain that never comes.
      await Promise.race([once(streaming.pass, 'drain'), streaming.done]);
    }
  }

  #check(): void {
    if (this.#failure !== undefined) throw this.#failure;
  }
}
