/**
 * The memory operations both edges (HTTP and MCP) offer, over a MemoryManager: validated input
 * in, JSON-ready views out. Edges only parse, authorise and map errors.
 */
import { processResultJson } from '../memory/result-json.js';
import type { z } from 'zod';
import { NotFoundError } from '../errors.js';
import { zoneId } from '../memory/format-time.js';
import type { LlmCallback } from '../llm/llm.js';
import type { RebuiltContext } from '../memory/context.js';
import type { MemoryManager, ProcessResult } from '../memory/manager.js';
import type { TaskPatch } from '../memory/memory-store.js';
import type { HistoryEntry, Task, TaskStatus } from '../memory/model.js';
import { readMemoryState, type MemoryStateJson } from './memory-state.js';
import { instantMs, type ContextBody, type HistoryQuery, type MemoriesQuery, type MessageBody, type TaskPatchBody, type TaskView } from './schemas.js';

type MemoryKindFilter = NonNullable<z.infer<typeof MemoriesQuery>['kind']>[number];

/** A task as the API returns it (times ISO-8601 UTC, project by name). */
export type TaskJson = z.infer<typeof TaskView>;

/** One memory record as `GET /memories` returns it. */
export interface MemoryJson {
  kind: string;
  id: string;
  text: string;
  score?: number;
  at: string;
}

/** processMessage's result as the API returns it (the full context is left out: see /context). */
export const messageJson = processResultJson;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The memory operations of one server. */
export interface MemoryOps {
  /** processMessage: stores the message, applies what it says, rebuilds, replies. */
  processMessage(userId: string, body: z.infer<typeof MessageBody> & { id?: string }): Promise<ProcessResult>;
  /** Rebuild only; stores nothing. */
  context(userId: string, body: z.infer<typeof ContextBody>): Promise<RebuiltContext>;
  listTasks(userId: string, status?: readonly TaskStatus[]): Promise<TaskJson[]>;
  /** The user's zone as stored and sent ("Asia/Shanghai", "+08:00"): the stored one, else the server's default. */
  timeZone(userId: string): Promise<string>;
  /** NotFoundError when the user has no such task. */
  updateTask(userId: string, id: string, patch: z.infer<typeof TaskPatchBody>): Promise<TaskJson>;
  memories(userId: string, query: z.infer<typeof MemoriesQuery>): Promise<MemoryJson[]>;
  history(userId: string, query: z.infer<typeof HistoryQuery>): Promise<HistoryEntry[]>;
  /** The whole state, each record with its history (`GET /v1/users/{user}/memory`). */
  state(userId: string): Promise<MemoryStateJson>;
}

/** Creates the operations over `manager`; `llm` answers messages (default: the offline responder). */
export function createMemoryOps(manager: MemoryManager, llm?: LlmCallback): MemoryOps {
  async function taskViews(userId: string, tasks: readonly Task[]): Promise<TaskJson[]> {
    const needProjects = tasks.some((t) => t.projectId !== null);
    const names = needProjects ? new Map((await manager.user(userId).listProjects()).map((p) => [p.id, p.name])) : new Map<string, string>();
    return tasks.map((t) => ({
      id: t.id,
      title: t.title,
      status: t.status,
      priority: t.priority,
      due: iso(t.dueAtMs),
      duePhrase: t.duePhrase,
      project: t.projectId ? (names.get(t.projectId) ?? null) : null,
      createdAt: new Date(t.createdAtMs).toISOString(),
      updatedAt: new Date(t.updatedAtMs).toISOString(),
      sources: t.sourceTurnIds,
    }));
  }

  return {
    processMessage(userId, body) {
      return manager.processMessage(
        {
          userId,
          text: body.text,
          ...(body.now !== undefined ? { now: instantMs(body.now) } : {}),
          ...(body.id !== undefined ? { id: body.id } : {}),
          ...(body.timeZone !== undefined ? { timeZone: body.timeZone } : {}),
        },
        llm,
      );
    },

    context(userId, body) {
      return manager.buildContext(userId, body.query, {
        ...(body.budget !== undefined ? { budgetTokens: body.budget } : {}),
        ...(body.now !== undefined ? { now: instantMs(body.now) } : {}),
        ...(body.timeZone !== undefined ? { timeZone: body.timeZone } : {}),
      });
    },

    async timeZone(userId) {
      return zoneId(await manager.timeZoneOf(userId));
    },

    async listTasks(userId, status) {
      const tasks = await manager.user(userId).listTasks(status ? { status } : {});
      return taskViews(userId, tasks);
    },

    async updateTask(userId, id, body) {
      const store = manager.user(userId);
      const patch: TaskPatch = {};
      if (body.title !== undefined) patch.title = body.title;
      if (body.status !== undefined) patch.status = body.status;
      if (body.priority !== undefined) patch.priority = body.priority;
      if (body.due !== undefined) {
        patch.dueAtMs = body.due === null ? null : instantMs(body.due);
        patch.duePhrase = null;
      }
      if (body.project !== undefined) patch.projectId = body.project === null ? null : (await store.ensureProject(body.project)).id;
      const task = await store.updateTask(id, patch);
      if (!task) throw new NotFoundError(`user ${JSON.stringify(userId)} has no task ${JSON.stringify(id)}`, { hint: 'list the ids with GET /v1/users/{user}/tasks' });
      return (await taskViews(userId, [task]))[0]!;
    },

    async memories(userId, query) {
      const store = manager.user(userId);
      const limit = query.limit ?? 50;
      const kinds: MemoryKindFilter[] = query.kind ?? ['task', 'project', 'decision', 'fact'];
      if (query.q !== undefined) {
        const hits = await store.search(query.q, { kinds, limit });
        return hydrate(manager, userId, hits);
      }
      return recentMemories(manager, userId, kinds, limit);
    },

    state(userId) {
      return readMemoryState(manager, userId, (tasks) => taskViews(userId, tasks));
    },

    history(userId, query) {
      return manager.user(userId).history({
        ...(query.record ? { recordId: query.record } : {}),
        ...(query.kind ? { kind: query.kind } : {}),
        limit: query.limit ?? 100,
      });
    },
  };
}

