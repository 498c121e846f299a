/**
 * The MCP server (`ctxvm mcp`, stdio): memory tools for one user (`--user` / `CTXVM_USER`) and
 * session tools for the machine. Tools call the same operations as the HTTP API
 * (memory-ops.ts, session-ops.ts) and report failures as tool errors (`isError`), mapped by
 * errors.ts, so the model sees the code, the message and the fix.
 */
import type { Readable, Writable } from 'node:stream';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';
import type { TimeZone } from '../core/time-zone.js';
import { UsageError } from '../errors.js';
import type { RebuiltContext } from '../memory/context.js';
import { formatZonedTime } from '../memory/format-time.js';
import { mapError } from './errors.js';
import { createMemoryOps, messageJson, type TaskJson } from './memory-ops.js';
import { Instant, MessageId, TASK_PRIORITIES, TASK_STATUSES, TimeZoneInput } from './schemas.js';
import type { ServerServices } from './services.js';

/** Options of the MCP server. */
export interface McpOptions {
  /** The user the memory tools act for; without one they fail with a clear message. */
  userId?: string;
  /** Reported in the MCP handshake. */
  version?: string;
  /** The agent's project folder: `session_trim` without a session trims its newest session. */
  cwd?: string;
}

/** Names of the tools, in the order they are registered. */
/**
 * The context as a tool result: what memory holds, without the system layer. That layer is the
 * instruction ctxvm gives its own responder ("You are a helpful assistant with long-term
 * memory…"); an agent calling the tool has a system prompt of its own, and would read it as the
 * user's memory.
 */
export function withoutSystemLayer(c: RebuiltContext): string {
  let text = c.text;
  for (const item of c.layers.find((l) => l.name === 'system')?.items ?? []) {
    if (item.text && text.startsWith(item.text)) text = text.slice(item.text.length);
  }
  return text.replace(/^\s+/, '');
}

export const MCP_TOOLS = ['memory_context', 'memory_remember', 'tasks_list', 'task_update', 'session_page_in', 'session_snapshot', 'session_trim'] as const;

