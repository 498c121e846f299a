/**
 * The snapshots' object lists in the SQL catalog (schema: migration 9,
 * src/store/warm/snapshot-object-lists.ts): one `catalog_objects` row per distinct object (hash
 * as 32 bytes, sizes, how many snapshots hold it) and, on each snapshot row, `object_ids`, the
 * sorted ids of its objects (src/store/warm/object-list-codec.ts). Every write runs inside the
 * caller's transaction, so a list and the holder counts it implies change together or not at all.
 */
import { IntegrityError } from '../../errors.js';
import { blobToHash, decodeIdList, encodeIdList, hashToBlob } from '../../store/warm/object-list-codec.js';
import type { SqlExecutor, SqlValue } from '../../store/warm/sql.js';
import type { SnapshotObjectRef } from './catalog.js';

type Row = Record<string, SqlValue>;

/** Values bound per statement (SQLite allows 32 766 parameters; PostgreSQL 65 535). */
const BATCH = 200;

const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += BATCH) out.push(items.slice(i, i + BATCH));
  return out;
}

interface ObjectRow extends SnapshotObjectRef {
  id: number;
  holders: number;
}

function objectFromRow(r: Row): ObjectRow {
  return { id: Number(r.id), hash: blobToHash(r.hash as Uint8Array), sizeBytes: Number(r.size_bytes), storedBytes: Number(r.stored_bytes), holders: Number(r.holders) };
}

/** The catalog rows of `hashes` (those that have one), by hash. */
async function objectsByHash(ex: SqlExecutor, hashes: readonly string[]): Promise<Map<string, ObjectRow>> {
  const out = new Map<string, ObjectRow>();
  for (const batch of chunks(hashes)) {
    const rows = await ex.all<Row>(`SELECT id, hash, size_bytes, stored_bytes, holders FROM catalog_objects WHERE hash IN (${marks(batch.length)})`, batch.map(hashToBlob));
    for (const r of rows) {
      const o = objectFromRow(r);
      out.set(o.hash, o);
    }
  }
  return out;
}

async function listOf(ex: SqlExecutor, snapshotId: string): Promise<number[]> {
  const row = await ex.get<Row>('SELECT object_ids FROM snapshots WHERE id = ?', [snapshotId]);
  return decodeIdList(row?.object_ids as Uint8Array | null | undefined, `snapshot ${snapshotId}`);
}

/** Records that snapshot `snapshotId` (its row already inserted) holds `objects` (duplicates allowed). */
export async function writeObjectList(tx: SqlExecutor, snapshotId: string, objects: readonly SnapshotObjectRef[]): Promise<void> {
  const distinct = new Map(objects.map((o) => [o.hash, o]));
  if (distinct.size === 0) return;
  const known = await objectsByHash(tx, [...distinct.keys()]);
  const ids: number[] = [];
  const held: number[] = [];
  const fresh: ObjectRow[] = [];
  let next = Number((await tx.get<Row>('SELECT COALESCE(MAX(id), 0) AS m FROM catalog_objects'))?.m ?? 0) + 1;
  for (const o of distinct.values()) {
    const row = known.get(o.hash);
    if (row) {
      ids.push(row.id);
      held.push(row.id);
      // sizes are the object's, the same in every snapshot; the larger is kept as totals always did
      if (o.sizeBytes > row.sizeBytes || o.storedBytes > row.storedBytes) {
        await tx.run('UPDATE catalog_objects SET size_bytes = ?, stored_bytes = ? WHERE id = ?', [Math.max(o.sizeBytes, row.sizeBytes), Math.max(o.storedBytes, row.storedBytes), row.id]);
      }
    } else {
      fresh.push({ ...o, id: next, holders: 1 });
      ids.push(next++);
    }
  }
  for (const batch of chunks(held)) await tx.run(`UPDATE catalog_objects SET holders = holders + 1 WHERE id IN (${marks(batch.length)})`, batch);
  for (const batch of chunks(fresh)) {
    await tx.run(
      `INSERT INTO catalog_objects (id, hash, size_bytes, stored_bytes, holders) VALUES ${batch.map(() => '(?, ?, ?, ?, 1)').join(', ')}`,
      batch.flatMap((o) => [o.id, hashToBlob(o.hash), o.sizeBytes, o.storedBytes]),
    );
  }
  await tx.run('UPDATE snapshots SET object_ids = ? WHERE id = ?', [encodeIdList(ids), snapshotId]);
}

/** Drops snapshot `snapshotId`'s hold on its objects (before its row goes); objects no snapshot holds leave the catalog. */
export async function releaseObjectList(tx: SqlExecutor, snapshotId: string): Promise<void> {
  const ids = await listOf(tx, snapshotId);
  for (const batch of chunks(ids)) {
    await tx.run(`UPDATE catalog_objects SET holders = holders - 1 WHERE id IN (${marks(batch.length)})`, batch);
    await tx.run(`DELETE FROM catalog_objects WHERE holders <= 0 AND id IN (${marks(batch.length)})`, batch);
  }
  await tx.run('UPDATE snapshots SET object_ids = NULL WHERE id = ?', [snapshotId]);
}

/** The objects snapshot `snapshotId` holds, by hash. */
export async function readObjectList(ex: SqlExecutor, snapshotId: string): Promise<SnapshotObjectRef[]> {
  const ids = await listOf(ex, snapshotId);
  const out: SnapshotObjectRef[] = [];
  for (const batch of chunks(ids)) {
    const rows = await ex.all<Row>(`SELECT id, hash, size_bytes, stored_bytes, holders FROM catalog_objects WHERE id IN (${marks(batch.length)})`, batch);
    for (const r of rows) {
      const { hash, sizeBytes, storedBytes } = objectFromRow(r);
      out.push({ hash, sizeBytes, storedBytes });
    }
  }
  if (out.length !== ids.length) {
    throw new IntegrityError(`snapshot ${snapshotId}: its object list names ${ids.length} objects but the catalog has ${out.length} of them`, {
      hint: 'the session catalog was changed outside ctxvm; restore the database from a backup',
    });
  }
  return out.sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));
}

/** How many snapshots hold each of `hashes` (0 for an object no snapshot holds). */
export async function countHolders(ex: SqlExecutor, hashes: readonly string[]): Promise<Map<string, number>> {
  const known = await objectsByHash(ex, [...new Set(hashes)]);
  return new Map(hashes.map((h) => [h, known.get(h)?.holders ?? 0]));
}

/** Ids of the snapshots holding `hash`, sorted: a scan of every list (the catalog keeps no reverse index). */
export async function snapshotsHolding(ex: SqlExecutor, hash: string): Promise<string[]> {
  const row = (await objectsByHash(ex, [hash])).get(hash);
  if (!row) return [];
  const out: string[] = [];
  for (const r of await ex.all<Row>('SELECT id, object_ids FROM snapshots WHERE object_ids IS NOT NULL ORDER BY id')) {
    if (decodeIdList(r.object_ids as Uint8Array, `snapshot ${String(r.id)}`).includes(row.id)) out.push(String(r.id));
  }
  return out;
}

/** Distinct objects the snapshots hold and their stored size. */
export async function objectTotals(ex: SqlExecutor): Promise<{ objects: number; storedBytes: number }> {
  const r = await ex.get<Row>('SELECT COUNT(*) AS n, COALESCE(SUM(stored_bytes), 0) AS stored FROM catalog_objects');
  return { objects: Number(r?.n ?? 0), storedBytes: Number(r?.stored ?? 0) };
}
