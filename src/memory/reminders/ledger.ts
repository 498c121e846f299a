/**
 * The delivery ledger: one row per reminder (user, task, due instant) in the warm store's
 * `reminder_deliveries` table (warm migration 3). It is what makes delivery at-least-once and
 * de-duplicated across restarts: a reminder is recorded before it is sent, marked delivered only
 * after the target took it, and never sent again once delivered. A pending row is claimed by
 * moving `next_attempt_at_ms` forward by a lease (compare-and-set on the value read), so two
 * schedulers on one database never send the same row at the same time, and a row whose sender
 * died becomes due again when the lease runs out.
 */
import type { SqlDatabase, SqlValue } from '../../store/warm/sql.js';
import { num, optNum, optStr, str, type Row } from '../store/rows.js';

/** Where a reminder is in its life. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'cancelled';

/** One ledger row. */
export interface DeliveryRecord {
  userId: string;
  /** `<taskId>@<dueAtMs>`. */
  key: string;
  taskId: string;
  /** Unix ms. */
  dueAtMs: number;
  status: DeliveryStatus;
  /** The reminder text of the last attempt (null before the first). */
  text: string | null;
  /** Attempts made so far. */
  attempts: number;
  /** When the row may next be tried (or until when it is leased), Unix ms. */
  nextAttemptAtMs: number;
  lastError: string | null;
  createdAtMs: number;
  deliveredAtMs: number | null;
}

/** A task coming due that should get a reminder. */
export interface DeliveryCandidate {
  userId: string;
  taskId: string;
  dueAtMs: number;
}

/** The ledger's operations. */
export interface ReminderLedger {
  /**
   * Records reminders not yet in the ledger (as pending, due now) and revives cancelled ones (the
   * task was reopened, or moved back to that time); returns how many rows that changed.
   */
  record(candidates: readonly DeliveryCandidate[], nowMs: number): Promise<number>;
  /** Pending rows whose next attempt is due at `nowMs`, oldest first, at most `limit`. */
  duePending(nowMs: number, limit: number): Promise<DeliveryRecord[]>;
  /** Leases `row` until `untilMs` unless someone else changed it since it was read; true when claimed. */
  claim(row: DeliveryRecord, untilMs: number): Promise<boolean>;
  /** Records the text of the attempt in progress. */
  setText(row: DeliveryRecord, text: string): Promise<void>;
  /** Marks a pending row delivered after `attempts` attempts. */
  delivered(row: DeliveryRecord, attempts: number, atMs: number): Promise<void>;
  /** Keeps a row pending after a failed attempt, to be tried again at `nextAttemptAtMs`. */
  retryLater(row: DeliveryRecord, attempts: number, nextAttemptAtMs: number, error: string): Promise<void>;
  /** Gives up on a row (too many attempts). */
  failed(row: DeliveryRecord, attempts: number, error: string): Promise<void>;
  /** Drops a pending row whose task was completed, deleted or rescheduled. */
  cancel(row: DeliveryRecord, reason: string): Promise<void>;
  /** One row. */
  get(userId: string, key: string): Promise<DeliveryRecord | undefined>;
  /** Rows, newest due first, optionally of one status / user. */
  list(options?: { status?: DeliveryStatus; userId?: string; limit?: number }): Promise<DeliveryRecord[]>;
  /** Number of rows per status. */
  counts(): Promise<Record<DeliveryStatus, number>>;
}

/** The delivery key of a reminder: task id and due instant. */
export function deliveryKey(taskId: string, dueAtMs: number): string {
  return `${taskId}@${dueAtMs}`;
}

