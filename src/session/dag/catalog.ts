/**
 * The session catalog: what the warm store knows about sessions — the discovery index, the
 * snapshot DAG (snapshots, the branches made from them, later snapshots of those branches) and
 * the objects each snapshot holds. One interface, so the SQLite implementation and a later
 * PostgreSQL one are interchangeable; the bytes themselves live in the object store.
 */
import type { AgentKind, TokenCategory } from '../context-model.js';

/** Role of an indexed file: a session log, or a subagent transcript belonging to one. */
export type IndexedFileRole = 'main' | 'subagent';

/** One row of the discovery index, keyed by path. */
export interface IndexedFile {
  /** Absolute path of the file. */
  path: string;
  agent: AgentKind;
  role: IndexedFileRole;
  /** The session the file belongs to (its own id for a main file), when known. */
  sessionId: string | null;
  /** Working directory recorded in the lines (`cwd`), when known. */
  project: string | null;
  /** Claude Code: the `projects/<folder>` name holding the file; null for Codex. */
  projectDir: string | null;
  /** File size when indexed, bytes. */
  sizeBytes: number;
  /** File modification time when indexed, Unix ms. */
  mtimeMs: number;
  /** Conversation messages counted in the file (see discovery/probe.ts for the rule). */
  messages: number;
  /** Session title (Claude Code `summary` / `custom-title` lines), when present. */
  title: string | null;
  /** Bytes read so far: the end of the last complete line, where an append-only rescan resumes. */
  scanOffset: number;
  /** Probe state at `scanOffset` (JSON), so a grown file is read from there only. */
  scanState: string;
  /** When the row was written, Unix ms. */
  indexedAtMs: number;
}

/** Numbers computed from a snapshot's content and cached in the catalog. */
export interface SnapshotStats {
  /** Tokens of the context the agent would send on resume. */
  tokens: number;
  /** Tokens per category. */
  breakdown: Record<TokenCategory, number>;
  /** How tokens were counted, e.g. "o200k_base*1.2; images by pixel size". */
  tokenizer: string;
  /** Messages (Claude) or items (Codex) of the reconstructed context. */
  messages: number;
  /** Validation errors found in the captured session. */
  errors: number;
  /** Model recorded in the session, when any. */
  model: string | null;
  /** When the numbers were computed, Unix ms. */
  computedAtMs: number;
}

/** Where a snapshot came from. */
export type SnapshotOrigin = 'local' | 'import';

/** One immutable node of the DAG. */
export interface SnapshotRecord {
  /** Random id, 16 lowercase hex characters. */
  id: string;
  /** Unique name chosen by the user. */
  name: string;
  description: string | null;
  /** Sorted, distinct. */
  tags: string[];
  agent: AgentKind;
  /** Id of the captured session. */
  sessionId: string;
  /** Path of the captured session file at capture time (the original path, for an import). */
  sourcePath: string;
  /** Working directory of the session, when known. */
  project: string | null;
  /** Address of the manifest object in the object store. */
  manifestHash: string;
  /** Logical size: all captured files, bytes. */
  bytes: number;
  /** Logical size of the main session file, bytes. */
  mainBytes: number;
  /** Files captured (main, subagents, tool results). */
  files: number;
  /** The previous snapshot of the same session, if any. */
  parentSnapshotId: string | null;
  /** The branch whose session this snapshot captured, if the session is a ctxvm branch. */
  sourceBranchId: string | null;
  origin: SnapshotOrigin;
  /** Unix ms. */
  createdAtMs: number;
  /** Cached numbers (tokens, composition), once computed. */
  stats: SnapshotStats | null;
}

/** An object a snapshot holds a reference on. */
export interface SnapshotObjectRef {
  /** Object address (sha256 hex). */
  hash: string;
  /** Uncompressed size, bytes. */
  sizeBytes: number;
  /** Bytes the object occupies in the object store, bytes. */
  storedBytes: number;
}

/** A snapshot being written: its objects are referenced but its row is not yet published. */
export interface PendingSnapshot {
  id: string;
  name: string;
  /** Process writing it. */
  pid: number;
  /** Host of that process (a pid means nothing elsewhere). */
  host: string;
  /** Unix ms. */
  startedAtMs: number;
}

