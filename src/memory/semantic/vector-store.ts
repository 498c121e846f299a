/**
 * Where embeddings of a user's turns and memory records are kept, beside the warm store: one
 * interface, two drivers (SQLite with sqlite-vec, PostgreSQL), one contract suite
 * (test/contract/vector-store.contract.ts). Every row carries its user id and every statement
 * filters by it: a query cannot reach another user's vectors.
 */
import type { SearchHit, SearchKind } from '../memory-store.js';

/** One vector to store. */
export interface VectorItem {
  kind: SearchKind;
  /** Record id (a turn id for turns). */
  id: string;
  /** Unit-length vector (see `Embedder`). */
  vector: Float32Array;
}

/** Options of `VectorStore.nearest`. */
export interface NearestOptions {
  /** Vectors of this model only. */
  model: string;
  /** Only these kinds (default all). */
  kinds?: readonly SearchKind[];
  /** Most hits (default 50). */
  limit?: number;
}

/** Embeddings of every user's turns and records. */
export interface VectorStore {
  /** Driver name, e.g. "sqlite-vec". */
  readonly name: string;
  /** Stores `items` for `userId` and `model` in one transaction, replacing vectors of the same kind and id. */
  put(userId: string, model: string, items: readonly VectorItem[]): Promise<void>;
  /** `userId`'s vectors most similar to `vector` (cosine), best first; `score` is the similarity (-1..1). */
  nearest(userId: string, vector: Float32Array, options: NearestOptions): Promise<SearchHit[]>;
  /** Removes vectors of `userId` (all of them, or those of `kind` with these ids). */
  remove(userId: string, which?: { kind: SearchKind; ids: readonly string[] }): Promise<void>;
  /** Closes the store's connection. */
  close(): Promise<void>;
}

/** Default number of hits of `nearest`. */
export const DEFAULT_NEAREST_LIMIT = 50;

/** The vector as stored: its float32 bytes. */
export function vectorBytes(v: Float32Array): Uint8Array {
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}
