/** Per-user memory routes: `/v1/users/{user}/…` (a user key reaches only its own user), and the admin listing `/v1/users`. */
import { z } from 'zod';
import { CtxvmError } from '../errors.js';
import type { ListUsersOptions, UserSummary } from '../memory/memory-store.js';
import type { MemoryOps } from './memory-ops.js';
import { historyJson } from './memory-state.js';
import { messageJson } from './memory-ops.js';
import type { ServerMetrics } from './metrics.js';
import { defineRoute, type RouteDef } from './route.js';
import {
  ContextBody,
  ContextResponse,
  HistoryQuery,
  HistoryView,
  MemoriesQuery,
  MemoryStateResponse,
  MemoryView,
  MessageBody,
  MessageHeaders,
  MessageResponse,
  TaskParams,
  TaskPatchBody,
  TasksQuery,
  TaskView,
  UserParams,
  UsersResponse,
} from './schemas.js';

/** What the memory routes need. */
export interface MemoryRouteDeps {
  ops: MemoryOps;
  metrics: ServerMetrics;
  /** Put message text, queries and replies on the log line. */
  logContent: boolean;
  /** Users with memory (the warm store's `listUsers`), for `GET /v1/users`. */
  listUsers?: ((options?: ListUsersOptions) => Promise<UserSummary[]>) | undefined;
}

/** The memory routes. */
export function memoryRoutes({ ops, metrics, logContent, listUsers }: MemoryRouteDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/users',
      operationId: 'listUsers',
      summary: 'Users that have memory, most recently active first: turns, tasks, last activity (no memory content).',
      tag: 'memory',
      access: 'admin',
      response: { description: 'the users', schema: UsersResponse },
      async handler() {
        if (!listUsers) throw new CtxvmError('E_UNSUPPORTED', 'this server cannot list users: its memory store has no listUsers', { hint: 'serve from the SQLite or PostgreSQL warm store (ctxvm serve)' });
        const users = await listUsers();
        return { json: { users: users.map((u) => ({ user: u.userId, turns: u.turns, tasks: u.tasks, lastActiveAt: u.lastActiveAtMs === null ? null : new Date(u.lastActiveAtMs).toISOString() })) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/users/{user}/memory',
      operationId: 'memoryState',
      summary: "The user's whole memory: tasks, projects, decisions, facts and preferences, each with its change history (newest first).",
      tag: 'memory',
      access: 'user',
      params: UserParams,
      response: { description: 'the memory state', schema: MemoryStateResponse },
      async handler({ params }) {
        return { json: await ops.state(params.user) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/users/{user}/messages',
      operationId: 'processMessage',
      summary: 'Process one user message: extract, update memory, rebuild the context, reply (processMessage).',
      tag: 'memory',
      access: 'user',
      params: UserParams,
      body: MessageBody,
      headers: MessageHeaders,
      response: { description: 'the reply, what was extracted and changed, and per-stage timings', schema: MessageResponse },
      errors: { '409': 'a message with this Idempotency-Key was already received (E_CONFLICT): error.details has its turnIds and response (null while it is being answered)' },
      async handler({ params, body, headers, stage, note }) {
        const id = headers['idempotency-key'];
        const result = await ops.processMessage(params.user, { ...body, ...(id !== undefined ? { id } : {}) });
        const ms = result.metrics.latencyMs;
        stage('extract', ms.extract);
        stage('update', ms.update);
        stage('rebuild', ms.rebuild);
        stage('respond', ms.respond);
        metrics.observeMessage(result);
        note({ intent: result.extraction.intent, ...(logContent ? { content: { text: body.text, response: result.response } } : {}) });
        return { json: messageJson(result) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/users/{user}/context',
      operationId: 'buildContext',
      summary: 'Rebuild the six-layer context for a query within a token budget; stores nothing.',
      tag: 'memory',
      access: 'user',
      params: UserParams,
      body: ContextBody,
      response: { description: 'the rebuilt context (the `ctxvm memory context --json` shape)', schema: ContextResponse },
      async handler({ params, body, stage, note }) {
        const t0 = performance.now();
        const context = await ops.context(params.user, body);
        stage('rebuild', performance.now() - t0);
        metrics.observeContext(context);
        if (logContent) note({ content: { query: body.query } });
        return { json: context };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/users/{user}/tasks',
      operationId: 'listTasks',
      summary: "List the user's tasks: open ones first by due time, then the rest, newest first.",
      tag: 'memory',
      access: 'user',
      params: UserParams,
      query: TasksQuery,
      response: { description: "the tasks, and the user's zone (times are ISO-8601 UTC; show them in that zone)", schema: z.object({ tasks: z.array(TaskView), timeZone: z.string() }) },
      async handler({ params, query }) {
        const [tasks, timeZone] = await Promise.all([ops.listTasks(params.user, query.status), ops.timeZone(params.user)]);
        return { json: { tasks, timeZone } };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/users/{user}/tasks/{id}',
      operationId: 'updateTask',
      summary: 'Change a task (title, status, priority, due, project); every change is kept in the history.',
      tag: 'memory',
      access: 'user',
      params: TaskParams,
      body: TaskPatchBody,
      response: { description: 'the task after the change', schema: z.object({ task: TaskView }) },
      async handler({ params, body }) {
        return { json: { task: await ops.updateTask(params.user, params.id, body) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/users/{user}/memories',
      operationId: 'searchMemories',
      summary: "Full-text search over the user's memory (q), or the newest records without q.",
      tag: 'memory',
      access: 'user',
      params: UserParams,
      query: MemoriesQuery,
      response: { description: 'matching records, best first (newest first without q)', schema: z.object({ memories: z.array(MemoryView) }) },
      async handler({ params, query, note }) {
        if (logContent && query.q) note({ content: { q: query.q } });
        return { json: { memories: await ops.memories(params.user, query) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/users/{user}/history',
      operationId: 'memoryHistory',
      summary: "The user's memory change history, newest first (old and new value of every field).",
      tag: 'memory',
      access: 'user',
      params: UserParams,
      query: HistoryQuery,
      response: { description: 'history entries', schema: z.object({ history: z.array(HistoryView) }) },
      async handler({ params, query }) {
        const entries = await ops.history(params.user, query);
        return { json: { history: entries.map(historyJson) } };
      },
    }),
  ];
}
