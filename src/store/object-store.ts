/**
 * The cold tier's content-addressed object store: immutable blobs named by the SHA-256 of their
 * uncompressed bytes, reference-counted by named holders and garbage-collected when no holder is
 * left. Drivers live in `drivers/` and all pass `test/contract/object-store.contract.ts`.
 */
import type { Readable } from 'node:stream';
import { UsageError } from '../errors.js';

/** Compression codec of one stored object. Each object records its own, so the default can change. */
export type ObjectCodecName = 'none' | 'gzip' | 'brotli';

/** Bytes a streaming put accepts: any async iterable of byte chunks, or a Node.js readable. */
export type ByteSource = AsyncIterable<Uint8Array> | NodeJS.ReadableStream;

/** What a put stored. */
export interface ObjectInfo {
  /** Lowercase hex SHA-256 of the uncompressed bytes; the object's address. */
  hash: string;
  /** Uncompressed size, bytes. */
  size: number;
  /** Bytes the object occupies in the backend (header and compression included). */
  storedSize: number;
  /** True when the object was already present and nothing new was written (deduplicated). */
  existed: boolean;
}

/** Metadata of a stored object, read without decompressing it. */
export interface ObjectStat {
  /** Lowercase hex SHA-256 of the uncompressed bytes. */
  hash: string;
  /** Uncompressed size, bytes. */
  size: number;
  /** Bytes the object occupies in the backend, bytes. */
  storedSize: number;
  /** Codec the stored bytes are compressed with. */
  codec: ObjectCodecName;
  /** When the object was last written or re-put (a deduplicated put refreshes it), Unix ms. */
  createdAtMs: number;
  /** Number of distinct holders currently referencing the object. */
  refCount: number;
}

/** Per-put options. */
export interface PutOptions {
  /** Codec for this object if it is new (default: the store's codec); e.g. 'none' for JPEG bytes. */
  codec?: ObjectCodecName;
  /**
   * `fast`: compress this object, if new, at its codec's fastest level (brotli 0 instead of the
   * default 1: ~20% less CPU for ~7% more bytes), for bulk writers on a hot path. Default: the
   * store's level. Drivers that do not compress ignore it.
   */
  effort?: 'fast' | 'default';
  /**
   * sha256 hex of `data` when the caller has just computed it (saves hashing twice on hot paths).
   * Trusted for the address; every read still verifies the content against it.
   */
  knownHash?: string;
  /**
   * Compress on the calling thread (blocking it ~3 ms per MiB at brotli-1) rather than in the
   * libuv thread pool (default false). For callers that bound their own concurrency: compression
   * state then lives in one allocator arena instead of one per pool thread, which keeps RSS
   * flat over long runs. Drivers that do not compress ignore it.
   */
  inline?: boolean;
  /**
   * Hash and compress on another thread, write on the calling thread (default false): for bulk
   * writers that go on with their own work meanwhile. Ignored with `knownHash` (nothing left to
   * hash) and by drivers that have no such thread.
   */
  offThread?: boolean;
}

/** Options of `delete`. */
export interface DeleteOptions {
  /** Delete even if holders reference the object, and drop their references (default false). */
  force?: boolean;
}

/** Options of `gc`. */
export interface GcOptions {
  /** Keep unreferenced objects written or re-put less than this long ago, ms (default 600 000). */
  graceMs?: number;
}

/** What a `gc` run did. */
export interface GcResult {
  /** Objects examined. */
  scanned: number;
  /** Objects deleted (unreferenced and older than the grace period). */
  deleted: number;
  /** Stored bytes released by the deleted objects, bytes. */
  freedBytes: number;
}

/** Default grace period of `gc`: 10 minutes, so a put whose `ref` is about to land survives. */
export const DEFAULT_GC_GRACE_MS = 10 * 60_000;

/** Longest holder id accepted by `ref`, in UTF-8 bytes. */
export const MAX_HOLDER_BYTES = 1024;

