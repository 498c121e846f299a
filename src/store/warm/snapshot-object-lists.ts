/**
 * Migration 9: each snapshot's object list in one BLOB instead of a row per (snapshot, object).
 *
 * A growing session's ten snapshots reference mostly the same objects, and `snapshot_objects`
 * kept a ~230-byte row (a 64-digit hash in the table and again in its hash index) for every pair:
 * on a session that compresses well that outweighed the objects themselves. Now each distinct
 * object is one row of `catalog_objects` (its hash as 32 bytes, its sizes, how many snapshots hold
 * it), and a snapshot's `object_ids` names its objects by their small ids (object-list-codec.ts).
 * The old rows are converted in the step's transaction (ids given in the order snapshots were
 * made, so a session's objects get neighbouring ids and its lists one byte an object), then the
 * old table goes. Both dialects run the same step; only the column types differ.
 */
import { encodeIdList, hashToBlob } from './object-list-codec.js';
import type { SqlDialect, SqlExecutor, SqlValue } from './sql.js';

/** Rows inserted per statement, well under either backend's parameter limit. */
const BATCH = 200;

function ddl(dialect: SqlDialect): string {
  // SQLite: "INTEGER PRIMARY KEY" makes id the rowid (no second b-tree); BIGINT would not.
  const id = dialect === 'sqlite' ? 'INTEGER' : 'BIGINT';
  const blob = dialect === 'sqlite' ? 'BLOB' : 'BYTEA';
  return `
CREATE TABLE catalog_objects (
  id ${id} PRIMARY KEY,
  hash ${blob} NOT NULL UNIQUE,
  size_bytes BIGINT NOT NULL,
  stored_bytes BIGINT NOT NULL,
  holders BIGINT NOT NULL
);
ALTER TABLE snapshots ADD COLUMN object_ids ${blob};
`;
}

interface OldRow {
  snapshot_id: SqlValue;
  hash: SqlValue;
  size_bytes: SqlValue;
  stored_bytes: SqlValue;
}

export async function snapshotObjectLists(tx: SqlExecutor, dialect: SqlDialect): Promise<void> {
  await tx.exec(ddl(dialect));
  const rows = await tx.all<OldRow>(
    `SELECT o.snapshot_id, o.hash, o.size_bytes, o.stored_bytes FROM snapshot_objects o JOIN snapshots s ON s.id = o.snapshot_id
     ORDER BY s.created_at_ms, s.id, o.hash`,
  );
  const objects = new Map<string, { id: number; size: number; stored: number; holders: number }>();
  const lists = new Map<string, number[]>();
  for (const r of rows) {
    const hash = String(r.hash);
    let o = objects.get(hash);
    if (!o) {
      o = { id: objects.size + 1, size: 0, stored: 0, holders: 0 };
      objects.set(hash, o);
    }
    // the old table could hold different sizes per snapshot; totals took the largest
    o.size = Math.max(o.size, Number(r.size_bytes));
    o.stored = Math.max(o.stored, Number(r.stored_bytes));
    o.holders++;
    const snapshot = String(r.snapshot_id);
    const list = lists.get(snapshot) ?? [];
    list.push(o.id);
    lists.set(snapshot, list);
  }
  const all = [...objects.entries()];
  for (let i = 0; i < all.length; i += BATCH) {
    const batch = all.slice(i, i + BATCH);
    await tx.run(
      `INSERT INTO catalog_objects (id, hash, size_bytes, stored_bytes, holders) VALUES ${batch.map(() => '(?, ?, ?, ?, ?)').join(', ')}`,
      batch.flatMap(([hash, o]) => [o.id, hashToBlob(hash), o.size, o.stored, o.holders]),
    );
  }
  for (const [snapshot, ids] of lists) await tx.run('UPDATE snapshots SET object_ids = ? WHERE id = ?', [encodeIdList(ids), snapshot]);
  await tx.exec('DROP INDEX snapshot_objects_hash; DROP TABLE snapshot_objects;');
}
