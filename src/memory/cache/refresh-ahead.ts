/**
 * Refresh-ahead of cached rebuilds. A cached context is keyed by the user's memory version, so
 * every write retires all of that user's cached contexts, and the next request for each of them
 * pays a full rebuild. People ask their assistant the same few things again and again ("what
 * are my tasks today?"): after a write, this rebuilds in the background the questions the user
 * has asked most (at least `minAsks` times, the top `perUser` by count), so those requests are
 * served from the hot tier again.
 *
 * The work runs off the request path (scheduled with `setImmediate`, one rebuild at a time, one
 * pass per user however many writes came in meanwhile), never touches access statistics (a
 * refresh is not a use), and never fails a caller: errors are counted and dropped — the request
 * then simply rebuilds. Only the questions of users this process has served are tracked, in a
 * bounded map (least recently asked user evicted first).
 */

/** Options of refresh-ahead. */
export interface RefreshAheadOptions {
  /** Questions rebuilt per user after a write, the most asked first (default 4). */
  perUser?: number;
  /** Times a question must have been asked before it is refreshed (default 2). */
  minAsks?: number;
  /** Users tracked; the least recently asked is forgotten first (default 10 000). */
  users?: number;
  /** Distinct questions tracked per user (default 16). */
  questionsPerUser?: number;
}

/** One tracked question: what to rebuild. */
export interface RefreshQuestion {
  query: string;
  budgetTokens: number;
}

/** Counters since creation. */
export interface RefreshAheadStats {
  /** Users whose questions were refreshed (one per pass). */
  passes: number;
  /** Rebuilds run ahead of requests. */
  rebuilds: number;
  /** Rebuilds that failed (dropped; the next request rebuilds). */
  failed: number;
}

/** Refresh-ahead for one manager. */
export interface RefreshAhead {
  /** Notes that `userId` asked `question` (a request from outside, not a refresh). */
  asked(userId: string, question: RefreshQuestion): void;
  /** Notes that `userId`'s memory changed: their top questions are rebuilt soon. */
  wrote(userId: string): void;
  /** Resolves once no refresh is scheduled or running. */
  settled(): Promise<void>;
  /** Stops scheduling; a pass already running finishes its current rebuild and stops. */
  stop(): void;
  stats(): RefreshAheadStats;
}

/** Rebuilds one question for one user through the rebuild cache (without touching access statistics). */
export type RefreshRebuild = (userId: string, question: RefreshQuestion) => Promise<unknown>;

interface Tracked extends RefreshQuestion {
  asks: number;
}

/** Creates refresh-ahead over `rebuild`. */
export function createRefreshAhead(rebuild: RefreshRebuild, options: RefreshAheadOptions = {}): RefreshAhead {
  const perUser = options.perUser ?? 4;
  const minAsks = options.minAsks ?? 2;
  const maxUsers = options.users ?? 10_000;
  const maxQuestions = options.questionsPerUser ?? 16;
  // Map order is recency of asking: re-inserting a user moves them to the end.
  const questions = new Map<string, Map<string, Tracked>>();
  const pending = new Set<string>();
  const stats: RefreshAheadStats = { passes: 0, rebuilds: 0, failed: 0 };
  let running: Promise<void> | undefined;
  let stopped = false;

  function asked(userId: string, question: RefreshQuestion): void {
    const mine = questions.get(userId) ?? new Map<string, Tracked>();
    questions.delete(userId);
    questions.set(userId, mine);
    if (questions.size > maxUsers) questions.delete(questions.keys().next().value!);
    const key = `${question.budgetTokens}\u0000${question.query}`;
    const known = mine.get(key);
    if (known) {
      known.asks++;
      return;
    }
    if (mine.size >= maxQuestions) mine.delete(leastAsked(mine));
    mine.set(key, { ...question, asks: 1 });
  }

  function wrote(userId: string): void {
    if (stopped || !questions.has(userId)) return;
    pending.add(userId);
    running ??= new Promise<void>((resolve) => setImmediate(resolve)).then(drain).finally(() => {
      running = undefined;
      // A write that came in after the last pass looked: schedule another.
      if (pending.size > 0 && !stopped) wrote(pending.values().next().value!);
    });
  }

  async function drain(): Promise<void> {
    while (!stopped && pending.size > 0) {
      const userId = pending.values().next().value!;
      pending.delete(userId);
      const top = [...(questions.get(userId)?.values() ?? [])]
        .filter((q) => q.asks >= minAsks)
        .sort((a, b) => b.asks - a.asks)
        .slice(0, perUser);
      if (top.length === 0) continue;
      stats.passes++;
      for (const q of top) {
        // Requests that came in meanwhile go first: a refresh is worth less than a request.
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (stopped) return;
        // A write during this pass re-queues the user: later questions would be built from
        // memory that is already stale; the next pass does them.
        if (pending.has(userId)) break;
        try {
          await rebuild(userId, { query: q.query, budgetTokens: q.budgetTokens });
          stats.rebuilds++;
        } catch {
          stats.failed++;
        }
      }
    }
  }

  return {
    asked,
    wrote,
    async settled() {
      while (running) await running;
    },
    stop() {
      stopped = true;
      pending.clear();
    },
    stats: () => ({ ...stats }),
  };
}

function leastAsked(mine: Map<string, Tracked>): string {
  let least: [string, number] | undefined;
  for (const [key, q] of mine) if (!least || q.asks < least[1]) least = [key, q.asks];
  return least![0];
}