/** The edge snapshot → new session. */
export interface BranchRecord {
  /** Random id, 16 lowercase hex characters. */
  id: string;
  /** Unique name (shared namespace with snapshots). */
  name: string;
  /** The snapshot it was made from. */
  snapshotId: string;
  agent: AgentKind;
  /** Id of the new session. */
  sessionId: string;
  /** Where the new session file was written. */
  path: string;
  /** Whether the branch was trimmed. */
  trimmed: boolean;
  /** Message (uuid or turn) the branch was cut at, if any. */
  cutAt: string | null;
  /** Unix ms. */
  createdAtMs: number;
}

/** Storage used by snapshots. */
export interface StorageTotals {
  /** Snapshots in the catalog. */
  snapshots: number;
  /** Sum of the captured files' sizes over all snapshots, bytes. */
  logicalBytes: number;
  /** Stored size of the distinct objects the snapshots reference, bytes. */
  storedBytes: number;
  /** Distinct objects referenced. */
  objects: number;
  /** Largest snapshot's logical size, bytes. */
  largestSnapshotBytes: number;
}

/** A snapshot written but not published yet, to be published with its branch (`addBranch`). */
export interface SnapshotToPublish {
  record: SnapshotRecord;
  objects: readonly SnapshotObjectRef[];
}

/** What the warm store knows about sessions. */
export interface SessionCatalog {
  /** Every indexed file, main sessions and subagent transcripts. */
  listIndexedFiles(): Promise<IndexedFile[]>;
  /** Inserts or replaces index rows (keyed by path), in one transaction. */
  upsertIndexedFiles(files: readonly IndexedFile[]): Promise<void>;
  /** Drops the index rows of these paths. */
  removeIndexedFiles(paths: readonly string[]): Promise<void>;

  /** Records that a snapshot is being written, so gc spares its objects until it commits or its writer dies. */
  beginSnapshot(pending: PendingSnapshot): Promise<void>;
  /** Publishes a snapshot (row, tags, objects) and clears its pending row, in one transaction; `E_EXISTS` if the name is taken. */
  commitSnapshot(record: SnapshotRecord, objects: readonly SnapshotObjectRef[]): Promise<void>;
  /** Forgets a pending snapshot (after a failure, or once gc found its writer gone). */
  abandonSnapshot(id: string): Promise<void>;
  /** Snapshots being written, or left behind by a killed writer. */
  listPendingSnapshots(): Promise<PendingSnapshot[]>;
  /** A snapshot by exact name, else exact id, else unique id prefix (at least 4 characters). */
  findSnapshot(ref: string): Promise<SnapshotRecord | undefined>;
  /** Every snapshot, oldest first. */
  listSnapshots(): Promise<SnapshotRecord[]>;
  /** The newest snapshot of a session, if any. */
  latestSnapshotOfSession(sessionId: string): Promise<SnapshotRecord | undefined>;
  /** Objects a snapshot references (chunks and manifest). */
  snapshotObjects(snapshotId: string): Promise<SnapshotObjectRef[]>;
  /** Every snapshot id that references `hash` (a scan of every list: for a count use `countHolders`). */
  snapshotsHolding(hash: string): Promise<string[]>;
  /** How many snapshots reference each of `hashes` (0 for none). */
  countHolders(hashes: readonly string[]): Promise<Map<string, number>>;
  /** Caches computed numbers on a snapshot. */
  setSnapshotStats(snapshotId: string, stats: SnapshotStats): Promise<void>;
  /** Deletes snapshots and branches in one transaction; later snapshots are relinked to the deleted ones' parents. */
  deleteSnapshots(snapshotIds: readonly string[], branchIds: readonly string[]): Promise<void>;

  /**
   * Records a branch; `E_EXISTS` if the name is taken, `E_NOT_FOUND` if its snapshot is gone.
   * With `publish`, that snapshot (the branch's) is published first, as `commitSnapshot` does, in
   * the same transaction: the two appear together or not at all.
   */
  addBranch(record: BranchRecord, publish?: SnapshotToPublish): Promise<void>;
  /** A branch by exact name, else exact id, else unique id prefix (at least 4 characters). */
  findBranch(ref: string): Promise<BranchRecord | undefined>;
  /** The branch that created session `sessionId`, if any. */
  branchOfSession(sessionId: string): Promise<BranchRecord | undefined>;
  /** Every branch, oldest first. */
  listBranches(): Promise<BranchRecord[]>;
  /** Whether a snapshot or a branch already uses `name`. */
  nameInUse(name: string): Promise<'snapshot' | 'branch' | undefined>;

  /** Logical and stored bytes of all snapshots. */
  storageTotals(): Promise<StorageTotals>;
}
