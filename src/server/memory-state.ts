/**
 * `GET /v1/users/{user}/memory`: one user's whole memory state — tasks, projects, decisions,
 * facts and preferences — each record with its own change history, newest first. Read through
 * the user's door (`manager.user`), so it can only ever see that user's rows.
 */
import type { z } from 'zod';
import { zoneId } from '../memory/format-time.js';
import type { MemoryManager } from '../memory/manager.js';
import type { HistoryEntry, Task } from '../memory/model.js';
import type { HistoryView } from './schemas.js';
import type { TaskJson } from './memory-ops.js';

/** One history entry as the API returns it (values decoded from their JSON). */
export type HistoryJson = z.infer<typeof HistoryView>;

/** Most history entries read for one state (the newest; older ones are left out). */
export const MEMORY_STATE_HISTORY_LIMIT = 10_000;

/** The whole state of one user's memory. */
export interface MemoryStateJson {
  user: string;
  /** The user's zone (IANA name or "+08:00"): the console shows their times in it. */
  timeZone: string;
  memoryVersion: number;
  tasks: (TaskJson & { history: HistoryJson[] })[];
  projects: { id: string; name: string; createdAt: string; updatedAt: string; sources: string[]; history: HistoryJson[] }[];
  decisions: { id: string; text: string; rationale: string | null; taskId: string | null; projectId: string | null; createdAt: string; sources: string[]; history: HistoryJson[] }[];
  facts: FactJson[];
  preferences: FactJson[];
}

/** A fact or a preference as the API returns it. */
export interface FactJson {
  id: string;
  key: string | null;
  text: string;
  importance: number;
  createdAt: string;
  updatedAt: string;
  sources: string[];
  history: HistoryJson[];
}

const iso = (ms: number) => new Date(ms).toISOString();

function decode(json: string | null): unknown {
  if (json === null) return null;
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}

/** A history entry → its API view. */
export function historyJson(e: HistoryEntry): HistoryJson {
  return { seq: e.seq, kind: e.kind, recordId: e.recordId, field: e.field, oldValue: decode(e.oldValue), newValue: decode(e.newValue), turnId: e.turnId, at: iso(e.atMs) };
}

/** Reads the state; `taskViews` turns tasks into their API view (project names resolved). */
export async function readMemoryState(manager: MemoryManager, userId: string, taskViews: (tasks: readonly Task[]) => Promise<TaskJson[]>): Promise<MemoryStateJson> {
  const store = manager.user(userId);
  const [zone, version, tasks, projects, decisions, facts, history] = await Promise.all([
    manager.timeZoneOf(userId),
    store.version(),
    store.listTasks(),
    store.listProjects(),
    store.listDecisions(),
    store.listFacts(),
    store.history({ limit: MEMORY_STATE_HISTORY_LIMIT }),
  ]);
  // newest first already (seq DESC); grouped per record
  const byRecord = new Map<string, HistoryJson[]>();
  for (const e of history) {
    const key = `${e.kind}:${e.recordId}`;
    let list = byRecord.get(key);
    if (!list) byRecord.set(key, (list = []));
    list.push(historyJson(e));
  }
  const historyOf = (kind: string, id: string) => byRecord.get(`${kind}:${id}`) ?? [];
  const taskJson = await taskViews(tasks);
  const factJson = (f: (typeof facts)[number]): FactJson => ({
    id: f.id,
    key: f.key,
    text: f.text,
    importance: f.importance,
    createdAt: iso(f.createdAtMs),
    updatedAt: iso(f.updatedAtMs),
    sources: f.sourceTurnIds,
    history: historyOf('fact', f.id),
  });
  return {
    user: userId,
    timeZone: zoneId(zone),
    memoryVersion: version,
    tasks: taskJson.map((t) => ({ ...t, history: historyOf('task', t.id) })),
    projects: projects.map((p) => ({ id: p.id, name: p.name, createdAt: iso(p.createdAtMs), updatedAt: iso(p.updatedAtMs), sources: p.sourceTurnIds, history: historyOf('project', p.id) })),
    decisions: decisions.map((d) => ({ id: d.id, text: d.text, rationale: d.rationale, taskId: d.taskId, projectId: d.projectId, createdAt: iso(d.createdAtMs), sources: d.sourceTurnIds, history: historyOf('decision', d.id) })),
    facts: facts.filter((f) => f.kind === 'fact').map(factJson),
    preferences: facts.filter((f) => f.kind === 'preference').map(factJson),
  };
}
