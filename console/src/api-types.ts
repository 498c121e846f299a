/**
 * The JSON shapes the console reads, as docs/console.md specifies them. Written by hand (the
 * console does not import server code) and kept to the fields the views use.
 */

export interface ErrorBody {
  error: { code: string; message: string; hint?: string };
}

export interface WhoAmI {
  admin: boolean;
  user: string | null;
  keyId: string;
}

export interface UserSummary {
  user: string;
  turns: number;
  tasks: number;
  lastActiveAt: string | null;
}

export interface SessionSummary {
  agent: 'claude' | 'codex';
  id: string;
  path: string;
  project: string | null;
  bytes: number;
  messages: number;
  /** Whether `messages` is the reconstruction's exact count (else a quick one, for files over 16 MiB). */
  messagesExact?: boolean;
  /** ISO-8601. */
  updatedAt: string;
  title?: string;
}

export interface DagNode {
  id: string;
  kind: 'snapshot' | 'branch';
  name: string;
  agent: 'claude' | 'codex';
  sessionId: string;
  createdAtMs: number;
  bytes?: number;
  /** Snapshot: context tokens, when its stats are known. */
  tokens?: number | null;
  tags?: string[];
  trimmed?: boolean;
  path?: string;
}

export interface DagEdge {
  from: string;
  to: string;
  kind: 'branch' | 'snapshot' | 'next';
}

export interface DagGraph {
  nodes: DagNode[];
  edges: DagEdge[];
}

/** Token categories of a session, in the order the charts stack them. */
export const TOKEN_CATEGORIES = ['userText', 'assistantText', 'toolInput', 'toolResult', 'image', 'thinking', 'system'] as const;
export type TokenCategory = (typeof TOKEN_CATEGORIES)[number];

export interface CacheScenario {
  ttl: '5m' | '1h';
  untrimmedCacheWarm: boolean;
  /** USD; negative = trimming is cheaper at once. */
  coldStartCostUsd: number;
  perTurnSavingUsd: number;
  /** 1-based call after which the trimmed session has cost no more; null = never within the turns. */
  breakEvenTurn: number | null;
  hitRate: { untrimmed: number; trimmed: number };
  cumulativeUsd: { untrimmed: number[]; trimmed: number[] };
}

export interface SessionAnalysis {
  agent: string;
  file: string;
  model?: string;
  messages: number;
  tokens: number;
  breakdown: Record<TokenCategory, number>;
  trimmed: { tokens: number; breakdown: Record<TokenCategory, number>; reduction: number };
  tokenizer: string;
  cache: {
    model: string;
    priced: boolean;
    growthTokensPerTurn: number;
    outputTokensPerTurn: number;
    scenarios: CacheScenario[];
  };
  findings: { errors: number; warnings: number };
}

/** One row of `GET /v1/sessions/economics` (`SessionEconomics` in src/session/economics/economics.ts). */
export interface SessionEconomicsRow {
  file: string;
  agent: 'claude' | 'codex';
  model?: string;
  pricedAs: string;
  priced: boolean;
  tokens: number;
  trimmedTokens: number;
  /** 0..1 */
  reduction: number;
  systemAndTools: number | null;
  requestReduction: number | null;
  toolResultShare: number;
  class: 'mixed' | 'conversational';
  cacheWriteUsd: number;
  firstCallExtraUsd: number;
  perTurnSavingUsd: number;
  /** null = never */
  breakEvenTurn: number | null;
}

export interface EconomicsGroup {
  n: number;
  reductionMean: number;
  reductionPeak: number;
  breakEvenMean: number | null;
  breakEvenMedian: number | null;
  neverBreakEven: number;
  contextMean: number;
  over30: { n: number; share: number; breakEvenMean: number | null };
}

export interface SessionsEconomics {
  sessions: SessionEconomicsRow[];
  groups: { all: EconomicsGroup; mixed: EconomicsGroup; conversational: EconomicsGroup };
  skipped: { file: string; reason: string }[];
  ttl: '5m' | '1h';
  tokenizers: Record<string, string>;
}

export interface SnapshotResult {
  id: string;
  name: string;
  bytes: number;
  files: number;
  session: { agent: string; id: string; path: string };
}

export interface BranchResult {
  sessionId: string;
  path: string;
  resume: string;
  name: string;
  id: string;
  snapshot: { id: string; name: string };
  trimmed: { inputTokens: number | null; outputTokens: number | null; reduction: number | null } | null;
  warnings: string[];
}

export interface PageInResult {
  ref: string;
  hash: string;
  pointer: string;
  kind: 'text' | 'json';
  content: unknown;
}

export interface HistoryView {
  seq: number;
  kind: string;
  recordId: string;
  /** Field name, or "*" for create/delete. */
  field: string;
  oldValue: unknown;
  newValue: unknown;
  turnId: string | null;
  at: string;
}

export const TASK_STATUSES = ['todo', 'doing', 'done', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export interface TaskView {
  id: string;
  title: string;
  status: TaskStatus;
  priority: 'low' | 'normal' | 'high' | 'urgent';
  /** ISO-8601 UTC. */
  due: string | null;
  duePhrase: string | null;
  project: string | null;
  createdAt: string;
  updatedAt: string;
  history: HistoryView[];
}

export interface ProjectView {
  id: string;
  name: string;
  status?: string;
  createdAt: string;
  updatedAt: string;
  history: HistoryView[];
}

export interface DecisionView {
  id: string;
  text: string;
  rationale: string | null;
  createdAt: string;
  history: HistoryView[];
}

export interface FactView {
  id: string;
  key?: string | null;
  text?: string;
  value?: string;
  createdAt: string;
  updatedAt: string;
  history: HistoryView[];
}

export interface UserMemory {
  user: string;
  /** The user's zone (IANA name or "+08:00"): their times are shown in it. */
  timeZone: string;
  memoryVersion: number;
  tasks: TaskView[];
  projects: ProjectView[];
  decisions: DecisionView[];
  facts: FactView[];
  preferences: FactView[];
}

export const LAYER_NAMES = ['system', 'profile', 'project', 'tasks', 'history', 'memories'] as const;

export interface ContextPreview {
  text: string;
  tokens: number;
  budgetTokens: number;
  layers: { name: string; tokens: number; budgetTokens: number; items: { kind: string; id: string; text: string }[] }[];
  dropped: { layer: string; kind: string; id: string; reason: string; tokens: number }[];
  /** Length (UTF-16 code units) of the cache-stable prefix of `text`. */
  stablePrefixChars: number;
  memoryVersion: number;
  cached: boolean;
  /** The block after the stable prefix stating the date, time and zone every time of `text` is in. */
  clock?: { text: string; tokens: number; at: string; timeZone: string };
}

export const STAGES = ['extract', 'update', 'rebuild', 'respond', 'total'] as const;

/** Percentiles are estimated from histogram buckets; null before the first observation. */
export interface StageStats {
  count: number;
  sumMs: number;
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
}

export interface MetricsSnapshot {
  stages: Record<string, StageStats>;
  tokens: { context: number; fullHistory: number; savingsRatio: number };
  hotCache: { hits: number; misses: number; hitRatio: number } | null;
  memoryReads: { hits: number; misses: number; bypassed: number; hitRatio: number } | null;
  rebuildCache: { hit: number; miss: number };
  refreshAhead: { rebuilds: number; failed: number } | null;
  extractions: Record<string, number>;
  requests: { total: number; byRoute: Record<string, number> };
}
