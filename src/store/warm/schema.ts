/**
 * The warm store's schema, as one ordered list of migrations (later steps append theirs: memory
 * tables, full-text indexes). Portable SQL only — TEXT/INTEGER/BIGINT, `?` placeholders, no
 * AUTOINCREMENT, times as Unix ms in BIGINT, JSON documents in TEXT — so the PostgreSQL driver
 * runs the same steps.
 */
import type { Migration } from './migrations.js';

/** Step 1: the session catalog (discovery index, snapshot DAG, branches). */
const SESSION_CATALOG = `
CREATE TABLE session_files (
  path TEXT PRIMARY KEY,
  agent TEXT NOT NULL,
  role TEXT NOT NULL,
  session_id TEXT,
  project TEXT,
  project_dir TEXT,
  size_bytes BIGINT NOT NULL,
  mtime_ms BIGINT NOT NULL,
  messages INTEGER NOT NULL,
  title TEXT,
  scan_offset BIGINT NOT NULL,
  scan_state TEXT NOT NULL,
  indexed_at_ms BIGINT NOT NULL
);
CREATE INDEX session_files_session ON session_files (session_id);

CREATE TABLE snapshots (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  description TEXT,
  agent TEXT NOT NULL,
  session_id TEXT NOT NULL,
  source_path TEXT NOT NULL,
  project TEXT,
  manifest_hash TEXT NOT NULL,
  bytes BIGINT NOT NULL,
  main_bytes BIGINT NOT NULL,
  files INTEGER NOT NULL,
  parent_snapshot_id TEXT,
  source_branch_id TEXT,
  origin TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL,
  stats TEXT
);
CREATE INDEX snapshots_session ON snapshots (session_id);

CREATE TABLE snapshot_tags (
  snapshot_id TEXT NOT NULL REFERENCES snapshots (id) ON DELETE CASCADE,
  tag TEXT NOT NULL,
  PRIMARY KEY (snapshot_id, tag)
);

CREATE TABLE snapshot_objects (
  snapshot_id TEXT NOT NULL REFERENCES snapshots (id) ON DELETE CASCADE,
  hash TEXT NOT NULL,
  size_bytes BIGINT NOT NULL,
  stored_bytes BIGINT NOT NULL,
  PRIMARY KEY (snapshot_id, hash)
);
CREATE INDEX snapshot_objects_hash ON snapshot_objects (hash);

CREATE TABLE snapshot_pending (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  pid INTEGER NOT NULL,
  host TEXT NOT NULL,
  started_at_ms BIGINT NOT NULL
);

CREATE TABLE branches (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  snapshot_id TEXT NOT NULL REFERENCES snapshots (id),
  agent TEXT NOT NULL,
  session_id TEXT NOT NULL,
  path TEXT NOT NULL,
  trimmed INTEGER NOT NULL,
  cut_at TEXT,
  created_at_ms BIGINT NOT NULL
);
CREATE INDEX branches_snapshot ON branches (snapshot_id);
CREATE INDEX branches_session ON branches (session_id);
`;

/** Every warm-store migration, in order. Append only. */
export const WARM_MIGRATIONS: readonly Migration[] = [{ version: 1, name: 'session catalog', up: SESSION_CATALOG }];
