/**
 * The cold archive of raw turns (DESIGN.md storage tiers: "archived raw turns (JSONL)"). Per
 * user, turns are appended to an open segment held in the warm database
 * (`memory_archive_open`), so an acknowledged append survives a crash as soon as its transaction
 * commits. A segment is closed when it reaches `segmentBytes` or its oldest line is
 * `segmentAgeMs` old (checked on append and on `flush`): its lines become one JSONL object in the
 * object store, referenced by the holder `turn-archive:<user key>:<segment no>`, and the segment
 * is recorded in `memory_archive_segments` in the same transaction that drops the open lines.
 *
 * A crash between the object write and that transaction leaves at most an extra object with a
 * holder and no segment row (the lines are still open and go into the next segment): storage is
 * leaked, never data. Readers see every line exactly once: closed segments in order, then the
 * open lines not yet covered by a segment.
 */
import { createHash } from 'node:crypto';
import { parseJsonlText } from '../../core/jsonl.js';
import { UsageError } from '../../errors.js';
import type { ObjectStore } from '../../store/object-store.js';
import type { SqlDatabase, SqlExecutor } from '../../store/warm/sql.js';
import type { Turn } from '../model.js';
import { assertUserId } from './context.js';
import { num, optNum, str, type Row } from './rows.js';
import { checkTurn } from './turns.js';

/** Default size at which the open segment is closed, bytes of JSONL. */
export const DEFAULT_SEGMENT_BYTES = 1024 * 1024;
/** Default age at which the open segment is closed, ms (one day). */
export const DEFAULT_SEGMENT_AGE_MS = 24 * 60 * 60 * 1000;

/** Options of `createTurnArchive`. */
export interface TurnArchiveOptions {
  /** Where closed segments go (e.g. `createFsObjectStore({ root: $CTXVM_HOME/objects })`). */
  objects: ObjectStore;
  /** The migrated warm database (holds the open segment and the segment index). */
  db: SqlDatabase;
  /** Close the open segment once it holds at least this many bytes of JSONL (default 1 MiB). */
  segmentBytes?: number;
  /** Close the open segment once its oldest line is this old, ms (default one day). */
  segmentAgeMs?: number;
  /** Clock, Unix ms (default `Date.now`). */
  now?: () => number;
}

/** One closed segment. */
export interface ArchiveSegment {
  /** Position in the user's archive, from 1. */
  segmentNo: number;
  /** Object-store address of the JSONL bytes. */
  hash: string;
  /** Size of the JSONL, bytes. */
  bytes: number;
  /** Turns in the segment. */
  turns: number;
  /** When it was closed, Unix ms. */
  createdAtMs: number;
}

/** A turn to archive: a model `Turn`, with or without its `userId` (which must match if given). */
export type ArchivableTurn = Omit<Turn, 'userId'> & { userId?: string };

/** What `append` did. */
export interface AppendResult {
  /** Turns appended (all of them). */
  appended: number;
  /** The segment this append closed, if it reached its size or age. */
  closed?: ArchiveSegment;
  /**
   * Why closing the segment failed, if it did. The turns are archived all the same (in the open
   * segment); the next append or `flush` tries to close it again.
   */
  closeError?: unknown;
}

/** Per-user cold archive of raw turns. */
export interface TurnArchive {
  /** Appends turns to the user's open segment; durable when it resolves. */
  append(userId: string, turns: readonly ArchivableTurn[]): Promise<AppendResult>;
  /**
   * Appends the turns of many users in ONE transaction (per user, in the order given); durable
   * when it resolves. Segments that reached their size or age are closed afterwards, each on its
   * own; a failed close is reported in its user's result and retried by the next append.
   */
  appendMany(batches: readonly ArchiveBatch[]): Promise<AppendResult[]>;
  /** Closes the user's open segment now (if it has lines); returns it. */
  flush(userId: string): Promise<ArchiveSegment | undefined>;
  /** Every archived turn of the user, oldest first (closed segments, then the open one). */
  read(userId: string): AsyncIterable<Turn>;
  /** The user's closed segments, oldest first. */
  segments(userId: string): Promise<ArchiveSegment[]>;
}

/** The turns of one user, for `appendMany`. */
export interface ArchiveBatch {
  userId: string;
  turns: readonly ArchivableTurn[];
}

interface ArchiveState {
  nextSeq: number;
  nextSegment: number;
  openTurns: number;
  openBytes: number;
  openedAtMs: number | null;
}

const lineOf = (t: ArchivableTurn): string =>
  JSON.stringify({ id: t.id, role: t.role, speaker: t.speaker ?? null, text: t.text, atMs: t.atMs, sessionId: t.sessionId ?? null });

const turnOf = (userId: string, value: unknown): Turn => {
  const v = value as Omit<Turn, 'userId'>;
  return { id: v.id, userId, role: v.role, speaker: v.speaker ?? null, text: v.text, atMs: v.atMs, sessionId: v.sessionId ?? null };
};