/** Every record of the kinds asked, newest first. */
async function recentMemories(manager: MemoryManager, userId: string, kinds: readonly MemoryKindFilter[], limit: number): Promise<MemoryJson[]> {
  const store = manager.user(userId);
  const out: MemoryJson[] = [];
  const want = new Set(kinds);
  const [tasks, projects, decisions, facts, turns] = await Promise.all([
    want.has('task') ? store.listTasks({ limit }) : [],
    want.has('project') ? store.listProjects() : [],
    want.has('decision') ? store.listDecisions({ limit }) : [],
    want.has('fact') ? store.listFacts() : [],
    want.has('turn') ? store.recentTurns(limit) : [],
  ]);
  for (const t of tasks) out.push({ kind: 'task', id: t.id, text: t.title, at: iso(t.updatedAtMs)! });
  for (const p of projects) out.push({ kind: 'project', id: p.id, text: p.name, at: iso(p.updatedAtMs)! });
  for (const d of decisions) out.push({ kind: 'decision', id: d.id, text: d.text, at: iso(d.createdAtMs)! });
  for (const f of facts) out.push({ kind: f.kind, id: f.id, text: f.key ? `${f.key}: ${f.text}` : f.text, at: iso(f.updatedAtMs)! });
  for (const t of turns) out.push({ kind: 'turn', id: t.id, text: t.text, at: iso(t.atMs)! });
  return out.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0)).slice(0, limit);
}

/** Search hits → records, in hit order; hits whose record is gone are skipped. */
async function hydrate(manager: MemoryManager, userId: string, hits: readonly { kind: string; id: string; score: number }[]): Promise<MemoryJson[]> {
  const store = manager.user(userId);
  const ids = (kind: string) => hits.filter((h) => h.kind === kind).map((h) => h.id);
  const [tasks, projects, decisions, facts, turns] = await Promise.all([
    Promise.all(ids('task').map((id) => store.getTask(id))),
    Promise.all(ids('project').map((id) => store.getProject(id))),
    ids('decision').length ? store.listDecisions() : [],
    ids('fact').length ? store.listFacts() : [],
    ids('turn').length ? store.getTurns(ids('turn')) : [],
  ]);
  const byKey = new Map<string, Omit<MemoryJson, 'score'>>();
  for (const t of tasks) if (t) byKey.set(`task:${t.id}`, { kind: 'task', id: t.id, text: t.title, at: iso(t.updatedAtMs)! });
  for (const p of projects) if (p) byKey.set(`project:${p.id}`, { kind: 'project', id: p.id, text: p.name, at: iso(p.updatedAtMs)! });
  for (const d of decisions) byKey.set(`decision:${d.id}`, { kind: 'decision', id: d.id, text: d.text, at: iso(d.createdAtMs)! });
  for (const f of facts) byKey.set(`fact:${f.id}`, { kind: f.kind, id: f.id, text: f.key ? `${f.key}: ${f.text}` : f.text, at: iso(f.updatedAtMs)! });
  for (const t of turns) byKey.set(`turn:${t.id}`, { kind: 'turn', id: t.id, text: t.text, at: iso(t.atMs)! });
  const out: MemoryJson[] = [];
  for (const h of hits) {
    const m = byKey.get(`${h.kind}:${h.id}`);
    if (m) out.push({ ...m, score: h.score });
  }
  return out;
}
