/**
 * The warm memory store: authoritative, per-user, with full-text search over a jieba-segmented
 * column. `MemoryStore.forUser(userId)` is the only way in, so no query can be built without a
 * user (DESIGN.md: users are isolated in the storage layer itself). Drivers: SQLite (default,
 * FTS5) and PostgreSQL (Step 5); one contract suite in test/contract/memory-store.contract.ts.
 */
import type { MessageClaim } from './message-claim.js';
import type { Decision, Fact, HistoryEntry, MemoryKind, Project, Task, TaskPriority, TaskStatus, Turn } from './model.js';

/** A new task; the store assigns id and times. */
export interface NewTask {
  title: string;
  status?: TaskStatus;
  priority?: TaskPriority;
  dueAtMs?: number | null;
  duePhrase?: string | null;
  projectId?: string | null;
  sourceTurnIds?: string[];
  confidence?: number;
}

/** Fields of a task that can change; omitted fields stay. */
export type TaskPatch = Partial<Pick<Task, 'title' | 'status' | 'priority' | 'dueAtMs' | 'duePhrase' | 'projectId'>>;

/** A new decision. */
export interface NewDecision {
  text: string;
  rationale?: string | null;
  taskId?: string | null;
  projectId?: string | null;
  sourceTurnIds?: string[];
}

/** A fact or preference; with a `key`, replaces the user's current value for that key. */
export interface NewFact {
  kind: 'fact' | 'preference';
  key?: string | null;
  text: string;
  importance?: number;
  sourceTurnIds?: string[];
}

/** Which records a full-text search looks at. */
export type SearchKind = 'turn' | MemoryKind;

/** One full-text hit. */
export interface SearchHit {
  kind: SearchKind;
  /** Record id (a turn id for turns). */
  id: string;
  /** Higher is better; comparable only within one search call (BM25-style, >= 0). */
  score: number;
}

/** Options of `UserMemoryStore.search`. */
export interface SearchOptions {
  /** Kinds to search (default all). */
  kinds?: readonly SearchKind[];
  /** Maximum hits (default 50). */
  limit?: number;
}

/** Options of `listTasks`. */
export interface ListTasksOptions {
  /** Only these statuses (default all). */
  status?: readonly TaskStatus[];
  /** Only tasks due before this instant, Unix ms. */
  dueBeforeMs?: number;
  limit?: number;
}

/** An open task with only what matching a message against it needs (`UserMemoryStore.openTaskTitles`). */
export interface OpenTaskTitle {
  id: string;
  title: string;
  status: TaskStatus;
  projectId: string | null;
}

/** Options of `UserMemoryStore.recordPool`. */
export interface RecordPoolOptions {
  /** Of each ordering (newest, most important, most recently used), this many records (>= 1). */
  perOrder: number;
  /** Fact and decision ids to include whatever their rank (the query's full-text hits). */
  ids?: readonly string[];
  /** Also records created in these spans, Unix ms, start inclusive, end exclusive (at most `perOrder` each). */
  createdWithin?: ReadonlyArray<{ startMs: number; endMs: number }>;
  /** Also a bounded pool of the user's tasks (`RecordPool.tasks`); see `TaskPoolOptions`. */
  tasks?: TaskPoolOptions;
  /** Also the access statistics of every record returned (`RecordPool.access`). */
  withAccess?: boolean;
}

/**
 * The tasks a rebuild ranks: of the open tasks, every one `about` accepts (read by title and
 * project of each open task, so none the query names is missed), those `ids` names, and of each
 * ordering (due soonest, most recently updated, high or urgent priority, most recently used)
 * `perOrder`; with `closed`, also the `perOrder` most recently updated closed tasks and the
 * closed tasks of `ids`.
 */
export interface TaskPoolOptions {
  /** Of each ordering, this many tasks (>= 1). */
  perOrder: number;
  /** Task ids to include whatever their rank (the query's full-text hits). */
  ids?: readonly string[];
  /** Whether closed (done, cancelled) tasks are wanted too. */
  closed?: boolean;
  /** Whether the query is about an open task (such tasks are always in the pool). */
  about?: (task: { title: string; projectId: string | null }) => boolean;
}

/** What `UserMemoryStore.recordPool` returns. */
export interface RecordPool {
  /** Every preference and keyed fact, and the free-form facts of the pool; most recently updated first. */
  facts: Fact[];
  /** Decisions of the pool, newest first. */
  decisions: Decision[];
  /** Time of the newest decision of each project that has one, Unix ms, by project id. */
  lastDecisionMs: Map<string, number>;
  /** With `RecordPoolOptions.tasks`: the task pool, open tasks first by due time (undated last), then closed ones, newest first. */
  tasks?: Task[];
  /** With `withAccess`: access statistics of the records returned (those ever used), keyed by `kind:id` (preferences under `fact`). */
  access?: Map<string, { count: number; lastMs: number }>;
}