/** The object-store holder of a user's closed segment (also used by archive-compaction.ts). */
export const holderOf = (userId: string, segmentNo: number): string =>
  `turn-archive:${createHash('sha256').update(userId, 'utf8').digest('hex').slice(0, 32)}:${segmentNo}`;

function segmentFromRow(r: Row): ArchiveSegment {
  return { segmentNo: num(r.segment_no), hash: str(r.hash), bytes: num(r.bytes), turns: num(r.turns), createdAtMs: num(r.created_at_ms) };
}

async function readState(ex: SqlExecutor, userId: string): Promise<ArchiveState> {
  const r = await ex.get<Row>('SELECT * FROM memory_archive_state WHERE user_id = ?', [userId]);
  if (!r) return { nextSeq: 1, nextSegment: 1, openTurns: 0, openBytes: 0, openedAtMs: null };
  return { nextSeq: num(r.next_seq), nextSegment: num(r.next_segment), openTurns: num(r.open_turns), openBytes: num(r.open_bytes), openedAtMs: optNum(r.opened_at_ms) };
}

async function writeState(ex: SqlExecutor, userId: string, s: ArchiveState): Promise<void> {
  await ex.run(
    `INSERT INTO memory_archive_state (user_id, next_seq, next_segment, open_turns, open_bytes, opened_at_ms) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (user_id) DO UPDATE SET next_seq = excluded.next_seq, next_segment = excluded.next_segment,
       open_turns = excluded.open_turns, open_bytes = excluded.open_bytes, opened_at_ms = excluded.opened_at_ms`,
    [userId, s.nextSeq, s.nextSegment, s.openTurns, s.openBytes, s.openedAtMs],
  );
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value > 0)) throw new UsageError(`createTurnArchive: ${name} must be a positive number, got ${String(value)}`);
  return value;
}

/** Throws a UsageError unless `turns` are valid turns of `userId` (what `append` checks first). */
export function checkArchiveBatch(userId: string, turns: readonly ArchivableTurn[]): void {
  assertUserId(userId);
  turns.forEach((t, i) => {
    checkTurn(t, i);
    if (t.userId !== undefined && t.userId !== userId) {
      throw new UsageError(`turn ${i + 1} (id ${JSON.stringify(t.id)}) belongs to user ${JSON.stringify(t.userId)}, not ${JSON.stringify(userId)}`);
    }
  });
}

