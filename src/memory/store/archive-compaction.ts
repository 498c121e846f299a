/**
 * Compaction of the cold turn archive (turn-archive.ts). Segments close by size or by age, so a
 * quiet user accumulates many small segments (one a day). Compaction merges runs of adjacent
 * small closed segments into one segment of at most `targetBytes`:
 *
 * 1. the merged JSONL (the segments' bytes, concatenated in order) is stored and referenced by
 *    the holder of the run's first segment number;
 * 2. one transaction replaces the run's rows by one row (that first number, the run's first and
 *    last line sequence, the summed counts) — only if the rows are still exactly the run, so a
 *    concurrent compaction or a changed archive makes this one back off;
 * 3. after the commit, the old objects' references are dropped, and `gc` reclaims them.
 *
 * Readers see the old rows or the new row, never both: the same lines either way. A crash
 * between the steps leaks storage (an unreferenced merged object, or old objects still held),
 * never a line. A reader that listed the old rows just before the commit can still fetch their
 * objects unless a `gc` runs in between (objects are collected only once unreferenced).
 */
import { UsageError } from '../../errors.js';
import type { ObjectStore } from '../../store/object-store.js';
import type { SqlDatabase } from '../../store/warm/sql.js';
import { assertUserId } from './context.js';
import { num, str, type Row } from './rows.js';
import { DEFAULT_SEGMENT_BYTES, holderOf } from './turn-archive.js';

/** Options of `compactTurnArchive`. */
export interface ArchiveCompactionOptions {
  /** Where the segments are (the archive's object store). */
  objects: ObjectStore;
  /** The warm database holding the segment index. */
  db: SqlDatabase;
  /** Closed segments smaller than this are merged, bytes (default a quarter of `targetBytes`). */
  smallBytes?: number;
  /** Largest merged segment, bytes (default the archive's segment size, 1 MiB). */
  targetBytes?: number;
}

/** What one compaction did. */
export interface ArchiveCompactionResult {
  /** Closed segments before and after. */
  segmentsBefore: number;
  segmentsAfter: number;
  /** Merged segments written. */
  merged: number;
  /** Runs skipped because the archive changed meanwhile (another compaction won). */
  conflicts: number;
  /** Old objects whose references were dropped (collectable by `gc`). */
  released: number;
}

interface SegmentRow {
  segmentNo: number;
  hash: string;
  bytes: number;
  turns: number;
  firstSeq: number;
  lastSeq: number;
  createdAtMs: number;
}

const rowOf = (r: Row): SegmentRow => ({
  segmentNo: num(r.segment_no),
  hash: str(r.hash),
  bytes: num(r.bytes),
  turns: num(r.turns),
  firstSeq: num(r.first_seq),
  lastSeq: num(r.last_seq),
  createdAtMs: num(r.created_at_ms),
});

function sizes(options: Pick<ArchiveCompactionOptions, 'smallBytes' | 'targetBytes'>): { small: number; target: number } {
  const target = options.targetBytes ?? DEFAULT_SEGMENT_BYTES;
  const small = options.smallBytes ?? Math.floor(target / 4);
  if (!(target > 0) || !(small > 0) || small > target) throw new UsageError(`archive compaction: need 0 < smallBytes (${small}) <= targetBytes (${target})`);
  return { small, target };
}

/** Runs of at least two adjacent small segments whose total stays within `target`, in order. */
export function planCompaction(segments: readonly { bytes: number }[], small: number, target: number): Array<[first: number, last: number]> {
  const runs: Array<[number, number]> = [];
  let start = -1;
  let total = 0;
  const close = (end: number) => {
    if (start >= 0 && end - start >= 1) runs.push([start, end]);
    start = -1;
    total = 0;
  };
  segments.forEach((s, i) => {
    if (s.bytes >= small) return close(i - 1);
    if (start >= 0 && total + s.bytes > target) close(i - 1);
    if (start < 0) start = i;
    total += s.bytes;
  });
  close(segments.length - 1);
  return runs;
}

/** Compacts one user's closed segments. */
export async function compactTurnArchive(userId: string, options: ArchiveCompactionOptions): Promise<ArchiveCompactionResult> {
  assertUserId(userId);
  const { small, target } = sizes(options);
  const { objects, db } = options;
  const segments = (await db.all<Row>('SELECT * FROM memory_archive_segments WHERE user_id = ? ORDER BY segment_no', [userId])).map(rowOf);
  const result: ArchiveCompactionResult = { segmentsBefore: segments.length, segmentsAfter: segments.length, merged: 0, conflicts: 0, released: 0 };
  for (const [from, to] of planCompaction(segments, small, target)) {
    const run = segments.slice(from, to + 1);
    const first = run[0]!;
    const last = run[run.length - 1]!;
    const bodies = await Promise.all(run.map((s) => objects.get(s.hash)));
    const info = await objects.put(Buffer.concat(bodies));
    const holder = holderOf(userId, first.segmentNo);
    await objects.ref(info.hash, holder);
    await objects.flush();
    const committed = await db.transaction(async (tx) => {
      const current = await tx.all<Row>('SELECT segment_no, hash FROM memory_archive_segments WHERE user_id = ? AND segment_no BETWEEN ? AND ? ORDER BY segment_no', [
        userId, first.segmentNo, last.segmentNo,
      ]);
      const unchanged = current.length === run.length && current.every((r, i) => num(r.segment_no) === run[i]!.segmentNo && str(r.hash) === run[i]!.hash);
      if (!unchanged) return false;
      await tx.run('DELETE FROM memory_archive_segments WHERE user_id = ? AND segment_no BETWEEN ? AND ?', [userId, first.segmentNo, last.segmentNo]);
      await tx.run(
        'INSERT INTO memory_archive_segments (user_id, segment_no, hash, bytes, turns, first_seq, last_seq, created_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [userId, first.segmentNo, info.hash, info.size, run.reduce((n, s) => n + s.turns, 0), first.firstSeq, last.lastSeq, last.createdAtMs],
      );
      return true;
    });
    if (!committed) {
      result.conflicts++;
      // Another compaction may have written the very same merged object under the same holder.
      const winner = await db.get<Row>('SELECT hash FROM memory_archive_segments WHERE user_id = ? AND segment_no = ?', [userId, first.segmentNo]);
      if (str(winner?.hash) !== info.hash) await objects.unref(info.hash, holder);
      continue;
    }
    result.merged++;
    result.segmentsAfter -= run.length - 1;
    for (const s of run) {
      if (s.hash === info.hash && s.segmentNo === first.segmentNo) continue; // the reference just taken
      if (await objects.unref(s.hash, holderOf(userId, s.segmentNo))) result.released++;
    }
  }
  return result;
}

/** Users with at least two closed segments smaller than `smallBytes` (compaction candidates), by user id. */
export async function usersToCompact(db: SqlDatabase, options: Pick<ArchiveCompactionOptions, 'smallBytes' | 'targetBytes'> = {}): Promise<string[]> {
  const { small } = sizes(options);
  const rows = await db.all<Row>('SELECT user_id FROM memory_archive_segments WHERE bytes < ? GROUP BY user_id HAVING COUNT(*) >= 2 ORDER BY user_id', [small]);
  return rows.map((r) => str(r.user_id));
}
