/**
 * What the record pool (record-pool.ts) and its task part (task-pool.ts) share: statement texts
 * built once per shape, the row selection with access statistics, and the choice among the
 * buffered touches the pool adds to what it reads.
 *
 * Those touches are the user's `pendingTouches` (store/access.ts): the pool adds them to the
 * statistics it reads and includes their most recent records (the "most recently used" ordering
 * reads only the written ones: the pool is then a superset of the one the written touches would
 * give). They are taken with no await before the reads are issued: SQLite runs statements in the
 * order issued on one connection, so a touch in the map is in none of the rows, and the map is
 * held, not copied, until the rows are in (each touch is counted once; copying the ~1,000 touches
 * a busy buffer holds cost more than the rest of the pool's bookkeeping). On PostgreSQL a write
 * under way could land in the rows too: the touches are written first there (`NO_TOUCHES`).
 */
import { remembered } from '../../core/remembered.js';
import type { MemoryKind } from '../model.js';
import type { PendingTouch } from './access.js';

/** Largest `perOrder` honoured (each distinct value is one more prepared statement). */
const MAX_POOL_PER_ORDER = 100_000;

/** Statement texts kept (all forgotten when full): one per shape, so very few. */
const MAX_STATEMENTS = 1000;
// Statement texts are pure functions of their shape key: the same for every store and user.
const statements = new Map<string, string>();

/**
 * The statement text of shape `key`, built once: every read then hands the driver the same
 * string, whose hash its statement cache has already computed, instead of building and hashing
 * a new one of ~1 KB (the pool's statements are long: a subquery per ordering).
 */
export function statement(key: string, build: () => string): string {
  return remembered(statements, key, MAX_STATEMENTS, build);
}

/**
 * Rows of `table` chosen by `where` (on alias r), with their access statistics when `kind` is
 * given: `access_count` and `last_ms`, NULL for a record never used.
 */
export function select(table: string, columns: readonly string[], kind: MemoryKind | undefined, where: string): string {
  const cols = columns.map((c) => `r.${c}`).join(', ');
  if (!kind) return `SELECT ${cols} FROM ${table} r WHERE ${where}`;
  return `SELECT ${cols}, a.access_count AS access_count, a.last_ms AS last_ms FROM ${table} r
    LEFT JOIN memory_access a ON a.user_id = r.user_id AND a.kind = '${kind}' AND a.record_id = r.id WHERE ${where}`;
}

/**
 * Ids of the `n` most recently touched pending records of each of `kinds` (latest first, ties by
 * id), in no particular order: the pool reads them as a set. The buffer holds up to a thousand
 * touches, taken on every rebuild: one pass over it, and for a kind with more than `n` a
 * selection of the first `n` rather than a sort of them all.
 */
export function mostRecent(pending: ReadonlyMap<string, PendingTouch>, kinds: readonly MemoryKind[], n: number): string[] {
  if (pending.size === 0) return [];
  const byKind = new Map<MemoryKind, PendingTouch[]>(kinds.map((kind) => [kind, []]));
  for (const p of pending.values()) byKind.get(p.kind)?.push(p);
  const ids: string[] = [];
  for (const list of byKind.values()) {
    keepFirst(list, n, latestFirst);
    for (const p of list) ids.push(p.id);
  }
  return ids;
}

const latestFirst = (a: PendingTouch, b: PendingTouch): number => b.lastMs - a.lastMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * Cuts `list` to its `n` first items by `compare` (a total order), in no particular order:
 * Hoare's selection, which partitions around a pivot and goes on only in the part holding the
 * `n`-th item (about two comparisons per item, against a sort's log2 of the length).
 */
export function keepFirst<T>(list: T[], n: number, compare: (a: T, b: T) => number): void {
  if (list.length <= n) return;
  const k = n - 1;
  let lo = 0;
  let hi = list.length - 1;
  while (lo < hi) {
    const pivot = list[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (compare(list[i]!, pivot) < 0) i++;
      while (compare(list[j]!, pivot) > 0) j--;
      if (i <= j) {
        const t = list[i]!;
        list[i++] = list[j]!;
        list[j--] = t;
      }
    }
    // Now everything in lo..j comes before or is the pivot, everything in i..hi after or is it.
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  list.length = Math.max(0, n);
}

/** `perOrder` as an integer in 1..MAX_POOL_PER_ORDER. */
export function perOrderOf(perOrder: number): number {
  return Math.min(MAX_POOL_PER_ORDER, Math.max(1, Math.floor(Number.isFinite(perOrder) ? perOrder : 1)));
}
