/**
 * Vectors in PostgreSQL as `real[]`, scored by their dot product in SQL (vectors are stored
 * unit-length, so that is their cosine) over the asking user's rows: an exact scan through the
 * `(user_id, model, kind)` key. (pgvector would add an approximate index; Debian 12, which this
 * project's machines and CI run, has no package of it, so the table keeps to plain PostgreSQL.)
 */
import type { SqlDatabase } from '../../store/warm/sql.js';
import { DEFAULT_NEAREST_LIMIT, type VectorStore } from './vector-store.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS memory_vectors (
  user_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  record_id TEXT NOT NULL,
  model TEXT NOT NULL,
  dims INTEGER NOT NULL,
  vector REAL[] NOT NULL,
  PRIMARY KEY (user_id, model, kind, record_id)
);`;

/** A PostgreSQL array literal of `v` ("{0.1,0.2}"): bound as text, cast in SQL. */
const literal = (v: Float32Array) => `{${Array.from(v, (x) => (Number.isFinite(x) ? x : 0)).join(',')}}`;

/** The vector table in `db` (created if missing); `db` stays the caller's to close. */
export async function openPostgresVectorStore(db: SqlDatabase): Promise<VectorStore> {
  await db.exec(SCHEMA);
  return {
    name: 'postgres-real-array',
    async put(userId, model, items) {
      if (items.length === 0) return;
      await db.transaction(async (tx) => {
        for (const it of items) {
          await tx.run(
            'INSERT INTO memory_vectors (user_id, kind, record_id, model, dims, vector) VALUES (?, ?, ?, ?, ?, ?::real[]) ' +
              'ON CONFLICT (user_id, model, kind, record_id) DO UPDATE SET dims = excluded.dims, vector = excluded.vector',
            [userId, it.kind, it.id, model, it.vector.length, literal(it.vector)],
          );
        }
      });
    },
    async nearest(userId, vector, o) {
      const kinds = o.kinds ?? [];
      const limit = Math.max(1, Math.floor(o.limit ?? DEFAULT_NEAREST_LIMIT));
      const kindFilter = kinds.length > 0 ? ` AND kind IN (${kinds.map(() => '?').join(', ')})` : '';
      const rows = await db.all<{ kind: string; record_id: string; score: number | string }>(
        `SELECT kind, record_id, (SELECT sum(a * b) FROM unnest(vector, ?::real[]) AS t(a, b)) AS score FROM memory_vectors ` +
          `WHERE user_id = ? AND model = ? AND dims = ?${kindFilter} ORDER BY score DESC, record_id LIMIT ?`,
        [literal(vector), userId, o.model, vector.length, ...kinds, limit],
      );
      return rows.map((r) => ({ kind: r.kind as never, id: r.record_id, score: Number(r.score) }));
    },
    async remove(userId, which) {
      if (!which) await db.run('DELETE FROM memory_vectors WHERE user_id = ?', [userId]);
      else for (const id of which.ids) await db.run('DELETE FROM memory_vectors WHERE user_id = ? AND kind = ? AND record_id = ?', [userId, which.kind, id]);
    },
    async close() {},
  };
}
