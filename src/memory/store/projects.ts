/** Projects of one user: found by name case-insensitively, created on first mention. */
import { UsageError } from '../../errors.js';
import type { Project } from '../model.js';
import { write, type UserScope } from './context.js';
import { followRecordWrite } from './open-tasks.js';
import { newRecordId } from './ids.js';
import { idList, num, str, withSource, type Row } from './rows.js';

/** The lookup key of a project name: trimmed, NFKC-normalised, lower-cased. */
export const projectNameKey = (name: string): string => name.trim().normalize('NFKC').toLowerCase();

/** A project row as a Project. */
export function projectFromRow(userId: string, r: Row): Project {
  return {
    id: str(r.id),
    userId,
    name: str(r.name),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
    sourceTurnIds: idList(r.source_turn_ids),
  };
}

/** `UserMemoryStore.ensureProject`. */
export async function ensureProject(scope: UserScope, name: string, turnId?: string | null): Promise<Project> {
  if (typeof name !== 'string' || name.trim() === '') throw new UsageError(`project name: expected a non-empty string, got ${JSON.stringify(name)}`);
  const key = projectNameKey(name);
  return write(scope, async (w) => {
    followRecordWrite(w, scope); // (no task changes: the open tasks the store remembers stay current)
    const row = await w.tx.get<Row>('SELECT * FROM memory_projects WHERE user_id = ? AND name_key = ?', [w.userId, key]);
    if (row) {
      const project = projectFromRow(w.userId, row);
      const sources = withSource(project.sourceTurnIds, turnId);
      if (sources.length === project.sourceTurnIds.length) return project;
      // A new mention is provenance, not a change of content: no history entry, but a write.
      w.changed();
      await w.tx.run('UPDATE memory_projects SET source_turn_ids = ?, updated_at_ms = ? WHERE user_id = ? AND id = ?', [JSON.stringify(sources), w.atMs, w.userId, project.id]);
      return { ...project, sourceTurnIds: sources, updatedAtMs: w.atMs };
    }
    const project: Project = {
      id: newRecordId('project', w.atMs),
      userId: w.userId,
      name: name.trim(),
      createdAtMs: w.atMs,
      updatedAtMs: w.atMs,
      sourceTurnIds: withSource([], turnId),
    };
    await w.tx.run(
      'INSERT INTO memory_projects (user_id, id, seq, name, name_key, created_at_ms, updated_at_ms, source_turn_ids) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      [w.userId, project.id, w.nextSeq(), project.name, key, w.atMs, w.atMs, JSON.stringify(project.sourceTurnIds)],
    );
    await w.history('project', project.id, '*', undefined, project, turnId);
    await w.index('project', project.id, project.name);
    return project;
  });
}

/** `UserMemoryStore.getProject`. */
export async function getProject(scope: UserScope, id: string): Promise<Project | undefined> {
  const row = await scope.ctx.db.get<Row>('SELECT * FROM memory_projects WHERE user_id = ? AND id = ?', [scope.userId, id]);
  return row ? projectFromRow(scope.userId, row) : undefined;
}

/** `UserMemoryStore.listProjects`: most recently updated first. */
export async function listProjects(scope: UserScope): Promise<Project[]> {
  const rows = await scope.ctx.db.all<Row>('SELECT * FROM memory_projects WHERE user_id = ? ORDER BY updated_at_ms DESC, seq DESC', [scope.userId]);
  return rows.map((r) => projectFromRow(scope.userId, r));
}
