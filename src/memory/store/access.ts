/**
 * Access statistics of memory records (how often and how recently a record went into a
 * context), for retrieval weighting. Not memory content: touching a record does not bump the
 * user's version, or every rebuild would invalidate its own cache.
 *
 * Touches are written behind: `touch` adds them to a buffer of the store (in memory, per user,
 * one entry per record) and the buffer is written in one statement after `TOUCH_FLUSH_DELAY_MS`,
 * when it holds `MAX_PENDING_TOUCHES` records, before `accessStats` reads, before a task is deleted
 * and on `close()`. A rebuild then costs no write of its own, and a record used by many rebuilds
 * in a row is written once. Reads of this process see the touches at once: `accessStats` flushes
 * first, and the record pool adds the pending ones to what it read (`pendingTouches`). Lossy only
 * if the process dies within the delay, and other processes see the touches up to that late:
 * access statistics only weigh retrieval.
 */
import { UsageError } from '../../errors.js';
import type { SqlExecutor } from '../../store/warm/sql.js';
import type { MemoryKind } from '../model.js';
import type { StoreContext, UserScope } from './context.js';
import { distinctIds, ID_BATCH, num, placeholders, str, type Row } from './rows.js';

const KINDS: ReadonlySet<string> = new Set<MemoryKind>(['task', 'project', 'decision', 'fact']);
/** Longest a touch waits in the buffer before it is written, ms. */
export const TOUCH_FLUSH_DELAY_MS = 1000;
/** Buffered records (of all users) at which the buffer is written at once. */
export const MAX_PENDING_TOUCHES = 1000;

/** Touches of one record not yet written: how many, and the latest, Unix ms. */
export interface PendingTouch {
  kind: MemoryKind;
  id: string;
  count: number;
  lastMs: number;
}

interface TouchBuffer {
  /** Pending touches by user, then by `kind:id`. */
  users: Map<string, Map<string, PendingTouch>>;
  size: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Writes taken out of the buffer and not yet settled (a read waits for them). */
  writing: Set<Promise<void>>;
}

const buffers = new WeakMap<StoreContext, TouchBuffer>();

// A context bound to a transaction (atomic.ts) shares its store's buffer: a flush inside
// (deleteTask's) writes the pending touches on that transaction.
const keyOf = (ctx: StoreContext): StoreContext => ctx.outer ?? ctx;

function bufferOf(ctx: StoreContext): TouchBuffer {
  let b = buffers.get(keyOf(ctx));
  if (!b) buffers.set(keyOf(ctx), (b = { users: new Map(), size: 0, timer: undefined, writing: new Set() }));
  return b;
}

function checkKind(kind: unknown): asserts kind is MemoryKind {
  if (!KINDS.has(kind as string)) throw new UsageError(`memory kind must be task, project, decision or fact, got ${JSON.stringify(kind)}`);
}

/** `UserMemoryStore.touch`: one access per distinct id; the last access keeps the latest time. */
export function touch(scope: UserScope, kind: MemoryKind, ids: readonly string[], atMs: number): Promise<void> {
  return touchMany(scope, [{ kind, ids }], atMs);
}

