/**
 * Access statistics of memory records (how often and how recently a record went into a
 * context), for retrieval weighting. Not memory content: touching a record does not bump the
 * user's version, or every rebuild would invalidate its own cache.
 */
import { UsageError } from '../../errors.js';
import type { MemoryKind } from '../model.js';
import type { UserScope } from './context.js';
import { distinctIds, num, placeholders, str, type Row } from './rows.js';

const KINDS: ReadonlySet<string> = new Set<MemoryKind>(['task', 'project', 'decision', 'fact']);
const ID_BATCH = 500;

function checkKind(kind: unknown): asserts kind is MemoryKind {
  if (!KINDS.has(kind as string)) throw new UsageError(`memory kind must be task, project, decision or fact, got ${JSON.stringify(kind)}`);
}

/** `UserMemoryStore.touch`: one access per distinct id; the last access keeps the latest time. */
export async function touch(scope: UserScope, kind: MemoryKind, ids: readonly string[], atMs: number): Promise<void> {
  checkKind(kind);
  if (typeof atMs !== 'number' || !Number.isFinite(atMs)) throw new UsageError(`touch: atMs must be a finite number (Unix ms), got ${String(atMs)}`);
  const distinct = distinctIds(ids);
  if (distinct.length === 0) return;
  const at = Math.round(atMs);
  await scope.ctx.db.transaction(async (tx) => {
    // One multi-row upsert per batch (ids are distinct, so no row is hit twice): on PostgreSQL
    // every statement is a round trip or two, and a rebuild touches dozens of records.
    for (let i = 0; i < distinct.length; i += ID_BATCH) {
      const batch = distinct.slice(i, i + ID_BATCH);
      await tx.run(
        `INSERT INTO memory_access (user_id, kind, record_id, access_count, last_ms) VALUES ${batch.map(() => '(?, ?, ?, 1, ?)').join(', ')}
         ON CONFLICT (user_id, kind, record_id) DO UPDATE SET access_count = memory_access.access_count + 1,
           last_ms = CASE WHEN excluded.last_ms > memory_access.last_ms THEN excluded.last_ms ELSE memory_access.last_ms END`,
        batch.flatMap((id) => [scope.userId, kind, id, at]),
      );
    }
  });
}

/** `UserMemoryStore.accessStats`. */
export async function accessStats(scope: UserScope, kind: MemoryKind, ids: readonly string[]): Promise<Map<string, { count: number; lastMs: number }>> {
  checkKind(kind);
  const stats = new Map<string, { count: number; lastMs: number }>();
  const distinct = distinctIds(ids);
  for (let i = 0; i < distinct.length; i += ID_BATCH) {
    const batch = distinct.slice(i, i + ID_BATCH);
    const rows = await scope.ctx.db.all<Row>(
      `SELECT record_id, access_count, last_ms FROM memory_access WHERE user_id = ? AND kind = ? AND record_id IN (${placeholders(batch.length)})`,
      [scope.userId, kind, ...batch],
    );
    for (const r of rows) stats.set(str(r.record_id), { count: num(r.access_count), lastMs: num(r.last_ms) });
  }
  return stats;
}
