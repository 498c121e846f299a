/**
 * Step 2 of processMessage, "update": applies what the extractor read to the warm store, with
 * history (the store records old and new values), and reports what changed so the manager can
 * keep its list of recently mentioned records.
 */
import type { Extraction, RecentEntity } from './extraction.js';
import type { UserMemoryStore } from './memory-store.js';

/** One change made to memory. */
export interface AppliedChange {
  action: 'created' | 'updated' | 'completed' | 'deleted' | 'recorded';
  kind: RecentEntity['kind'];
  id: string;
  /** Title, name or statement of the record. */
  text: string;
}

/** Intents that write memory (others only read it). */
export const WRITE_INTENTS: ReadonlySet<Extraction['intent']> = new Set([
  'create_task',
  'update_task',
  'complete_task',
  'delete_task',
  'record_decision',
  'record_fact',
  'set_preference',
]);

/** Applies `x` to `store` as turn `turnId`; returns the changes (empty when nothing applied). */
export async function applyExtraction(store: UserMemoryStore, x: Extraction, turnId: string): Promise<AppliedChange[]> {
  const sources = [turnId];
  switch (x.intent) {
    case 'create_task': {
      if (!x.task?.title) return [];
      const project = x.task.project ? await store.ensureProject(x.task.project, turnId) : undefined;
      const task = await store.createTask(
        {
          title: x.task.title,
          status: x.task.status === 'done' || x.task.status === 'cancelled' ? 'todo' : x.task.status,
          priority: x.task.priority,
          dueAtMs: x.task.due,
          duePhrase: x.task.duePhrase,
          projectId: project?.id ?? null,
          sourceTurnIds: sources,
          confidence: x.confidence,
        },
        turnId,
      );
      const changes: AppliedChange[] = [{ action: 'created', kind: 'task', id: task.id, text: task.title }];
      if (project) changes.push({ action: 'recorded', kind: 'project', id: project.id, text: project.name });
      return changes;
    }
    case 'complete_task':
    case 'update_task':
    case 'delete_task': {
      if (x.target?.kind !== 'task') return [];
      const current = await store.getTask(x.target.id);
      if (!current) return [];
      if (x.intent === 'delete_task') {
        await store.deleteTask(current.id, turnId);
        return [{ action: 'deleted', kind: 'task', id: current.id, text: current.title }];
      }
      if (x.intent === 'complete_task') {
        const done = await store.updateTask(current.id, { status: 'done' }, turnId);
        return done ? [{ action: 'completed', kind: 'task', id: done.id, text: done.title }] : [];
      }
      const patch: Parameters<UserMemoryStore['updateTask']>[1] = {};
      if (x.task) {
        // Only what the message states changes ("改到下午四点" moves the due time and nothing else).
        const stated = new Set(x.task.stated ?? ['due', 'priority', 'status', 'project']);
        if (stated.has('due') && x.task.due !== null && x.task.due !== current.dueAtMs) Object.assign(patch, { dueAtMs: x.task.due, duePhrase: x.task.duePhrase });
        if (stated.has('priority') && (x.task.stated || x.task.priority !== 'normal') && x.task.priority !== current.priority) patch.priority = x.task.priority;
        if (stated.has('status') && x.task.status !== current.status && (x.task.stated || x.task.status !== 'todo')) patch.status = x.task.status;
        if (stated.has('title') && x.task.title && x.task.title !== current.title) patch.title = x.task.title;
        if (stated.has('project') && x.task.project) patch.projectId = (await store.ensureProject(x.task.project, turnId)).id;
      }
      if (Object.keys(patch).length === 0) return [];
      const updated = await store.updateTask(current.id, patch, turnId);
      return updated ? [{ action: 'updated', kind: 'task', id: updated.id, text: updated.title }] : [];
    }
    case 'record_decision': {
      if (!x.memory?.text) return [];
      const decision = await store.addDecision(
        { text: x.memory.text, rationale: x.memory.rationale ?? null, taskId: x.target?.kind === 'task' ? x.target.id : null, projectId: x.target?.kind === 'project' ? x.target.id : null, sourceTurnIds: sources },
        turnId,
      );
      return [{ action: 'recorded', kind: 'decision', id: decision.id, text: decision.text }];
    }
    case 'record_fact':
    case 'set_preference': {
      if (!x.memory?.text) return [];
      const fact = await store.setFact({ kind: x.intent === 'set_preference' ? 'preference' : 'fact', key: x.memory.key ?? null, text: x.memory.key && x.memory.value ? x.memory.value : x.memory.text, sourceTurnIds: sources }, turnId);
      return [{ action: 'recorded', kind: 'fact', id: fact.id, text: fact.text }];
    }
    default:
      return [];
  }
}