/** Options of `history`. */
export interface HistoryOptions {
  kind?: MemoryKind;
  recordId?: string;
  /** Newest first, at most this many (default 100). */
  limit?: number;
}

/** Everything one user's memory holds, and the only door to it. */
export interface UserMemoryStore {
  readonly userId: string;
  /**
   * Memory version: increases on every write of this user (turns, tasks, projects, decisions,
   * facts). Cache keys include it, so a cached rebuild is never served after memory changed.
   */
  version(): Promise<number>;
  /**
   * `all`: the memory version; `records`: a version that increases on every write of a memory
   * record (task, project, decision, fact) and not when turns are appended; both in one read.
   * Optional: callers fall back to `version()` for both.
   */
  versions?(): Promise<{ all: number; records: number }>;

  /** Appends raw turns (id unique per user; an existing id is left unchanged). Indexed for search. */
  addTurns(turns: readonly Omit<Turn, 'userId'>[]): Promise<{ added: number }>;
  /** Turns by id, in the order asked; unknown ids are skipped. */
  getTurns(ids: readonly string[]): Promise<Turn[]>;
  /** The newest turns, oldest first. */
  recentTurns(limit: number): Promise<Turn[]>;
  /** Turns around one turn in time order (`before` earlier ones, `after` later ones, itself included). */
  turnNeighbours(id: string, before: number, after: number): Promise<Turn[]>;
  /**
   * `turnNeighbours` of several turns at once, keyed by id (ids not stored are missing), in fewer
   * round trips. Optional: callers fall back to `turnNeighbours` per id.
   */
  turnNeighbourhoods?(ids: readonly string[], before: number, after: number): Promise<Map<string, Turn[]>>;
  /** Number of turns stored. */
  countTurns(): Promise<number>;

  createTask(task: NewTask, turnId?: string | null): Promise<Task>;
  /** Applies a patch, recording one history entry per changed field; undefined if no such task. */
  updateTask(id: string, patch: TaskPatch, turnId?: string | null): Promise<Task | undefined>;
  /** Deletes a task (history keeps its last value); false if no such task. */
  deleteTask(id: string, turnId?: string | null): Promise<boolean>;
  getTask(id: string): Promise<Task | undefined>;
  /** Tasks, open ones first by due time, then the rest by update time (newest first). */
  listTasks(options?: ListTasksOptions): Promise<Task[]>;
  /**
   * The open tasks (todo, doing) in `listTasks` order, at most `limit`, with id, title, status and
   * project only: a light read for matching a message against every open task (the manager's
   * wider extraction pass), which needs no full rows. Optional: callers fall back to `listTasks`.
   */
  openTaskTitles?(limit: number): Promise<OpenTaskTitle[]>;

  /** The project with this name (case-insensitive), created if new. */
  ensureProject(name: string, turnId?: string | null): Promise<Project>;
  getProject(id: string): Promise<Project | undefined>;
  listProjects(): Promise<Project[]>;

  addDecision(decision: NewDecision, turnId?: string | null): Promise<Decision>;
  listDecisions(options?: { projectId?: string; limit?: number }): Promise<Decision[]>;

  /** Records a fact or preference; a keyed one replaces the previous value of that key (kept in history). */
  setFact(fact: NewFact, turnId?: string | null): Promise<Fact>;
  listFacts(options?: { kind?: 'fact' | 'preference' }): Promise<Fact[]>;
  /** The current value of a keyed fact or preference. */
  getFactByKey(key: string): Promise<Fact | undefined>;
  /**
   * A bounded selection of facts and decisions for ranking (the context rebuilder's), so its cost
   * does not grow with all the user ever said: every preference and keyed fact; of free-form facts
   * and decisions, the newest, the most important and the most recently used (`perOrder` of each),
   * those created in `createdWithin`, and those in `ids`. Optional: callers fall back to
   * `listFacts` and `listDecisions`.
   */
  recordPool?(options: RecordPoolOptions): Promise<RecordPool>;