type ToolResult = { content: { type: 'text'; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };

/**
 * Runs a tool body; any error becomes a tool error the model can read. Tools whose answer IS a
 * text (a context, a paged-in payload) return only that text: Claude Code shows the model the
 * `structuredContent` instead of the text when both are present (seen with 2.1.328), so data
 * tools put their human-readable summary in `structuredContent.message` as well.
 */
async function tool(run: () => Promise<{ text: string; data?: Record<string, unknown> }>): Promise<ToolResult> {
  try {
    const { text, data } = await run();
    return { content: [{ type: 'text', text }], ...(data ? { structuredContent: { message: text, ...data } } : {}) };
  } catch (error) {
    const { body } = mapError(error);
    const e = body.error;
    const details = e.details ? `\ndetails: ${JSON.stringify(e.details)}` : '';
    return { content: [{ type: 'text', text: `${e.code}: ${e.message}${e.hint ? `\nfix: ${e.hint}` : ''}${details}` }], isError: true };
  }
}

/** One task for the model, its due time in the user's zone (named). */
function taskLine(t: TaskJson, zone: TimeZone): string {
  return `- [${t.status}] ${t.title} (id ${t.id}, ${t.priority}${t.due ? `, due ${formatZonedTime(Date.parse(t.due), zone)}` : ''}${t.project ? `, project ${t.project}` : ''})`;
}

/** Creates one MCP server instance with every tool registered. */
export function createCtxvmMcpServer(services: ServerServices, options: McpOptions = {}): McpServer {
  const server = new McpServer({ name: 'ctxvm', version: options.version ?? '0.0.0' }, { capabilities: { tools: {} } });
  const ops = createMemoryOps(services.manager, services.llm);
  const user = (): string => {
    if (!options.userId) throw new UsageError('no user for the memory tools', { hint: 'start the server with `ctxvm mcp --user <id>` or set CTXVM_USER' });
    return options.userId;
  };

  server.registerTool(
    'memory_context',
    {
      title: 'Rebuild memory context',
      description: "Rebuild the user's memory context (profile, active project, open tasks, related history, other memories) for a question, within a token budget. Read-only.",
      inputSchema: z.object({
        query: z.string().min(1).describe('the question or topic'),
        budget: z.number().int().positive().max(100_000).optional().describe('token budget (default 2000)'),
        timeZone: TimeZoneInput.optional().describe("zone of the context's dates and clock (default: the user's stored zone); not stored"),
      }),
      annotations: { readOnlyHint: true },
    },
    async ({ query, budget, timeZone }) =>
      tool(async () => {
        const c = await ops.context(user(), { query, ...(budget !== undefined ? { budget } : {}), ...(timeZone !== undefined ? { timeZone } : {}) });
        return { text: withoutSystemLayer(c) };
      }),
  );

  server.registerTool(
    'memory_remember',
    {
      title: 'Remember a message',
      description: "Process a message from the user into memory (tasks, decisions, facts, preferences; e.g. \"remind me to send the report by Friday\", \"我决定用 PostgreSQL\") and return the assistant's acknowledgement and what changed.",
      inputSchema: z.object({
        text: z.string().min(1).describe('the user message, verbatim'),
        now: Instant.optional(),
        id: MessageId.min(1).optional().describe('message id, unique per user: the message is applied once per id (safe retries); a repeat once answered is refused with the first reply'),
        timeZone: TimeZoneInput.optional().describe("the user's time zone (IANA name such as Asia/Shanghai, or +08:00): stored as theirs and used by every later answer"),
      }),
    },
    async ({ text, now, id, timeZone }) =>
      tool(async () => {
        const r = await ops.processMessage(user(), { text, ...(now !== undefined ? { now } : {}), ...(id !== undefined ? { id } : {}), ...(timeZone !== undefined ? { timeZone } : {}) });
        const changes = r.applied.map((a) => `${a.action} ${a.kind} ${a.id}: ${a.text}`);
        return { text: [r.response, ...(changes.length ? ['', 'memory changes:', ...changes] : [])].join('\n'), data: messageJson(r) };
      }),
  );

  server.registerTool(
    'tasks_list',
    {
      title: 'List tasks',
      description: "The user's tasks: open ones first by due time, then the rest, newest first.",
      inputSchema: z.object({ status: z.array(z.enum(TASK_STATUSES)).optional().describe('only these statuses (default all)') }),
      annotations: { readOnlyHint: true },
    },
    async ({ status }) =>
      tool(async () => {
        const [tasks, timeZone] = await Promise.all([ops.listTasks(user(), status && status.length ? status : undefined), ops.timeZone(user())]);
        return { text: tasks.length ? tasks.map((t) => taskLine(t, timeZone)).join('\n') : 'no tasks', data: { tasks, timeZone } };
      }),
  );

  server.registerTool(
    'task_update',
    {
      title: 'Update a task',
      description: 'Change a task by id (from tasks_list): title, status (todo, doing, done, cancelled), priority, due time, project. The old values are kept in the history.',
      inputSchema: z.object({
        id: z.string().min(1),
        title: z.string().min(1).optional(),
        status: z.enum(TASK_STATUSES).optional(),
        priority: z.enum(TASK_PRIORITIES).optional(),
        due: Instant.nullable().optional().describe('new due time, or null to clear'),
        project: z.string().min(1).nullable().optional().describe('project name, or null to detach'),
      }),
    },
    async ({ id, ...patch }) =>
      tool(async () => {
        const fields = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
        if (Object.keys(fields).length === 0) throw new UsageError('give at least one of title, status, priority, due, project');
        const [task, timeZone] = await Promise.all([ops.updateTask(user(), id, fields), ops.timeZone(user())]);
        return { text: `updated:\n${taskLine(task, timeZone)}`, data: { task } };
      }),
  );

  server.registerTool(
    'session_page_in',
    {
      title: 'Page in a trimmed payload',
      description:
        'Fetch the original content a ctxvm-trimmed session replaced with a stub ("[ctxvm paged out …]"), exactly as the tool originally returned it. Pass the tool_use_id of the result the stub stands in (e.g. toolu_01AbC…), <tool_use_id>/<input field> for a paged-out tool input (e.g. toolu_01AbC…/new_string), or a ctxvm:<pack>#<offset>/<pointer> reference printed in the stub.',
      inputSchema: z.object({
        ref: z.string().min(6).max(1024).describe('tool_use_id, <tool_use_id>/<field>, or a ctxvm: reference from the stub'),
        session: z.string().min(1).optional().describe('the session id or file the stub is in (default: searched for, this project first)'),
      }),
      annotations: { readOnlyHint: true },
    },
    async ({ ref, session }) =>
      tool(async () => {
        const p = await services.sessions.pageIn(ref, { ...(session ? { session } : {}), cwd: process.cwd() });
        return { text: p.text };
      }),
  );

  server.registerTool(
    'session_snapshot',
    {
      title: 'Snapshot a session',
      description: 'Capture a Claude Code or Codex session as a named, immutable snapshot (content-addressed; shares storage with earlier snapshots).',
      inputSchema: z.object({
        session: z.string().min(1).describe('session id, id prefix or file path'),
        name: z.string().min(1).max(128).describe('unique snapshot name'),
        description: z.string().optional(),
        tags: z.array(z.string().min(1)).optional(),
      }),
    },
    async (args) =>
      tool(async () => {
        const s = await services.sessions.snapshot(args);
        return { text: `snapshot ${s.name} (${s.id.slice(0, 8)}) of ${s.session.agent} session ${s.session.id}: ${s.files} file(s), ${s.bytes} bytes, ${s.newObjects} new object(s)`, data: { ...s } };
      }),
  );

  server.registerTool(
    'session_trim',
    {
      title: 'Trim a session',
      description: 'Snapshot a session and start a trimmed branch of it (bulky tool output, images and old thinking paged out behind stubs; the original session is untouched). Without `session`, trims the newest session of this project. Returns the command that resumes the branch.',
      inputSchema: z.object({
        session: z.string().min(1).optional().describe('session id, id prefix or file path (default: the newest session of this project)'),
        name: z.string().min(1).max(128).optional().describe('snapshot name; the branch is <name>-trimmed'),
        at: z.union([z.string().min(1), z.number().int().positive()]).optional().describe('also cut after this message uuid or turn number'),
      }),
    },
    async ({ session, name, at }) =>
      tool(async () => {
        const r = await services.sessions.trim({
          ...(session !== undefined ? { session } : { latest: true }),
          ...(name !== undefined ? { name } : {}),
          ...(at !== undefined ? { at } : {}),
          ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
        });
        const t = r.trimmed;
        const summary = t ? `${t.inputTokens ?? '?'} → ${t.outputTokens ?? '?'} tokens` : 'not trimmed';
        return { text: `trimmed branch ${r.name} (${summary}); the original is untouched.\nresume: ${r.cwd ? `cd ${JSON.stringify(r.cwd)} && ` : ''}${r.resume}`, data: { ...r } };
      }),
  );

  return server;
}

/** Options of `serveMcpStdio`. */
export interface ServeMcpStdioOptions extends McpOptions {
  stdin?: Readable;
  stdout?: Writable;
  /** Out-of-band errors (never written to stdout, which carries the protocol). */
  onError?: (error: Error) => void;
}

/** Serves MCP on stdio; resolves when the client disconnects (stdin closes). */
export async function serveMcpStdio(services: ServerServices, options: ServeMcpStdioOptions = {}): Promise<void> {
  const inner = new StdioServerTransport(options.stdin, options.stdout);
  let ended!: () => void;
  const closed = new Promise<void>((resolve) => (ended = resolve));
  // serveStdio owns the transport's callbacks; this wrapper also tells us when the wire closes.
  const wire = {
    start: () => inner.start(),
    send: (...args: Parameters<StdioServerTransport['send']>) => inner.send(...args),
    close: () => inner.close(),
    set onmessage(fn: StdioServerTransport['onmessage']) {
      inner.onmessage = fn;
    },
    get onmessage() {
      return inner.onmessage;
    },
    set onerror(fn: StdioServerTransport['onerror']) {
      inner.onerror = fn;
    },
    get onerror() {
      return inner.onerror;
    },
    onclose: undefined as (() => void) | undefined,
  };
  inner.onclose = () => {
    wire.onclose?.();
    ended();
  };
  const handle = serveStdio(() => createCtxvmMcpServer(services, options), { transport: wire as unknown as StdioServerTransport, ...(options.onError ? { onerror: options.onError } : {}) });
  await closed;
  await handle.close();
}
