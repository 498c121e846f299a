/**
 * Pipelined writes into the object store for the trimmer's hot path: the hash is computed on the
 * spot (the caller needs it for the annotation), the compressed write runs in the background,
 * and the number of bytes in flight is bounded so memory stays flat.
 */
import { sha256Hex } from '../../core/hash.js';
import type { ObjectStore } from '../../store/object-store.js';

export interface ObjectSink {
  /** Schedules `bytes` for storage and returns its address at once; waits only when too much is in flight. */
  put(bytes: Buffer, knownHash?: string): Promise<string>;
  /** Every address written so far (for reference counting). */
  readonly hashes: ReadonlySet<string>;
  /** Bytes handed to the sink (uncompressed). */
  readonly bytes: number;
  /** Resolves when every scheduled write is durable; rejects with the first failure. */
  drain(): Promise<void>;
}

export function createObjectSink(store: ObjectStore, maxInFlightBytes = 16 * 1024 * 1024): ObjectSink {
  const hashes = new Set<string>();
  const inFlight = new Set<Promise<void>>();
  let inFlightBytes = 0;
  let total = 0;
  let failure: unknown;

  return {
    hashes,
    get bytes() {
      return total;
    },
    async put(bytes, knownHash) {
      if (failure) throw failure;
      const hash = knownHash ?? sha256Hex(bytes);
      total += bytes.length;
      if (hashes.has(hash)) return hash;
      hashes.add(hash);
      while (inFlightBytes > maxInFlightBytes && inFlight.size > 0) await Promise.race(inFlight);
      if (failure) throw failure;
      inFlightBytes += bytes.length;
      const p: Promise<void> = store.put(bytes, { knownHash: hash }).then(
        () => undefined,
        (error: unknown) => {
          failure ??= error;
        },
      );
      const tracked = p.finally(() => {
        inFlight.delete(tracked);
        inFlightBytes -= bytes.length;
      });
      inFlight.add(tracked);
      return hash;
    },
    async drain() {
      await Promise.all(inFlight);
      if (failure) throw failure;
      await store.flush();
    },
  };
}