  /** Full-text search over the segmented text of turns and memory records. */
  search(query: string, options?: SearchOptions): Promise<SearchHit[]>;
  /**
   * Several searches of one query (say turns, and records), one hit list per `searches` entry,
   * the same hits as calling `search` for each, with the query analysed and its term statistics
   * counted once. Optional: callers fall back to `search`.
   */
  searchMany?(query: string, searches: readonly SearchOptions[]): Promise<SearchHit[][]>;
  /** Change history, newest first. */
  history(options?: HistoryOptions): Promise<HistoryEntry[]>;
  /**
   * Marks records as used in a context (raises their weight in later retrieval). May be written
   * behind (the SQL store: within a second, or on `close()`; lost if the process dies first), but
   * this store's own `accessStats` and `recordPool` see it at once.
   */
  touch(kind: MemoryKind, ids: readonly string[], atMs: number): Promise<void>;
  /** `touch` for several kinds at once (one warm statement where the store can). Optional: callers fall back to `touch`. */
  touchMany?(touches: ReadonlyArray<{ kind: MemoryKind; ids: readonly string[] }>, atMs: number): Promise<void>;
  /** Access counts and last access of records (for retrieval weighting); missing ids have none. */
  accessStats(kind: MemoryKind, ids: readonly string[]): Promise<Map<string, { count: number; lastMs: number }>>;
  /**
   * Runs `fn` with a view of this user's memory inside ONE warm transaction: the writes `fn` makes
   * through the view commit together when it resolves, or none does when it throws — or when a
   * write inside failed, even one `fn` caught (nothing more runs in the unit then); reads through
   * the view see them. (processMessage stores a message and what it changed this way: one COMMIT,
   * and never the change without its source turn.) The view has no access statistics: `touch`,
   * `touchMany` and `accessStats` throw a UsageError inside. On PostgreSQL `fn` may run more than
   * once (see `SqlDatabase.transaction`), so it must have no effects outside the view. Optional:
   * callers fall back to writing step by step.
   */
  atomically?<T>(fn: (store: UserMemoryStore) => Promise<T>): Promise<T>;

  /**
   * Claims message id `id` for `owner` while it is being answered, atomically across every
   * process on this store (src/memory/message-claim.ts): true when this call holds the claim —
   * none was held, or the one held is one `canTakeOver` gives up on (its process died) — false
   * while another owner holds it. `atMs` is the claim's time, Unix ms. Not cached; called outside
   * `atomically`, since the claim must be visible to the others at once.
   */
  claimMessage(id: string, owner: string, atMs: number, canTakeOver: (held: MessageClaim) => boolean): Promise<boolean>;
  /** Drops `owner`'s claim of message id `id`; another owner's claim is left alone. */
  releaseMessage(id: string, owner: string): Promise<void>;
}

/** Options of `MemoryStore.forUser`. */
export interface UserScopeOptions {
  /**
   * Time stamped on the records and history entries written through this handle, Unix ms
   * (default: the store's clock). The manager passes a message's own time, so a replayed or
   * back-dated conversation keeps its dates.
   */
  atMs?: number;
  /**
   * Whether reads that any turn append retires — full-text hits, turn neighbourhoods — are stored
   * in the hot tier (default true). They are still answered from it when there. processMessage
   * rebuilds with false: its reply is appended right after, so what it stored could never be
   * read, and it would push out entries that can (stored turns, record lists). Honoured by the
   * cached store (cached-memory-store.ts); a warm store has nothing to store.
   */
  cacheVolatileReads?: boolean;
}

/** A warm memory store over one database. */
export interface MemoryStore {
  /** Which backend: "sqlite" or "postgres". */
  readonly driver: string;
  /** The door to one user's memory; throws a UsageError for an empty or non-string userId. */
  forUser(userId: string, options?: UserScopeOptions): UserMemoryStore;
  /** Closes the underlying database when this store opened it. */
  close(): Promise<void>;
  /**
   * Open tasks (todo, doing) of every user due at or before `untilMs` (Unix ms), earliest first
   * (ties by user id, then task id), at most `limit`. The one read across users — for the
   * reminder scheduler (src/memory/reminders), never for a prompt. Optional: a driver without it
   * cannot run reminders.
   */
  dueTasks?(untilMs: number, limit: number, options?: DueTasksOptions): Promise<DueTask[]>;
  /**
   * Users that have memory, most recently active first (ties by user id): counts and times only.
   * A read across users for the admin listing of the HTTP API (`GET /v1/users`), never for a
   * prompt. Optional: a driver without it cannot list users.
   */
  listUsers?(options?: ListUsersOptions): Promise<UserSummary[]>;
}

/** One user as `MemoryStore.listUsers` returns it. */
export interface UserSummary {
  userId: string;
  /** Raw turns in the warm store. */
  turns: number;
  /** Tasks of any status. */
  tasks: number;
  /** Latest turn or memory change, Unix ms; null when the user has neither. */
  lastActiveAtMs: number | null;
}

/** Options of `MemoryStore.listUsers`. */
export interface ListUsersOptions {
  /** At most this many users (default 1000). */
  limit?: number;
}

/** A task coming due, with its owner (what `MemoryStore.dueTasks` returns). */
export interface DueTask {
  userId: string;
  task: Task;
}

/** Options of `MemoryStore.dueTasks`. */
export interface DueTasksOptions {
  /** Only tasks due at or after this instant, Unix ms (default: no lower bound). */
  sinceMs?: number;
  /** Keyset paging: continue after this task (the last one of the previous page). */
  after?: { dueAtMs: number; userId: string; taskId: string };
}
