/**
 * The warm memory store over the warm tier's SQL seam (SQLite today, PostgreSQL in Step 5). The
 * tables come from the warm-store migrations (src/store/warm/schema.ts, step 2 "memory"); the
 * full-text index is built by the dialect on first use. `forUser` is the only door: every
 * statement behind it filters by the user id it was opened with.
 *
 *   context.ts      shared parts, and `write()`: transaction + history + search rows + version
 *   turns.ts        raw turns (turns-postgres.ts: neighbourhoods in one PostgreSQL statement)
 *   tasks.ts        tasks and their lifecycle
 *   projects.ts     projects           decisions.ts decisions        facts.ts  facts, preferences
 *   history.ts      change history     access.ts    access stats     search.ts full-text search
 *   message-claims.ts  which process is answering a message id (idempotent requests)
 *   fulltext*.ts    the dialect-specific full-text index
 */
import { UsageError } from '../../errors.js';
import { openWarmDatabase } from '../../store/warm/open.js';
import type { SqlDatabase } from '../../store/warm/sql.js';
import { createSegmenter } from '../../text/segment.js';
import { createSearchAnalyzer } from '../analyzer.js';
import type { MemoryStore, UserMemoryStore, UserScopeOptions } from '../memory-store.js';
import { accessStats, flushTouches, touch, touchMany } from './access.js';
import { atomically } from './atomic.js';
import { assertUserId, userKeyOf, type Analyzer, type StoreContext, type UserScope } from './context.js';
import { addDecision, listDecisions } from './decisions.js';
import { getFactByKey, listFacts, setFact } from './facts.js';
import { listDueTasks } from './due-tasks.js';
import { listUsers } from './users.js';
import { fullTextDialectFor } from './fulltext.js';
import type { SqliteFullTextOptions } from './fulltext-sqlite.js';
import { listHistory } from './history.js';
import { claimMessage, releaseMessage } from './message-claims.js';
import { ensureProject, getProject, listProjects } from './projects.js';
import { num, type Row } from './rows.js';
import { recordPool } from './record-pool.js';
import { search, searchMany } from './search.js';
import { createTask, deleteTask, getTask, listTasks, openTaskTitles, updateTask } from './tasks.js';
import { addTurns, countTurns, getTurns, recentTurns, turnNeighbourhoods, turnNeighbours } from './turns.js';
import { turnNeighbourhoodsPostgres } from './turns-postgres.js';

export type { Analyzer } from './context.js';

/** Options of `createSqlMemoryStore`. */
export interface SqlMemoryStoreOptions {
  /** Text → search tokens, for indexing and queries alike (default: the jieba segmenter's `segment`). */
  analyzer?: Analyzer;
  /** Clock, Unix ms (default `Date.now`); stamps record and history times. */
  now?: () => number;
  /** Called by `close()` (set by `openMemoryStore`, which owns the database). */
  onClose?: () => Promise<void>;
  /** Options of the full-text dialect (SQLite: the resident indexes' limits). */
  fullText?: SqliteFullTextOptions;
}

/** A memory store over SQL, with the database it runs on (for components sharing it, e.g. the turn archive). */
export interface SqlMemoryStore extends MemoryStore {
  /** The warm database; owned by the store only when it came from `openMemoryStore`. */
  readonly db: SqlDatabase;
}

/** Options of `openMemoryStore`. */
export interface OpenMemoryStoreOptions {
  /** SQLite file path (`CtxvmConfig.db`); the file and its folder are created, migrations applied. */
  db: string;
  /** Text → search tokens (default: the jieba segmenter). */
  analyzer?: Analyzer;
  /** Clock, Unix ms (default `Date.now`). */
  now?: () => number;
}

/**
 * The default analyzer, the same one the rebuilder queries with (src/memory/analyzer.ts): jieba
 * search-mode segmentation, stopwords removed, English stemmed, CJK bigrams; built on first use.
 */
export function defaultAnalyzer(): Analyzer {
  let analyze: Analyzer | undefined;
  return (text) => {
    analyze ??= createSearchAnalyzer({ segmenter: createSegmenter() });
    return analyze(text);
  };
}