/**
 * A content-addressed blob store. Every method that takes a hash rejects anything but a lowercase
 * 64-character hex digest with a `UsageError` (code `E_USAGE`) before touching storage.
 */
export interface ObjectStore {
  /** Driver name, e.g. "fs". */
  readonly name: string;
  /** True when `putStream`/`getStream` run in bounded memory rather than buffering whole objects. */
  readonly supportsStreaming: boolean;
  /**
   * Stores `data` (a string as UTF-8) and returns its address; storing existing content is a no-op.
   * The store does not keep `data` once the returned promise settles (callers may reuse it).
   */
  put(data: string | Uint8Array, options?: PutOptions): Promise<ObjectInfo>;
  /**
   * Readies what puts with these options need, so a bulk writer's first put does not wait for it
   * (the fs store starts its `offThread` encoder, which takes tens of ms); cheap, idempotent, and
   * never keeps the process alive. A no-op where nothing needs readying.
   */
  prepare(options: PutOptions): void;
  /** Stores a byte stream, hashing while it streams, in bounded memory for any size. */
  putStream(source: ByteSource, options?: PutOptions): Promise<ObjectInfo>;
  /** The uncompressed bytes, hash-verified; `NotFoundError` naming the hash if absent, `IntegrityError` if corrupt. */
  get(hash: string): Promise<Buffer>;
  /** The uncompressed bytes as a stream, verified at the end; every failure is a stream error. */
  getStream(hash: string): Readable;
  /** True when the object is stored. */
  has(hash: string): Promise<boolean>;
  /** Metadata without decompressing, or undefined when absent. */
  stat(hash: string): Promise<ObjectStat | undefined>;
  /** Removes the object; true if it existed. Refuses (`E_CONFLICT`) while holders remain unless `force`. */
  delete(hash: string, options?: DeleteOptions): Promise<boolean>;
  /** Records that `holder` (e.g. "snapshot:<id>") needs the object; idempotent; `NotFoundError` if absent. */
  ref(hash: string, holder: string): Promise<void>;
  /**
   * `ref` for many objects and one holder, as one batch (cheaper than one `ref` each). All or
   * nothing: when an object is absent it throws `NotFoundError` and adds none of the references.
   */
  refMany(hashes: readonly string[], holder: string): Promise<void>;
  /** Drops `holder`'s reference; idempotent; true if that holder held it. */
  unref(hash: string, holder: string): Promise<boolean>;
  /** `unref` for many objects and one holder, as one batch; how many of them that holder held. */
  unrefMany(hashes: readonly string[], holder: string): Promise<number>;
  /** Holder ids currently referencing the object, sorted. */
  holders(hash: string): Promise<string[]>;
  /** Deletes objects with no holders that were written or re-put more than `graceMs` ago. */
  gc(options?: GcOptions): Promise<GcResult>;
  /** Every stored hash, in no guaranteed order. */
  list(): AsyncIterable<string>;
  /** Re-reads and re-hashes the object; `IntegrityError` on corruption, `NotFoundError` if absent. */
  verify(hash: string): Promise<void>;
  /** Makes every put and ref so far durable (a no-op for stores that are durable on each call). */
  flush(): Promise<void>;
  /** Addresses starting with `prefix` (at least 4 hex digits), sorted; for short references. */
  findByPrefix(prefix: string): Promise<string[]>;
}

/** Throws `E_USAGE` unless `holder` is a non-empty id of at most `MAX_HOLDER_BYTES` UTF-8 bytes. */
export function assertHolder(holder: unknown): asserts holder is string {
  if (typeof holder !== 'string' || holder.length === 0) {
    throw new UsageError(`invalid holder ${JSON.stringify(holder)}: expected a non-empty id such as "snapshot:<id>"`);
  }
  if (Buffer.byteLength(holder, 'utf8') > MAX_HOLDER_BYTES) {
    throw new UsageError(`invalid holder "${holder.slice(0, 40)}…": longer than ${MAX_HOLDER_BYTES} bytes`);
  }
}