/** Creates the turn archive over an object store and the warm database. */
export function createTurnArchive(options: TurnArchiveOptions): TurnArchive {
  const { objects, db } = options;
  const segmentBytes = positive('segmentBytes', options.segmentBytes, DEFAULT_SEGMENT_BYTES);
  const segmentAgeMs = positive('segmentAgeMs', options.segmentAgeMs, DEFAULT_SEGMENT_AGE_MS);
  const now = options.now ?? Date.now;
  // Closing a segment is serialised per user within the process; across processes the segment
  // number check inside the final transaction decides.
  const closing = new Map<string, Promise<unknown>>();

  const closeSegment = async (userId: string): Promise<ArchiveSegment | undefined> => {
    const state = await readState(db, userId);
    if (state.openTurns === 0) return undefined;
    const rows = await db.all<Row>('SELECT seq, line FROM memory_archive_open WHERE user_id = ? ORDER BY seq', [userId]);
    if (rows.length === 0) return undefined;
    const text = rows.map((r) => `${str(r.line)}\n`).join('');
    const firstSeq = num(rows[0]!.seq);
    const lastSeq = num(rows[rows.length - 1]!.seq);
    const segmentNo = state.nextSegment;
    const holder = holderOf(userId, segmentNo);
    const info = await objects.put(text);
    await objects.ref(info.hash, holder);
    await objects.flush();
    const createdAtMs = now();
    const committed = await db.transaction(async (tx) => {
      const current = await readState(tx, userId);
      if (current.nextSegment !== segmentNo) return false; // another process closed it first
      await tx.run(
        'INSERT INTO memory_archive_segments (user_id, segment_no, hash, bytes, turns, first_seq, last_seq, created_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [userId, segmentNo, info.hash, info.size, rows.length, firstSeq, lastSeq, createdAtMs],
      );
      await tx.run('DELETE FROM memory_archive_open WHERE user_id = ? AND seq <= ?', [userId, lastSeq]);
      const rest = await tx.get<Row>('SELECT COUNT(*) AS n, MIN(appended_at_ms) AS opened FROM memory_archive_open WHERE user_id = ?', [userId]);
      const openTurns = num(rest?.n);
      await writeState(tx, userId, {
        nextSeq: current.nextSeq,
        nextSegment: segmentNo + 1,
        openTurns,
        openBytes: Math.max(0, current.openBytes - Buffer.byteLength(text, 'utf8')),
        openedAtMs: openTurns > 0 ? optNum(rest?.opened) : null,
      });
      return true;
    });
    if (!committed) {
      const winner = await db.get<Row>('SELECT hash FROM memory_archive_segments WHERE user_id = ? AND segment_no = ?', [userId, segmentNo]);
      if (str(winner?.hash) !== info.hash) await objects.unref(info.hash, holder);
      return undefined;
    }
    return { segmentNo, hash: info.hash, bytes: info.size, turns: rows.length, createdAtMs };
  };

  const flush = (userId: string): Promise<ArchiveSegment | undefined> => {
    const run = (closing.get(userId) ?? Promise.resolve()).catch(() => {}).then(() => closeSegment(userId));
    closing.set(userId, run);
    const forget = () => {
      if (closing.get(userId) === run) closing.delete(userId);
    };
    run.then(forget, forget);
    return run;
  };

  const check = checkArchiveBatch;

  /** Appends lines to the open segments of their users inside `tx`; the users' states after it. */
  const appendIn = async (tx: SqlExecutor, batches: readonly { userId: string; lines: string[] }[], atMs: number): Promise<Map<string, ArchiveState>> => {
    const states = new Map<string, ArchiveState>();
    for (const { userId, lines } of batches) {
      if (lines.length === 0) continue;
      const s = states.get(userId) ?? (await readState(tx, userId));
      for (const line of lines) {
        await tx.run('INSERT INTO memory_archive_open (user_id, seq, line, appended_at_ms) VALUES (?, ?, ?, ?)', [userId, s.nextSeq++, line, atMs]);
        s.openBytes += Buffer.byteLength(line, 'utf8') + 1;
        s.openTurns++;
      }
      s.openedAtMs ??= atMs;
      states.set(userId, s);
    }
    for (const [userId, s] of states) await writeState(tx, userId, s);
    return states;
  };

  /** Closes the segment of a user whose open lines reached the size or age limit (a failure goes into `result`). */
  const closeIfDue = async (userId: string, state: ArchiveState, atMs: number, result: AppendResult): Promise<void> => {
    if (state.openBytes < segmentBytes && atMs - (state.openedAtMs ?? atMs) < segmentAgeMs) return;
    try {
      const closed = await flush(userId);
      if (closed) result.closed = closed;
    } catch (error) {
      result.closeError = error;
    }
  };

  return {
    async append(userId, turns) {
      check(userId, turns);
      if (turns.length === 0) return { appended: 0 };
      const atMs = now();
      const states = await db.transaction((tx) => appendIn(tx, [{ userId, lines: turns.map(lineOf) }], atMs));
      const result: AppendResult = { appended: turns.length };
      await closeIfDue(userId, states.get(userId)!, atMs, result);
      return result;
    },

    async appendMany(batches) {
      for (const b of batches) check(b.userId, b.turns);
      const results: AppendResult[] = batches.map((b) => ({ appended: b.turns.length }));
      if (batches.every((b) => b.turns.length === 0)) return results;
      const atMs = now();
      const states = await db.transaction((tx) => appendIn(tx, batches.map((b) => ({ userId: b.userId, lines: b.turns.map(lineOf) })), atMs));
      // one close per user, reported on that user's last batch
      const last = new Map(batches.map((b, i) => [b.userId, i] as const));
      for (const [userId, i] of last) if (states.has(userId)) await closeIfDue(userId, states.get(userId)!, atMs, results[i]!);
      return results;
    },

    async flush(userId) {
      assertUserId(userId);
      return flush(userId);
    },

    async segments(userId) {
      assertUserId(userId);
      const rows = await db.all<Row>('SELECT * FROM memory_archive_segments WHERE user_id = ? ORDER BY segment_no', [userId]);
      return rows.map(segmentFromRow);
    },

    read(userId) {
      assertUserId(userId);
      return readArchive(db, objects, userId);
    },
  };
}

async function* readArchive(db: SqlDatabase, objects: ObjectStore, userId: string): AsyncGenerator<Turn> {
  // Open lines first, then segments: a segment closed in between holds lines read as open, so
  // open lines already covered by a segment are skipped (each line is yielded once).
  const open = await db.all<Row>('SELECT seq, line FROM memory_archive_open WHERE user_id = ? ORDER BY seq', [userId]);
  const segments = await db.all<Row>('SELECT * FROM memory_archive_segments WHERE user_id = ? ORDER BY segment_no', [userId]);
  let covered = 0;
  for (const s of segments) {
    const segment = segmentFromRow(s);
    covered = Math.max(covered, num(s.last_seq));
    const name = `turn archive of ${JSON.stringify(userId)}, segment ${segment.segmentNo} (${segment.hash})`;
    for await (const record of parseJsonlText(await objects.get(segment.hash), { name })) yield turnOf(userId, record.value);
  }
  for (const r of open) {
    if (num(r.seq) > covered) yield turnOf(userId, JSON.parse(str(r.line)) as unknown);
  }
}
