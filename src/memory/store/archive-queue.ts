/**
 * Appends to the cold turn archive in batches, off the request path. `append` only queues the
 * turns; a flush writes everything queued, for every user, in ONE transaction
 * (`TurnArchive.appendMany`) at most `maxDelayMs` later (sooner once `maxTurns` are queued).
 *
 * Semantics: the archive is a copy. The turns an HTTP server acknowledges are already committed
 * to the warm store (`memory_turns`), which stays authoritative; the archive may lag it by up to
 * `maxDelayMs` plus one flush. A failed flush keeps the turns queued, in order, and is retried
 * (`onError` hears of it); `close()` flushes what is queued. Only a crash can leave queued turns
 * out of the archive — they remain in the warm store, so no acknowledged turn is lost.
 */
import { checkArchiveBatch, type AppendResult, type ArchivableTurn, type ArchiveBatch, type TurnArchive } from './turn-archive.js';

/** Options of `createArchiveQueue`. */
export interface ArchiveQueueOptions {
  archive: Pick<TurnArchive, 'appendMany'>;
  /** Longest time a queued turn waits for its flush, ms (default 50). */
  maxDelayMs?: number;
  /** Flush as soon as this many turns are queued (default 512). */
  maxTurns?: number;
  /** Hears of failed flushes (the turns stay queued) and of segments that failed to close. */
  onError?: (error: unknown) => void;
}

/** A batching front of the turn archive. */
export interface ArchiveQueue {
  /** Checks and queues turns of one user (a UsageError for bad ones); never waits for the database. */
  append(userId: string, turns: readonly ArchivableTurn[]): void;
  /** Writes everything queued so far; resolves when it is durable in the archive (rejects if that failed). */
  flush(): Promise<void>;
  /** Turns queued and not yet written. */
  pending(): number;
  /** Flushes and stops; later appends throw. */
  close(): Promise<void>;
}

/** Creates a queue in front of `options.archive`. */
export function createArchiveQueue(options: ArchiveQueueOptions): ArchiveQueue {
  const maxDelayMs = options.maxDelayMs ?? 50;
  const maxTurns = options.maxTurns ?? 512;
  let queued: ArchiveBatch[] = [];
  let queuedTurns = 0;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let closed = false;

  const report = (error: unknown) => {
    try {
      options.onError?.(error);
    } catch {
      // a throwing reporter must not stop the queue
    }
  };

  async function writeOnce(): Promise<void> {
    if (queued.length === 0) return;
    const batch = queued;
    const turns = queuedTurns;
    queued = [];
    queuedTurns = 0;
    let results: AppendResult[];
    try {
      results = await options.archive.appendMany(batch);
    } catch (error) {
      // back to the front, before anything queued meanwhile: per-user order is kept
      queued = [...batch, ...queued];
      queuedTurns += turns;
      throw error;
    }
    for (const r of results) if (r.closeError !== undefined) report(r.closeError);
  }

  /** One flush at a time; a flush asked for during one runs right after it. */
  function flush(): Promise<void> {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    const next = (running ?? Promise.resolve()).catch(() => {}).then(writeOnce);
    running = next;
    const done = () => {
      if (running === next) running = undefined;
      if (queued.length > 0 && !closed) schedule();
    };
    next.then(done, (error: unknown) => {
      report(error);
      done();
    });
    return next;
  }

  function schedule(): void {
    if (timer || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      flush().catch(() => {}); // reported in flush
    }, maxDelayMs);
    timer.unref();
  }

  return {
    append(userId, turns) {
      if (closed) throw new Error('the archive queue is closed');
      checkArchiveBatch(userId, turns);
      if (turns.length === 0) return;
      queued.push({ userId, turns });
      queuedTurns += turns.length;
      if (queuedTurns >= maxTurns && !running) void flush().catch(() => {});
      else schedule();
    },
    flush,
    pending: () => queuedTurns,
    async close() {
      if (closed) return;
      try {
        await flush();
      } finally {
        closed = true;
        if (timer) clearTimeout(timer);
        timer = undefined;
      }
    },
  };
}
