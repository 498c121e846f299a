/**
 * Zod schemas of every request the HTTP API and the MCP tools accept, and the shapes they
 * return (used for the OpenAPI document). One file so the two edges cannot drift apart.
 */
import { z } from 'zod';
import { validateTimeZone } from '../core/time-zone.js';
import { MAX_MESSAGE_ID_LENGTH } from '../memory/repeated-message.js';

/** An instant: ISO-8601 with a zone, or Unix ms. */
export const Instant = z
  .union([z.number().int().nonnegative(), z.string().refine((s) => Number.isFinite(Date.parse(s)) && /T|\d{4}-\d{2}-\d{2}/.test(s), 'expected an ISO-8601 time such as 2026-03-10T09:30:00+08:00')])
  .describe('ISO-8601 time (e.g. 2026-03-10T09:30:00+08:00) or Unix ms');

/** Instant → Unix ms. */
export function instantMs(value: z.infer<typeof Instant>): number {
  return typeof value === 'number' ? value : Date.parse(value);
}

const isTimeZone = (zone: string | number): boolean => {
  try {
    validateTimeZone(zone);
    return true;
  } catch {
    return false;
  }
};

/** A time zone: an IANA name ("Asia/Shanghai"), an offset ("+08:00"), or minutes east of UTC. */
export const TimeZoneInput = z
  .union([z.string().trim().min(1).max(64), z.number().int().min(-1080).max(1080)])
  .refine(isTimeZone, 'expected an IANA time zone such as "Asia/Shanghai", an offset such as "+08:00", or minutes east of UTC');

export const TASK_STATUSES = ['todo', 'doing', 'done', 'cancelled'] as const;
export const TASK_PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export const MEMORY_KINDS = ['task', 'project', 'decision', 'fact', 'turn'] as const;

// ---- path parameters -------------------------------------------------------------------------

export const UserParams = z.object({ user: z.string().min(1).max(256).describe('user id') });
export const TaskParams = UserParams.extend({ id: z.string().min(1).max(256).describe('task id') });
export const RefParams = z.object({ ref: z.string().min(1).max(1024).describe('page-in reference of a stub, URL-encoded: the tool_use_id (or call_id) beside it, <id>/<input field>, or a ctxvm:<pack>#<offset>/<pointer> reference it prints') });

// ---- memory ----------------------------------------------------------------------------------

export const MessageBody = z
  .object({
    text: z.string().trim().min(1, 'text must not be empty').max(100_000).describe('the user message, verbatim'),
    now: Instant.optional().describe('when the message was said (default: now)'),
    timeZone: TimeZoneInput.optional().describe("the user's time zone: stored as theirs before the message is read, and used by every later output (default: the one stored, else the server's)"),
  })
  .strict();

/** A caller's message id (`IncomingMessage.id`): HTTP `Idempotency-Key`, MCP `memory_remember` `id`. */
export const MessageId = z.string().trim().max(MAX_MESSAGE_ID_LENGTH);

export const MessageHeaders = z.object({
  'idempotency-key': MessageId.min(1, 'Idempotency-Key must not be empty')
    .optional()
    .describe(
      "the message's id, unique per user (stored as its turn id); the message is applied once per key: a retry once it is answered gets 409 E_CONFLICT with the first request's turn ids and reply in error.details, a retry after its reply failed is answered (resumed: true)",
    ),
});

export const ContextBody = z
  .object({
    query: z.string().trim().min(1, 'query must not be empty').max(100_000).describe('the question or message to build the context for'),
    budget: z.number().int().positive().max(1_000_000).optional().describe('token budget (default: the server default, 2000)'),
    now: Instant.optional(),
    timeZone: TimeZoneInput.optional().describe("zone of this context's dates and clock (default: the user's stored zone); not stored"),
  })
  .strict();

const statusList = z
  .string()
  .transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean))
  .pipe(z.array(z.enum(TASK_STATUSES)).min(1));

export const TasksQuery = z.object({ status: statusList.optional().describe(`only these statuses, comma-separated: ${TASK_STATUSES.join(', ')}`) }).strict();