/** `UserMemoryStore.touchMany`: `touch` for several kinds, buffered (see the module comment). */
export async function touchMany(scope: UserScope, touches: ReadonlyArray<{ kind: MemoryKind; ids: readonly string[] }>, atMs: number): Promise<void> {
  for (const t of touches) checkKind(t?.kind);
  if (typeof atMs !== 'number' || !Number.isFinite(atMs)) throw new UsageError(`touch: atMs must be a finite number (Unix ms), got ${String(atMs)}`);
  const at = Math.round(atMs);
  const b = bufferOf(scope.ctx);
  let mine = b.users.get(scope.userId);
  // Distinct (kind, id) pairs per call: one access each, however often the call names them.
  const seen = new Set<string>();
  for (const t of touches) {
    for (const id of distinctIds(t.ids)) {
      const key = `${t.kind}:${id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (!mine) b.users.set(scope.userId, (mine = new Map()));
      const p = mine.get(key);
      if (p) {
        p.count++;
        if (at > p.lastMs) p.lastMs = at;
      } else {
        mine.set(key, { kind: t.kind, id, count: 1, lastMs: at });
        b.size++;
      }
    }
  }
  if (b.size === 0) return;
  if (b.size >= MAX_PENDING_TOUCHES) return flushTouches(scope.ctx);
  // unref: a pending write never keeps the process alive (close() writes what is left).
  b.timer ??= setTimeout(() => void flushTouches(scope.ctx).catch(() => undefined), TOUCH_FLUSH_DELAY_MS);
  b.timer.unref?.();
}

/** No buffered touches. */
export const NO_TOUCHES: ReadonlyMap<string, PendingTouch> = new Map();

/**
 * The touches of `scope`'s user not yet written, by `kind:id` (empty when none): the buffer's
 * own map, not a copy. Later touches change it; a flush takes it out of the buffer whole (later
 * touches then go to a new map) and leaves its entries as they were. So a reader that holds it
 * from the moment it issues its reads counts each touch once: those written before the reads in
 * the rows, the rest (including those written after the reads were issued) from the map.
 */
export function pendingTouches(scope: UserScope): ReadonlyMap<string, PendingTouch> {
  return buffers.get(keyOf(scope.ctx))?.users.get(scope.userId) ?? NO_TOUCHES;
}

/**
 * Writes the buffered touches (of `userId` only, when given) and waits for writes already under
 * way, so a read that follows sees them all. A failed write puts its touches back and rejects.
 */
export async function flushTouches(ctx: StoreContext, userId?: string): Promise<void> {
  const b = buffers.get(keyOf(ctx));
  if (!b) return;
  const taken: Array<[string, PendingTouch]> = [];
  for (const [user, pending] of b.users) {
    if (userId !== undefined && user !== userId) continue;
    for (const p of pending.values()) taken.push([user, p]);
    b.users.delete(user);
  }
  b.size -= taken.length;
  if (b.size === 0 && b.timer) {
    clearTimeout(b.timer);
    b.timer = undefined;
  }
  // Bound to a transaction (`outer`), the writes under way on the store's own connection are not
  // waited for: on SQLite they wait for that very transaction to end.
  const earlier = ctx.outer ? [] : [...b.writing];
  if (taken.length > 0) {
    const write = writeTouches(ctx, taken).catch((error: unknown) => {
      restore(b, taken);
      throw error;
    });
    const settled = write.catch(() => undefined).finally(() => b.writing.delete(settled));
    b.writing.add(settled);
    await Promise.all([write, ...earlier]);
  } else if (earlier.length > 0) {
    await Promise.all(earlier);
  }
}

/** Puts touches whose write failed back into the buffer (added to any taken since). */
function restore(b: TouchBuffer, taken: ReadonlyArray<[string, PendingTouch]>): void {
  for (const [user, p] of taken) {
    let mine = b.users.get(user);
    if (!mine) b.users.set(user, (mine = new Map()));
    const key = `${p.kind}:${p.id}`;
    const now = mine.get(key);
    if (now) {
      now.count += p.count;
      now.lastMs = Math.max(now.lastMs, p.lastMs);
    } else {
      mine.set(key, { ...p });
      b.size++;
    }
  }
}

async function writeTouches(ctx: StoreContext, rows: ReadonlyArray<[string, PendingTouch]>): Promise<void> {
  // One multi-row upsert per batch: on PostgreSQL every statement is a round trip or two (and
  // each commit a WAL flush). Pairs are distinct, so no row is hit twice by one statement.
  const upsert = (ex: SqlExecutor, batch: ReadonlyArray<[string, PendingTouch]>) =>
    ex.run(
      `INSERT INTO memory_access (user_id, kind, record_id, access_count, last_ms) VALUES ${batch.map(() => '(?, ?, ?, ?, ?)').join(', ')}
       ON CONFLICT (user_id, kind, record_id) DO UPDATE SET access_count = memory_access.access_count + excluded.access_count,
         last_ms = CASE WHEN excluded.last_ms > memory_access.last_ms THEN excluded.last_ms ELSE memory_access.last_ms END`,
      batch.flatMap(([user, p]) => [user, p.kind, p.id, p.count, p.lastMs]),
    );
  // One statement is atomic on its own: no transaction (on PostgreSQL that saves BEGIN, a
  // savepoint, COMMIT and the wait for the process's transaction slot).
  if (rows.length <= ID_BATCH) return void (await upsert(ctx.db, rows));
  await ctx.db.transaction(async (tx) => {
    for (let i = 0; i < rows.length; i += ID_BATCH) await upsert(tx, rows.slice(i, i + ID_BATCH));
  });
}

/** `UserMemoryStore.accessStats` (after writing this user's pending touches). */
export async function accessStats(scope: UserScope, kind: MemoryKind, ids: readonly string[]): Promise<Map<string, { count: number; lastMs: number }>> {
  checkKind(kind);
  await flushTouches(scope.ctx, scope.userId);
  const stats = new Map<string, { count: number; lastMs: number }>();
  for (const [id, r] of await writtenAccess(scope, kind, distinctIds(ids))) stats.set(id, { count: num(r.access_count), lastMs: num(r.last_ms) });
  return stats;
}

// The statement of `writtenAccess` per batch length (at most ID_BATCH), built once: the record
// pool reads its tasks' statistics on every rebuild.
const accessIn: string[] = [];

/**
 * The written access statistics (buffered touches not included) of the distinct records `ids`
 * of `kind`, by id: rows of `record_id`, `access_count` and `last_ms`, none for a record never
 * used. One statement per ID_BATCH ids, issued together.
 */
export async function writtenAccess(scope: UserScope, kind: MemoryKind, ids: readonly string[]): Promise<Map<string, Row>> {
  const reads: Array<Promise<Row[]>> = [];
  for (let i = 0; i < ids.length; i += ID_BATCH) {
    const batch = ids.slice(i, i + ID_BATCH);
    const sql = (accessIn[batch.length] ??= `SELECT record_id, access_count, last_ms FROM memory_access WHERE user_id = ? AND kind = ? AND record_id IN (${placeholders(batch.length)})`);
    reads.push(scope.ctx.db.all<Row>(sql, [scope.userId, kind, ...batch]));
  }
  const byId = new Map<string, Row>();
  for (const rows of await Promise.all(reads)) for (const r of rows) byId.set(str(r.record_id), r);
  return byId;
}
