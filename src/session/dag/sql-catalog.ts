/**
 * `SessionCatalog` over the warm store's SQL seam (SQLite today, PostgreSQL later: the statements
 * are portable and numbers are normalised with `Number()` because PostgreSQL returns BIGINT as
 * text). Tables are created by the warm-store migrations (src/store/warm/schema.ts).
 */
import { CtxvmError, UsageError } from '../../errors.js';
import { isUniqueViolation, type SqlDatabase, type SqlExecutor, type SqlValue } from '../../store/warm/sql.js';
import type { AgentKind } from '../context-model.js';
import type {
  BranchRecord,
  IndexedFile,
  PendingSnapshot,
  SessionCatalog,
  SnapshotObjectRef,
  SnapshotRecord,
  SnapshotStats,
  StorageTotals,
} from './catalog.js';
import { countHolders, objectTotals, readObjectList, releaseObjectList, snapshotsHolding, writeObjectList } from './sql-object-lists.js';

type Row = Record<string, SqlValue>;

const num = (v: SqlValue | undefined): number => (v === null || v === undefined ? 0 : Number(v));
const str = (v: SqlValue | undefined): string => (v === null || v === undefined ? '' : String(v));
const optStr = (v: SqlValue | undefined): string | null => (v === null || v === undefined ? null : String(v));

/** Rows inserted per statement (SQLite allows 32 766 parameters; PostgreSQL 65 535). */
const INSERT_BATCH = 200;

const FILE_COLUMNS = [
  'path',
  'agent',
  'role',
  'session_id',
  'project',
  'project_dir',
  'size_bytes',
  'mtime_ms',
  'messages',
  'title',
  'scan_offset',
  'scan_state',
  'indexed_at_ms',
] as const;

function fileValues(f: IndexedFile): SqlValue[] {
  return [f.path, f.agent, f.role, f.sessionId, f.project, f.projectDir, f.sizeBytes, f.mtimeMs, f.messages, f.title, f.scanOffset, f.scanState, f.indexedAtMs];
}

function fileFromRow(r: Row): IndexedFile {
  return {
    path: str(r.path),
    agent: str(r.agent) as AgentKind,
    role: str(r.role) === 'subagent' ? 'subagent' : 'main',
    sessionId: optStr(r.session_id),
    project: optStr(r.project),
    projectDir: optStr(r.project_dir),
    sizeBytes: num(r.size_bytes),
    mtimeMs: num(r.mtime_ms),
    messages: num(r.messages),
    title: optStr(r.title),
    scanOffset: num(r.scan_offset),
    scanState: str(r.scan_state),
    indexedAtMs: num(r.indexed_at_ms),
  };
}

function parseStats(value: SqlValue | undefined): SnapshotStats | null {
  if (typeof value !== 'string' || !value) return null;
  try {
    return JSON.parse(value) as SnapshotStats;
  } catch {
    return null; // a damaged cache is recomputed
  }
}

function snapshotFromRow(r: Row, tags: string[]): SnapshotRecord {
  return {
    id: str(r.id),
    name: str(r.name),
    description: optStr(r.description),
    tags,
    agent: str(r.agent) as AgentKind,
    sessionId: str(r.session_id),
    sourcePath: str(r.source_path),
    project: optStr(r.project),
    manifestHash: str(r.manifest_hash),
    bytes: num(r.bytes),
    mainBytes: num(r.main_bytes),
    files: num(r.files),
    parentSnapshotId: optStr(r.parent_snapshot_id),
    sourceBranchId: optStr(r.source_branch_id),
    origin: str(r.origin) === 'import' ? 'import' : 'local',
    createdAtMs: num(r.created_at_ms),
    stats: parseStats(r.stats),
  };
}

function branchFromRow(r: Row): BranchRecord {
  return {
    id: str(r.id),
    name: str(r.name),
    snapshotId: str(r.snapshot_id),
    agent: str(r.agent) as AgentKind,
    sessionId: str(r.session_id),
    path: str(r.path),
    trimmed: num(r.trimmed) !== 0,
    cutAt: optStr(r.cut_at),
    createdAtMs: num(r.created_at_ms),
  };
}

/** Every column of `snapshots` but its object list (read only by the list functions). */
const SNAPSHOT_COLUMNS =
  'id, name, description, agent, session_id, source_path, project, manifest_hash, bytes, main_bytes, files, parent_snapshot_id, source_branch_id, origin, created_at_ms, stats';

const ID_PREFIX = /^[0-9a-f]{4,32}$/;

function nameTaken(name: string, kind: string): CtxvmError {
  return new CtxvmError('E_EXISTS', `the name "${name}" is already used by a ${kind}`, { hint: 'choose another name (names are unique across snapshots and branches)' });
}