export const TaskPatchBody = z
  .object({
    title: z.string().trim().min(1).max(1000).optional(),
    status: z.enum(TASK_STATUSES).optional(),
    priority: z.enum(TASK_PRIORITIES).optional(),
    due: Instant.nullable().optional().describe('new due time, or null to clear it'),
    project: z.string().trim().min(1).max(1000).nullable().optional().describe('project name (created if new), or null to detach'),
  })
  .strict()
  .refine((p) => Object.values(p).some((v) => v !== undefined), { message: 'give at least one of title, status, priority, due, project' });

const positiveIntString = (max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'expected a positive integer')
    .transform(Number)
    .pipe(z.number().int().positive().max(max));

export const MemoriesQuery = z
  .object({
    q: z.string().trim().min(1).max(10_000).optional().describe('full-text query; without it, the newest memories'),
    kind: z
      .string()
      .transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean))
      .pipe(z.array(z.enum(MEMORY_KINDS)).min(1))
      .optional()
      .describe(`only these kinds, comma-separated: ${MEMORY_KINDS.join(', ')} (default: all but turn)`),
    limit: positiveIntString(500).optional().describe('at most this many (default 50)'),
  })
  .strict();

export const HistoryQuery = z
  .object({
    record: z.string().min(1).max(256).optional().describe('only changes of this record id'),
    kind: z.enum(['task', 'project', 'decision', 'fact']).optional(),
    limit: positiveIntString(1000).optional().describe('at most this many, newest first (default 100)'),
  })
  .strict();

// ---- sessions --------------------------------------------------------------------------------

const Agent = z.enum(['claude', 'codex']);
const Name = z.string().trim().min(1).max(128).describe('unique name (snapshots and branches share one namespace)');
const At = z.union([z.string().min(1).max(128), z.number().int().positive()]).describe('cut after this message uuid (8+ hex digits) or turn number (1 = first prompt)');

export const SessionsQuery = z.object({ agent: Agent.optional(), project: z.string().min(1).max(4096).optional().describe('only sessions whose project path contains this') }).strict();

export const SnapshotBody = z
  .object({
    session: z.string().min(1).max(4096).describe('session id, id prefix or absolute file path'),
    name: Name,
    description: z.string().max(4096).optional(),
    tags: z.array(z.string().min(1).max(128)).max(32).optional(),
    agent: Agent.optional(),
  })
  .strict();

export const BranchBody = z
  .object({
    snapshot: z.string().min(1).max(128).describe('snapshot name or id prefix'),
    name: Name,
    trim: z.boolean().optional().describe('trim the branch (default true)'),
    at: At.optional(),
    title: z.string().max(512).optional().describe('title shown in the Claude Code session picker'),
  })
  .strict();

export const TrimBody = z
  .object({
    session: z.string().min(1).max(4096).describe('session id, id prefix or absolute file path'),
    name: Name.optional().describe('snapshot name (default <session id prefix>-<UTC time>); the branch is <name>-trimmed'),
    at: At.optional(),
    agent: Agent.optional(),
  })
  .strict();

// ---- responses (documentation; handlers build these shapes) ----------------------------------

export const ErrorResponse = z.object({
  error: z.object({
    code: z.string().describe('stable code, e.g. E_USAGE, E_NOT_FOUND, E_UNAUTHORIZED'),
    message: z.string(),
    hint: z.string().optional(),
    details: z.record(z.string(), z.unknown()).optional().describe('facts about the failure, by code (E_CONFLICT of a repeated message id: turnIds and the stored response)'),
  }),
});

export const TaskView = z.object({
  id: z.string(),
  title: z.string(),
  status: z.enum(TASK_STATUSES),
  priority: z.enum(TASK_PRIORITIES),
  due: z.string().nullable().describe('ISO-8601 UTC'),
  duePhrase: z.string().nullable(),
  project: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  sources: z.array(z.string()).describe('ids of the turns the task came from'),
});

