/**
 * Gives the pages a SQLite warm store no longer uses back to the file system. Deleting rows
 * (gc of abandoned snapshots, `ctxvm rm`, memory retention) leaves their pages on SQLite's free
 * list: the file never shrinks by itself. A database created with `auto_vacuum = INCREMENTAL`
 * (every one the driver creates, see sqlite-driver.ts) can drop them cheaply: the free pages
 * move to the end of the file and it is truncated, with no full rewrite. Older files (auto_vacuum
 * off) would need a VACUUM, a full rewrite under an exclusive lock that this leaves to the user.
 * PostgreSQL reclaims space with its own autovacuum.
 */
import type { SqlDatabase, SqlRow } from './sql.js';

/** What `releaseFreePages` did. */
export interface FreePagesResult {
  /** Bytes given back to the file system. */
  releasedBytes: number;
  /** Bytes still on the free list (on a file created without incremental auto-vacuum). */
  remainingFreeBytes: number;
}

const INCREMENTAL = 2;

function pragmaNumber(row: SqlRow | undefined, name: string): number {
  return Number(row?.[name] ?? 0);
}

/** Truncates the free pages off a SQLite warm store that allows it; a no-op on PostgreSQL. */
export async function releaseFreePages(db: SqlDatabase): Promise<FreePagesResult> {
  if (db.dialect !== 'sqlite') return { releasedBytes: 0, remainingFreeBytes: 0 };
  const pageSize = pragmaNumber(await db.get('PRAGMA page_size'), 'page_size');
  const free = pragmaNumber(await db.get('PRAGMA freelist_count'), 'freelist_count');
  if (free === 0) return { releasedBytes: 0, remainingFreeBytes: 0 };
  if (pragmaNumber(await db.get('PRAGMA auto_vacuum'), 'auto_vacuum') !== INCREMENTAL) {
    return { releasedBytes: 0, remainingFreeBytes: free * pageSize };
  }
  await db.exec('PRAGMA incremental_vacuum');
  const left = pragmaNumber(await db.get('PRAGMA freelist_count'), 'freelist_count');
  return { releasedBytes: (free - left) * pageSize, remainingFreeBytes: left * pageSize };
}