/** Creates the memory store over an open, migrated warm database; `close()` leaves `db` open. */
export function createSqlMemoryStore(db: SqlDatabase, options: SqlMemoryStoreOptions = {}): SqlMemoryStore {
  const fullText = fullTextDialectFor(db.dialect, options.fullText);
  let ready: Promise<void> | undefined;
  const ctx: StoreContext = {
    db,
    analyzer: options.analyzer ?? defaultAnalyzer(),
    now: options.now ?? Date.now,
    fullText,
    ready() {
      ready ??= fullText.ensure(db).catch((error: unknown) => {
        ready = undefined; // a failed build is retried by the next call
        throw error;
      });
      return ready;
    },
  };
  let closed = false;
  return {
    driver: db.dialect,
    db,
    forUser(userId: string, scope?: UserScopeOptions) {
      assertUserId(userId);
      const atMs = scope?.atMs;
      if (atMs !== undefined && !Number.isFinite(atMs)) throw new UsageError(`forUser: atMs must be a finite Unix ms instant, got ${String(atMs)}`);
      return userStore({ ctx, userId, userKey: userKeyOf(userId), ...(atMs !== undefined ? { atMs } : {}) });
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await flushTouches(ctx); // the buffered access statistics (access.ts)
      } finally {
        await options.onClose?.();
      }
    },
    // reminders (src/memory/reminders): the one cross-user read, see due-tasks.ts
    dueTasks: (untilMs, limit, dueOptions) => listDueTasks(db, untilMs, limit, dueOptions),
    // the admin listing of GET /v1/users: counts and times only, see users.ts
    listUsers: (listOptions) => listUsers(db, listOptions),
  };
}

/** Opens the warm database (migrations applied) and a memory store over it; `close()` closes the database. */
export async function openMemoryStore(options: OpenMemoryStoreOptions): Promise<SqlMemoryStore> {
  const db = await openWarmDatabase({ db: options.db, ...(options.now ? { now: options.now } : {}) });
  return createSqlMemoryStore(db, {
    ...(options.analyzer ? { analyzer: options.analyzer } : {}),
    ...(options.now ? { now: options.now } : {}),
    onClose: () => db.close(),
  });
}

function userStore(scope: UserScope): UserMemoryStore {
  const versions = async () => {
    const row = await scope.ctx.db.get<Row>('SELECT version, records_version FROM memory_versions WHERE user_id = ?', [scope.userId]);
    return { all: num(row?.version), records: num(row?.records_version) };
  };
  return {
    userId: scope.userId,
    version: async () => (await versions()).all,
    versions,
    addTurns: (turns) => addTurns(scope, turns),
    getTurns: (ids) => getTurns(scope, ids),
    recentTurns: (limit) => recentTurns(scope, limit),
    turnNeighbours: (id, before, after) => turnNeighbours(scope, id, before, after),
    turnNeighbourhoods: (ids, before, after) => (scope.ctx.db.dialect === 'postgres' ? turnNeighbourhoodsPostgres : turnNeighbourhoods)(scope, ids, before, after),
    countTurns: () => countTurns(scope),
    createTask: (task, turnId) => createTask(scope, task, turnId),
    updateTask: (id, patch, turnId) => updateTask(scope, id, patch, turnId),
    deleteTask: (id, turnId) => deleteTask(scope, id, turnId),
    getTask: (id) => getTask(scope, id),
    listTasks: (options) => listTasks(scope, options),
    openTaskTitles: (limit) => openTaskTitles(scope, limit),
    ensureProject: (name, turnId) => ensureProject(scope, name, turnId),
    getProject: (id) => getProject(scope, id),
    listProjects: () => listProjects(scope),
    addDecision: (decision, turnId) => addDecision(scope, decision, turnId),
    listDecisions: (options) => listDecisions(scope, options),
    setFact: (fact, turnId) => setFact(scope, fact, turnId),
    listFacts: (options) => listFacts(scope, options),
    getFactByKey: (key) => getFactByKey(scope, key),
    recordPool: (options) => recordPool(scope, options),
    search: (query, options) => search(scope, query, options),
    searchMany: (query, searches) => searchMany(scope, query, searches),
    history: (options) => listHistory(scope, options),
    touch: (kind, ids, atMs) => touch(scope, kind, ids, atMs),
    touchMany: (touches, atMs) => touchMany(scope, touches, atMs),
    accessStats: (kind, ids) => accessStats(scope, kind, ids),
    atomically: (fn) => atomically(scope, userStore, fn),
    claimMessage: (id, owner, atMs, canTakeOver) => claimMessage(scope, id, owner, atMs, canTakeOver),
    releaseMessage: (id, owner) => releaseMessage(scope, id, owner),
  };
}