export const MessageResponse = z.object({
  response: z.string().describe("the assistant's reply (offline responder unless an LLM is configured)"),
  intent: z.string(),
  confidence: z.number(),
  clarification: z.boolean(),
  applied: z.array(z.object({ action: z.string(), kind: z.string(), id: z.string(), text: z.string() })),
  turnIds: z.object({ user: z.string(), assistant: z.string() }),
  resumed: z
    .boolean()
    .describe('true when a request with this Idempotency-Key stored the message but got no reply (the LLM failed): this one answered it and applied nothing again'),
  context: z.object({ tokens: z.number(), budgetTokens: z.number(), memoryVersion: z.number(), cached: z.boolean() }),
  metrics: z.object({
    latencyMs: z.object({ extract: z.number(), update: z.number(), rebuild: z.number(), respond: z.number(), total: z.number() }),
    contextTokens: z.number(),
    fullHistoryTokens: z.number(),
  }),
});

export const ContextResponse = z.object({
  text: z.string(),
  tokens: z.number(),
  budgetTokens: z.number(),
  layers: z.array(z.object({ name: z.string(), tokens: z.number(), budgetTokens: z.number(), items: z.array(z.object({ kind: z.string(), id: z.string(), text: z.string(), sources: z.array(z.string()) })) })),
  dropped: z.array(z.object({ layer: z.string(), kind: z.string(), id: z.string(), reason: z.string(), tokens: z.number() })),
  stablePrefixChars: z.number(),
  memoryVersion: z.number(),
  cached: z.boolean(),
  clock: z
    .object({ text: z.string(), tokens: z.number(), at: z.string().describe('ISO-8601 UTC'), timeZone: z.string().describe('the zone every date and time of `text` is in') })
    .optional()
    .describe('the block after the stable prefix that states the current date, weekday, time and zone'),
});

export const MemoryView = z.object({
  kind: z.string().describe('task, project, decision, fact, preference or turn'),
  id: z.string(),
  text: z.string(),
  score: z.number().optional().describe('full-text score (only with q)'),
  at: z.string().describe('ISO-8601 time of the record'),
});

export const HistoryView = z.object({
  seq: z.number(),
  kind: z.string(),
  recordId: z.string(),
  field: z.string(),
  oldValue: z.unknown(),
  newValue: z.unknown(),
  turnId: z.string().nullable(),
  at: z.string(),
});

export const SessionView = z.object({
  agent: Agent,
  id: z.string(),
  path: z.string(),
  project: z.string().nullable(),
  bytes: z.number(),
  messages: z.number(),
  updatedAt: z.string(),
  title: z.string().optional(),
});

export const SnapshotResponse = z.object({ id: z.string(), name: z.string(), bytes: z.number(), files: z.number(), objects: z.number(), newObjects: z.number(), session: z.object({ agent: Agent, id: z.string(), path: z.string() }) });

export const BranchResponse = z.object({
  sessionId: z.string(),
  path: z.string(),
  resume: z.string().describe('the command that opens the branch'),
  name: z.string(),
  id: z.string(),
  agent: Agent,
  snapshot: z.object({ id: z.string(), name: z.string() }),
  trimmed: z.object({ inputTokens: z.number().nullable(), outputTokens: z.number().nullable(), reduction: z.number().nullable() }).nullable(),
  warnings: z.array(z.string()),
});

export const PageInResponse = z.object({
  ref: z.string(),
  hash: z.string(),
  pointer: z.string(),
  kind: z.enum(['text', 'json']),
  content: z.unknown().describe('the payload exactly as the tool returned it: a string for text'),
  file: z.string().optional().describe('the trimmed session file a reference by call id was found in'),
  verified: z.boolean().describe('whether a digest recorded at trim time vouched for the payload'),
});

export const PageInQuery = z.object({
  session: z.string().min(1).max(4096).optional().describe('the session id, id prefix or file the stub is in (default: searched for in the agents\' folders)'),
});

const HotCacheState = z.enum(['up', 'down']).describe('up: in use; down: unreachable or stalled, skipped (reads come from the warm store) until it answers again');
const HotCacheBreaker = z.enum(['closed', 'open', 'half-open']).describe('circuit breaker: closed (calls go out), open (refused at once), half-open (a probe is out)');

export const HealthResponse = z.object({
  ok: z.literal(true),
  version: z.string(),
  uptimeMs: z.number(),
  worker: z.number().int().optional().describe('which worker of `ctxvm serve --workers N` answered (1-based); absent with one process'),
  status: z.enum(['ok', 'degraded']).describe('degraded: a tier is skipped (the API still answers, from the warm store)'),
  hotCache: z
    .object({ driver: z.string(), state: HotCacheState, breaker: HotCacheBreaker, since: z.string().describe('when the breaker last changed state, ISO-8601 UTC') })
    .optional()
    .describe('the hot tier; absent when the server has none'),
});

