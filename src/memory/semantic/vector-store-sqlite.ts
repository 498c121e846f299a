/**
 * Vectors in SQLite, scored by sqlite-vec's `vec_distance_cosine` over the asking user's rows
 * (an exact scan through the `(user_id, model, kind)` index: a user holds thousands of vectors,
 * not millions, and an exact answer needs no index to tune). The store opens its own connection
 * to the warm store's file (WAL: the memory store's connection is not held up) and loads the
 * sqlite-vec extension into it; sqlite-vec ships its library inside an npm platform package.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { CtxvmError } from '../../errors.js';
import { DEFAULT_NEAREST_LIMIT, vectorBytes, type VectorStore } from './vector-store.js';

/** Options of `openSqliteVectorStore`. */
export interface SqliteVectorStoreOptions {
  /** The SQLite file (the warm store's own file is fine), or ":memory:". */
  path: string;
  /** Lock wait, ms (default 5 000). */
  busyTimeoutMs?: number;
}

interface Statement {
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): unknown;
}
interface Database {
  prepare(sql: string): Statement;
  exec(sql: string): void;
  pragma(sql: string): unknown;
  transaction<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void;
  close(): void;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS memory_vectors (
  user_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  record_id TEXT NOT NULL,
  model TEXT NOT NULL,
  dims INTEGER NOT NULL,
  vector BLOB NOT NULL,
  PRIMARY KEY (user_id, model, kind, record_id)
) WITHOUT ROWID;`;

/** Opens (creating if needed) the vector table in the SQLite file at `options.path`. */
export async function openSqliteVectorStore(options: SqliteVectorStoreOptions): Promise<VectorStore> {
  const require = createRequire(import.meta.url);
  let db: Database;
  try {
    const BetterSqlite = require('better-sqlite3') as new (path: string, o?: { timeout?: number }) => Database;
    const sqliteVec = require('sqlite-vec') as { load(db: unknown): void };
    if (options.path !== ':memory:') mkdirSync(dirname(resolve(options.path)), { recursive: true });
    db = new BetterSqlite(options.path, { timeout: options.busyTimeoutMs ?? 5_000 });
    db.pragma('journal_mode = WAL');
    sqliteVec.load(db);
    db.exec(SCHEMA);
  } catch (cause) {
    throw new CtxvmError('E_UNAVAILABLE', `cannot open the vector store in ${options.path}: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
      hint: 'sqlite-vec must be installed (npm install) for semantic recall on SQLite; unset CTXVM_EMBED_MODEL to search without it',
    });
  }
  const upsert = db.prepare(
    'INSERT INTO memory_vectors (user_id, kind, record_id, model, dims, vector) VALUES (?, ?, ?, ?, ?, ?) ' +
      'ON CONFLICT (user_id, model, kind, record_id) DO UPDATE SET dims = excluded.dims, vector = excluded.vector',
  );
  const putAll = db.transaction((userId: string, model: string, items: readonly { kind: string; id: string; vector: Float32Array }[]) => {
    for (const it of items) upsert.run(userId, it.kind, it.id, model, it.vector.length, vectorBytes(it.vector));
  });
  return {
    name: 'sqlite-vec',
    async put(userId, model, items) {
      if (items.length > 0) putAll(userId, model, items);
    },
    async nearest(userId, vector, o) {
      const kinds = o.kinds ?? [];
      const limit = Math.max(1, Math.floor(o.limit ?? DEFAULT_NEAREST_LIMIT));
      const kindFilter = kinds.length > 0 ? ` AND kind IN (${kinds.map(() => '?').join(', ')})` : '';
      // WHERE first: the distance is computed only for rows of this user, model and length.
      const rows = db
        .prepare(
          `SELECT kind, record_id, vec_distance_cosine(vector, ?) AS distance FROM memory_vectors ` +
            `WHERE user_id = ? AND model = ? AND dims = ?${kindFilter} ORDER BY distance, record_id LIMIT ?`,
        )
        .all(vectorBytes(vector), userId, o.model, vector.length, ...kinds, limit) as Array<{ kind: string; record_id: string; distance: number }>;
      return rows.map((r) => ({ kind: r.kind as never, id: r.record_id, score: 1 - r.distance }));
    },
    async remove(userId, which) {
      if (!which) db.prepare('DELETE FROM memory_vectors WHERE user_id = ?').run(userId);
      else for (const id of which.ids) db.prepare('DELETE FROM memory_vectors WHERE user_id = ? AND kind = ? AND record_id = ?').run(userId, which.kind, id);
    },
    async close() {
      db.close();
    },
  };
}