/** Creates the ledger over an open, migrated warm database. */
export function createReminderLedger(db: SqlDatabase): ReminderLedger {
  const whereRow = 'user_id = ? AND delivery_key = ?';
  const keyOf = (row: DeliveryRecord): SqlValue[] => [row.userId, row.key];
  const update = async (sql: string, params: SqlValue[], row: DeliveryRecord) => {
    await db.run(`UPDATE reminder_deliveries SET ${sql} WHERE ${whereRow} AND status = 'pending'`, [...params, ...keyOf(row)]);
  };
  return {
    async record(candidates, nowMs) {
      if (candidates.length === 0) return 0;
      return db.transaction(async (tx) => {
        let added = 0;
        for (const c of candidates) {
          const result = await tx.run(
            `INSERT INTO reminder_deliveries (user_id, delivery_key, task_id, due_at_ms, status, text, attempts, next_attempt_at_ms, last_error, created_at_ms, delivered_at_ms)
             VALUES (?, ?, ?, ?, 'pending', NULL, 0, ?, NULL, ?, NULL)
             ON CONFLICT (user_id, delivery_key) DO UPDATE SET status = 'pending', next_attempt_at_ms = excluded.next_attempt_at_ms, last_error = NULL
             WHERE reminder_deliveries.status = 'cancelled'`,
            [c.userId, deliveryKey(c.taskId, c.dueAtMs), c.taskId, c.dueAtMs, nowMs, nowMs],
          );
          added += result.changes;
        }
        return added;
      });
    },
    async duePending(nowMs, limit) {
      const rows = await db.all<Row>(
        `SELECT * FROM reminder_deliveries WHERE status = 'pending' AND next_attempt_at_ms <= ? ORDER BY next_attempt_at_ms, due_at_ms, user_id, delivery_key LIMIT ?`,
        [nowMs, limit],
      );
      return rows.map(recordFromRow);
    },
    async claim(row, untilMs) {
      const result = await db.run(
        `UPDATE reminder_deliveries SET next_attempt_at_ms = ? WHERE ${whereRow} AND status = 'pending' AND next_attempt_at_ms = ? AND attempts = ?`,
        [untilMs, ...keyOf(row), row.nextAttemptAtMs, row.attempts],
      );
      return result.changes === 1;
    },
    setText: (row, text) => update('text = ?', [text], row),
    delivered: (row, attempts, atMs) => update("status = 'delivered', attempts = ?, delivered_at_ms = ?, last_error = NULL", [attempts, atMs], row),
    retryLater: (row, attempts, nextAttemptAtMs, error) => update('attempts = ?, next_attempt_at_ms = ?, last_error = ?', [attempts, nextAttemptAtMs, error], row),
    failed: (row, attempts, error) => update("status = 'failed', attempts = ?, last_error = ?", [attempts, error], row),
    cancel: (row, reason) => update("status = 'cancelled', last_error = ?", [reason], row),
    async get(userId, key) {
      const row = await db.get<Row>(`SELECT * FROM reminder_deliveries WHERE ${whereRow}`, [userId, key]);
      return row ? recordFromRow(row) : undefined;
    },
    async list(options = {}) {
      const where: string[] = [];
      const params: SqlValue[] = [];
      if (options.status) {
        where.push('status = ?');
        params.push(options.status);
      }
      if (options.userId !== undefined) {
        where.push('user_id = ?');
        params.push(options.userId);
      }
      params.push(options.limit ?? 100);
      const rows = await db.all<Row>(
        `SELECT * FROM reminder_deliveries ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY due_at_ms DESC, user_id, delivery_key LIMIT ?`,
        params,
      );
      return rows.map(recordFromRow);
    },
    async counts() {
      const rows = await db.all<Row>('SELECT status, COUNT(*) AS n FROM reminder_deliveries GROUP BY status');
      const out: Record<DeliveryStatus, number> = { pending: 0, delivered: 0, failed: 0, cancelled: 0 };
      for (const r of rows) out[str(r.status) as DeliveryStatus] = num(r.n);
      return out;
    },
  };
}

function recordFromRow(r: Row): DeliveryRecord {
  return {
    userId: str(r.user_id),
    key: str(r.delivery_key),
    taskId: str(r.task_id),
    dueAtMs: num(r.due_at_ms),
    status: str(r.status) as DeliveryStatus,
    text: optStr(r.text),
    attempts: num(r.attempts),
    nextAttemptAtMs: num(r.next_attempt_at_ms),
    lastError: optStr(r.last_error),
    createdAtMs: num(r.created_at_ms),
    deliveredAtMs: optNum(r.delivered_at_ms),
  };
}