// ---- console (docs/console.md) ---------------------------------------------------------------

export const WhoamiResponse = z.object({
  admin: z.boolean(),
  user: z.string().nullable().describe('the only user this key may touch; null for an admin key'),
  keyId: z.string(),
});

export const UsersResponse = z.object({
  users: z.array(z.object({ user: z.string(), turns: z.number(), tasks: z.number(), lastActiveAt: z.string().nullable().describe('latest turn or memory change, ISO-8601 UTC') })),
});

const WithHistory = { history: z.array(HistoryView).describe('changes of this record, newest first') };
const FactStateView = z.object({ id: z.string(), key: z.string().nullable(), text: z.string(), importance: z.number(), createdAt: z.string(), updatedAt: z.string(), sources: z.array(z.string()), ...WithHistory });

export const MemoryStateResponse = z.object({
  user: z.string(),
  timeZone: z.string().describe("the user's zone (stored, else the server's default): times shown to them are in it"),
  memoryVersion: z.number(),
  tasks: z.array(TaskView.extend(WithHistory)),
  projects: z.array(z.object({ id: z.string(), name: z.string(), createdAt: z.string(), updatedAt: z.string(), sources: z.array(z.string()), ...WithHistory })),
  decisions: z.array(z.object({ id: z.string(), text: z.string(), rationale: z.string().nullable(), taskId: z.string().nullable(), projectId: z.string().nullable(), createdAt: z.string(), sources: z.array(z.string()), ...WithHistory })),
  facts: z.array(FactStateView),
  preferences: z.array(FactStateView),
});

const DagNodeView = z.object({
  id: z.string(),
  kind: z.enum(['snapshot', 'branch']),
  name: z.string(),
  agent: Agent,
  sessionId: z.string(),
  createdAtMs: z.number(),
  bytes: z.number().optional(),
  tags: z.array(z.string()).optional(),
  description: z.string().nullable().optional(),
  trimmed: z.boolean().optional(),
  path: z.string().optional(),
  tokens: z.number().nullable().optional().describe('snapshot: tokens of the context on resume, when computed (null until then)'),
});

export const TreeResponse = z.object({
  nodes: z.array(DagNodeView).describe('oldest first'),
  edges: z.array(z.object({ from: z.string(), to: z.string(), kind: z.enum(['branch', 'snapshot', 'next']) })),
});

export const AnalysisQuery = z
  .object({
    session: z.string().min(1).max(4096).describe('session id, id prefix, absolute file path, or snapshot:<name-or-id>'),
    turns: positiveIntString(1000).optional().describe('model calls simulated by the cache model (default 30)'),
  })
  .strict();

const Breakdown = z.record(z.string(), z.number()).describe('tokens per category');

export const AnalysisResponse = z.object({
  agent: Agent,
  file: z.string(),
  model: z.string().optional(),
  messages: z.number(),
  tokens: z.number(),
  breakdown: Breakdown,
  tokenizer: z.string(),
  trimmed: z.object({ tokens: z.number(), breakdown: Breakdown, reduction: z.number() }),
  systemAndTools: z.number().nullable().describe("the system prompt and tools, read off the log's usage; null when unknown"),
  request: z.object({ systemAndTools: z.number(), tokens: z.number(), trimmedTokens: z.number(), reduction: z.number() }).nullable().describe('the whole request on resume, when systemAndTools is known'),
  logged: z.object({
    requests: z.number(),
    systemAndTools: z.number().nullable(),
    first: z.object({ line: z.number(), inputTokens: z.number(), messagesEstimate: z.number() }).optional(),
    last: z.object({ line: z.number(), inputTokens: z.number(), estimate: z.number(), error: z.number() }).optional(),
  }),
  cache: z.object({
    model: z.string(),
    priced: z.boolean(),
    prices: z.object({ input: z.number(), cacheWrite5m: z.number(), cacheWrite1h: z.number(), cacheRead: z.number(), output: z.number(), unit: z.literal('USD/MTok') }),
    growthTokensPerTurn: z.number(),
    outputTokensPerTurn: z.number(),
    scenarios: z.array(
      z.object({
        ttl: z.enum(['5m', '1h']),
        untrimmedCacheWarm: z.boolean(),
        coldStartCostUsd: z.number(),
        perTurnSavingUsd: z.number(),
        breakEvenTurn: z.number().nullable(),
        hitRate: z.object({ untrimmed: z.number(), trimmed: z.number() }),
        cumulativeUsd: z.object({ untrimmed: z.array(z.number()), trimmed: z.array(z.number()) }),
      }),
    ),
  }),
  findings: z.object({ errors: z.number(), warnings: z.number() }),
  snapshot: z.object({ id: z.string(), name: z.string() }).optional().describe('only for snapshot:<ref>; `file` is then the path the session had when captured'),
});

