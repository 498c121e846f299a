/**
 * The memory engine's data model (DESIGN.md "Memory engine"): per user, tasks with a lifecycle,
 * projects, decisions, facts and preferences, raw turns, and a history of every change. Every
 * record carries its `userId`; stores never return a record of another user.
 *
 * Times are Unix ms. Ids are opaque strings chosen by the store (tasks, projects, decisions,
 * facts) or by the caller (turns: the ingested `id`, so benchmarks can match `sources`).
 */

/** A task's place in its lifecycle. */
export type TaskStatus = 'todo' | 'doing' | 'done' | 'cancelled';

/** Whether `status` is an open task's (todo or doing). */
export const isOpenStatus = (status: unknown): boolean => status === 'todo' || status === 'doing';

/** Task priority; `normal` unless the text says otherwise (紧急/ASAP → urgent, 重要/high priority → high). */
export type TaskPriority = 'low' | 'normal' | 'high' | 'urgent';

/** Who wrote a turn. */
export type TurnRole = 'user' | 'assistant' | 'system';

/** One raw chat message, archived as written. */
export interface Turn {
  /** Caller-given id (e.g. LoCoMo "D1:3") or a generated one; unique per user. */
  id: string;
  userId: string;
  role: TurnRole;
  /** Display name of the speaker, when the source has one (LoCoMo "Caroline"). */
  speaker: string | null;
  text: string;
  /** When it was said, Unix ms. */
  atMs: number;
  /** Conversation/session grouping, when the source has one (LoCoMo "session_3"). */
  sessionId: string | null;
}

/** A task the user wants done. */
export interface Task {
  id: string;
  userId: string;
  title: string;
  status: TaskStatus;
  priority: TaskPriority;
  /** When it is due, Unix ms, or null. */
  dueAtMs: number | null;
  /** The phrase the due time came from, as written ("下班前", "by Friday"). */
  duePhrase: string | null;
  projectId: string | null;
  createdAtMs: number;
  updatedAtMs: number;
  /** Ids of the turns this task came from or was changed by. */
  sourceTurnIds: string[];
  /** Extraction confidence 0..1 of the turn that created it. */
  confidence: number;
}

/** A named body of work tasks and decisions belong to. */
export interface Project {
  id: string;
  userId: string;
  name: string;
  createdAtMs: number;
  updatedAtMs: number;
  sourceTurnIds: string[];
}

/** Something decided, with why. */
export interface Decision {
  id: string;
  userId: string;
  text: string;
  rationale: string | null;
  taskId: string | null;
  projectId: string | null;
  createdAtMs: number;
  sourceTurnIds: string[];
}

/** A fact about the user or their world, or a preference (`kind: 'preference'`). */
export interface Fact {
  id: string;
  userId: string;
  kind: 'fact' | 'preference';
  /**
   * Stable key for things that have one value at a time ("timeZone", "taskSort", "name"); a new
   * value for the same key replaces the old one (kept in history). Null for free-form facts.
   */
  key: string | null;
  /** The statement; for a keyed fact, its normalised value ("Asia/Shanghai", "priority"). */
  text: string;
  createdAtMs: number;
  updatedAtMs: number;
  sourceTurnIds: string[];
  /** 0..1, how much this matters when packing a context (default 0.5). */
  importance: number;
}

/** Kinds of memory records that have history. */
export type MemoryKind = 'task' | 'project' | 'decision' | 'fact';

/** One change to one field of one record: latest wins, the old value is kept here. */
export interface HistoryEntry {
  /** Monotonic per store. */
  seq: number;
  userId: string;
  kind: MemoryKind;
  recordId: string;
  /** Field name ("status", "dueAtMs", …) or "*" for create/delete. */
  field: string;
  /** JSON-encoded old value; null on create. */
  oldValue: string | null;
  /** JSON-encoded new value; null on delete. */
  newValue: string | null;
  /** Turn that caused the change, when known. */
  turnId: string | null;
  atMs: number;
}