/** Publishes a snapshot inside `tx`: row, tags and objects, and clears its pending row. */
async function insertSnapshot(tx: SqlExecutor, s: SnapshotRecord, objects: readonly SnapshotObjectRef[]): Promise<void> {
  if (await tx.get('SELECT id FROM branches WHERE name = ?', [s.name])) throw nameTaken(s.name, 'branch');
  try {
    await tx.run(
      `INSERT INTO snapshots (id, name, description, agent, session_id, source_path, project, manifest_hash, bytes, main_bytes, files,
         parent_snapshot_id, source_branch_id, origin, created_at_ms, stats)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        s.id,
        s.name,
        s.description,
        s.agent,
        s.sessionId,
        s.sourcePath,
        s.project,
        s.manifestHash,
        s.bytes,
        s.mainBytes,
        s.files,
        s.parentSnapshotId,
        s.sourceBranchId,
        s.origin,
        s.createdAtMs,
        s.stats ? JSON.stringify(s.stats) : null,
      ],
    );
  } catch (error) {
    if (isUniqueViolation(error) || (CtxvmError.is(error) && error.code === 'E_CONFLICT')) {
      if (await tx.get('SELECT id FROM snapshots WHERE name = ?', [s.name])) throw nameTaken(s.name, 'snapshot');
    }
    throw error;
  }
  for (const tag of [...new Set(s.tags)]) await tx.run('INSERT INTO snapshot_tags (snapshot_id, tag) VALUES (?, ?)', [s.id, tag]);
  await writeObjectList(tx, s.id, objects);
  await tx.run('DELETE FROM snapshot_pending WHERE id = ?', [s.id]);
}

/** Creates the SQL session catalog over an open (migrated) warm database. */
export function createSqlSessionCatalog(db: SqlDatabase): SessionCatalog {
  const tagsOf = async (ex: SqlExecutor, ids: string[] | 'all'): Promise<Map<string, string[]>> => {
    const rows =
      ids === 'all'
        ? await ex.all<Row>('SELECT snapshot_id, tag FROM snapshot_tags ORDER BY tag')
        : ids.length === 0
          ? []
          : await ex.all<Row>(`SELECT snapshot_id, tag FROM snapshot_tags WHERE snapshot_id IN (${ids.map(() => '?').join(', ')}) ORDER BY tag`, ids);
    const map = new Map<string, string[]>();
    for (const r of rows) {
      const id = str(r.snapshot_id);
      const list = map.get(id) ?? [];
      list.push(str(r.tag));
      map.set(id, list);
    }
    return map;
  };
  const oneSnapshot = async (where: string, params: SqlValue[]): Promise<SnapshotRecord | undefined> => {
    const row = await db.get<Row>(`SELECT ${SNAPSHOT_COLUMNS} FROM snapshots WHERE ${where}`, params);
    if (!row) return undefined;
    const tags = await tagsOf(db, [str(row.id)]);
    return snapshotFromRow(row, tags.get(str(row.id)) ?? []);
  };
  const byPrefix = async <T>(table: 'snapshots' | 'branches', ref: string, one: (id: string) => Promise<T | undefined>): Promise<T | undefined> => {
    if (!ID_PREFIX.test(ref)) return undefined;
    const rows = await db.all<Row>(`SELECT id, name FROM ${table} WHERE id LIKE ? ORDER BY id LIMIT 6`, [`${ref}%`]);
    if (rows.length === 0) return undefined;
    if (rows.length > 1) {
      throw new UsageError(`id prefix "${ref}" is ambiguous: ${rows.map((r) => `${str(r.id)} (${str(r.name)})`).join(', ')}`, {
        hint: 'give more characters of the id, or the name',
      });
    }
    return one(str(rows[0]!.id));
  };
  const nameInUse = async (ex: SqlExecutor, name: string): Promise<'snapshot' | 'branch' | undefined> => {
    if (await ex.get('SELECT id FROM snapshots WHERE name = ?', [name])) return 'snapshot';
    if (await ex.get('SELECT id FROM branches WHERE name = ?', [name])) return 'branch';
    return undefined;
  };
  return {
    async listIndexedFiles() {
      return (await db.all<Row>('SELECT * FROM session_files')).map(fileFromRow);
    },

    async upsertIndexedFiles(files) {
      if (files.length === 0) return;
      const updates = FILE_COLUMNS.filter((c) => c !== 'path')
        .map((c) => `${c} = excluded.${c}`)
        .join(', ');
      const row = `(${FILE_COLUMNS.map(() => '?').join(', ')})`;
      await db.transaction(async (tx) => {
        for (let i = 0; i < files.length; i += INSERT_BATCH) {
          const batch = files.slice(i, i + INSERT_BATCH);
          await tx.run(
            `INSERT INTO session_files (${FILE_COLUMNS.join(', ')}) VALUES ${batch.map(() => row).join(', ')} ON CONFLICT (path) DO UPDATE SET ${updates}`,
            batch.flatMap(fileValues),
          );
        }
      });
    },

    async removeIndexedFiles(paths) {
      if (paths.length === 0) return;
      await db.transaction(async (tx) => {
        for (let i = 0; i < paths.length; i += INSERT_BATCH) {
          const batch = paths.slice(i, i + INSERT_BATCH);
          await tx.run(`DELETE FROM session_files WHERE path IN (${batch.map(() => '?').join(', ')})`, batch);
        }
      });
    },

    async beginSnapshot(p) {
      await db.run('INSERT INTO snapshot_pending (id, name, pid, host, started_at_ms) VALUES (?, ?, ?, ?, ?)', [p.id, p.name, p.pid, p.host, p.startedAtMs]);
    },

    async commitSnapshot(s, objects) {
      await db.transaction((tx) => insertSnapshot(tx, s, objects));
    },

    async abandonSnapshot(id) {
      await db.run('DELETE FROM snapshot_pending WHERE id = ?', [id]);
    },

    async listPendingSnapshots() {
      const rows = await db.all<Row>('SELECT * FROM snapshot_pending ORDER BY started_at_ms');
      return rows.map((r) => ({ id: str(r.id), name: str(r.name), pid: num(r.pid), host: str(r.host), startedAtMs: num(r.started_at_ms) }));
    },

    async findSnapshot(ref) {
      return (
        (await oneSnapshot('name = ?', [ref])) ??
        (await oneSnapshot('id = ?', [ref])) ??
        (await byPrefix('snapshots', ref, (id) => oneSnapshot('id = ?', [id])))
      );
    },

    async listSnapshots() {
      const rows = await db.all<Row>(`SELECT ${SNAPSHOT_COLUMNS} FROM snapshots ORDER BY created_at_ms, id`);
      const tags = await tagsOf(db, 'all');
      return rows.map((r) => snapshotFromRow(r, tags.get(str(r.id)) ?? []));
    },

    async latestSnapshotOfSession(sessionId) {
      return oneSnapshot('session_id = ? ORDER BY created_at_ms DESC, id DESC LIMIT 1', [sessionId]);
    },

    snapshotObjects: (snapshotId) => readObjectList(db, snapshotId),

    snapshotsHolding: (hash) => snapshotsHolding(db, hash),

    countHolders: (hashes) => countHolders(db, hashes),

    async setSnapshotStats(snapshotId, stats) {
      await db.run('UPDATE snapshots SET stats = ? WHERE id = ?', [JSON.stringify(stats), snapshotId]);
    },

    async deleteSnapshots(snapshotIds, branchIds) {
      await db.transaction(async (tx) => {
        for (const id of branchIds) {
          await tx.run('UPDATE snapshots SET source_branch_id = NULL WHERE source_branch_id = ?', [id]);
          await tx.run('DELETE FROM branches WHERE id = ?', [id]);
        }
        for (const id of snapshotIds) {
          const row = await tx.get<Row>('SELECT parent_snapshot_id FROM snapshots WHERE id = ?', [id]);
          if (!row) continue;
          // Keep the chain of the session intact: successors now follow the deleted one's parent.
          await tx.run('UPDATE snapshots SET parent_snapshot_id = ? WHERE parent_snapshot_id = ?', [optStr(row.parent_snapshot_id), id]);
          await releaseObjectList(tx, id);
          await tx.run('DELETE FROM snapshots WHERE id = ?', [id]);
        }
      });
    },

    async addBranch(b, publish) {
      await db.transaction(async (tx) => {
        if (publish) await insertSnapshot(tx, publish.record, publish.objects);
        const used = await nameInUse(tx, b.name);
        if (used) throw nameTaken(b.name, used);
        if (!(await tx.get('SELECT id FROM snapshots WHERE id = ?', [b.snapshotId]))) {
          throw new CtxvmError('E_NOT_FOUND', `snapshot ${b.snapshotId} no longer exists: the branch cannot be recorded`);
        }
        await tx.run(
          'INSERT INTO branches (id, name, snapshot_id, agent, session_id, path, trimmed, cut_at, created_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
          [b.id, b.name, b.snapshotId, b.agent, b.sessionId, b.path, b.trimmed ? 1 : 0, b.cutAt, b.createdAtMs],
        );
      });
    },

    async findBranch(ref) {
      const one = async (where: string, params: SqlValue[]) => {
        const row = await db.get<Row>(`SELECT * FROM branches WHERE ${where}`, params);
        return row ? branchFromRow(row) : undefined;
      };
      return (await one('name = ?', [ref])) ?? (await one('id = ?', [ref])) ?? (await byPrefix('branches', ref, (id) => one('id = ?', [id])));
    },

    async branchOfSession(sessionId) {
      const row = await db.get<Row>('SELECT * FROM branches WHERE session_id = ? ORDER BY created_at_ms DESC LIMIT 1', [sessionId]);
      return row ? branchFromRow(row) : undefined;
    },

    async listBranches() {
      return (await db.all<Row>('SELECT * FROM branches ORDER BY created_at_ms, id')).map(branchFromRow);
    },

    nameInUse: (name) => nameInUse(db, name),

    async storageTotals(): Promise<StorageTotals> {
      const s = await db.get<Row>('SELECT COUNT(*) AS n, COALESCE(SUM(bytes), 0) AS logical, COALESCE(MAX(bytes), 0) AS largest FROM snapshots');
      const o = await objectTotals(db);
      return {
        snapshots: num(s?.n),
        logicalBytes: num(s?.logical),
        largestSnapshotBytes: num(s?.largest),
        objects: o.objects,
        storedBytes: o.storedBytes,
      };
    },
  };
}