export const EconomicsQuery = z.object({ ttl: z.enum(['5m', '1h']).optional().describe('cache lifetime whose write price applies (default 5m)') }).strict();

const EconomicsGroupView = z.object({
  n: z.number(),
  reductionMean: z.number().describe('0..1'),
  reductionPeak: z.number(),
  breakEvenMean: z.number().nullable().describe('over the sessions that break even'),
  breakEvenMedian: z.number().nullable(),
  neverBreakEven: z.number(),
  contextMean: z.number().describe('tokens the agent would resend'),
  over30: z.object({ n: z.number(), share: z.number(), breakEvenMean: z.number().nullable() }).describe('sessions reduced by more than 30%'),
});

export const EconomicsResponse = z.object({
  sessions: z.array(
    z.object({
      file: z.string(),
      agent: Agent,
      model: z.string().optional(),
      pricedAs: z.string(),
      priced: z.boolean(),
      tokens: z.number(),
      trimmedTokens: z.number(),
      reduction: z.number(),
      systemAndTools: z.number().nullable(),
      requestReduction: z.number().nullable(),
      toolResultShare: z.number(),
      class: z.enum(['mixed', 'conversational']).describe('mixed: tool results are at least 15% of the tokens'),
      cacheWriteUsd: z.number(),
      firstCallExtraUsd: z.number(),
      perTurnSavingUsd: z.number(),
      breakEvenTurn: z.number().nullable().describe('the call from which trimming has paid for its cache write; null = never'),
    }),
  ),
  groups: z.object({ all: EconomicsGroupView, mixed: EconomicsGroupView, conversational: EconomicsGroupView }),
  skipped: z.array(z.object({ file: z.string(), reason: z.string() })),
  ttl: z.enum(['5m', '1h']),
  tokenizers: z.record(z.string(), z.string()),
});

const StageView = z.object({ count: z.number(), sumMs: z.number(), p50Ms: z.number().nullable(), p95Ms: z.number().nullable(), p99Ms: z.number().nullable() });

export const MetricsResponse = z.object({
  stages: z.record(z.string(), StageView).describe('extract, update, rebuild, respond, total; percentiles estimated from the histogram buckets (null before the first observation)'),
  tokens: z.object({ context: z.number(), fullHistory: z.number(), savingsRatio: z.number() }),
  hotCache: z
    .object({
      hits: z.number(),
      misses: z.number(),
      hitRatio: z.number(),
      errors: z.number().describe('operations that failed: each a miss or a dropped write'),
      state: HotCacheState.optional(),
      breaker: HotCacheBreaker.optional(),
      trips: z.number().optional().describe('times the circuit breaker opened'),
      shortCircuited: z.number().optional().describe('calls refused at once while it was open'),
      epochChanges: z.number().optional().describe('times Redis came back restarted from disk or failed over (the cache started empty)'),
    })
    .nullable(),
  memoryReads: z
    .object({ hits: z.number(), misses: z.number(), bypassed: z.number(), hitRatio: z.number() })
    .nullable()
    .describe('memory reads answered by the hot tier with a current value (hits) or by the warm store (misses, stale values found included); null without a read cache'),
  rebuildCache: z.object({ hit: z.number(), miss: z.number() }),
  extractions: z.record(z.string(), z.number()),
  requests: z.object({ total: z.number(), byRoute: z.record(z.string(), z.number()).describe('"<METHOD> <route pattern>" → requests') }),
});
