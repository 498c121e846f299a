/**
 * The CMV paper's economics table, on a set of sessions: for each, what the agent would resend,
 * how much ctxvm's trim at the default policy removes, the session's class, and when trimming
 * pays under prompt caching (cache-model.ts `trimEconomics`); then the table per class and
 * overall. Each session is trimmed into a scratch folder with a scratch object store, both
 * removed afterwards: nothing is written where the sessions live.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CtxvmError } from '../../errors.js';
import { createFsObjectStore } from '../../store/drivers/objects-fs.js';
import { trimEconomics, type CacheTtl } from '../cache-model.js';
import type { AgentKind } from '../context-model.js';
import { priceFor } from '../pricing.js';
import { trimSession } from '../session.js';
import type { TrimPolicy } from '../trim/policy.js';
import { findSessionFiles } from './find-sessions.js';

/** The paper's rule: tool results at least this share of the context make a session "mixed tool". */
export const MIXED_TOOL_SHARE = 0.15;
/** The paper singles out sessions reduced by more than this. */
export const HIGH_REDUCTION = 0.3;

export type SessionClass = 'mixed' | 'conversational';

/** The paper's class of a session from its tool results' share of the context (0..1). */
export function sessionClass(toolResultShare: number): SessionClass {
  return toolResultShare >= MIXED_TOOL_SHARE ? 'mixed' : 'conversational';
}

/** One session's row. */
export interface SessionEconomics {
  file: string;
  agent: AgentKind;
  /** Model of the session's last reply, if recorded. */
  model?: string;
  /** Model whose prices were used, and whether the price table knows it (else Sonnet prices). */
  pricedAs: string;
  priced: boolean;
  /** Tokens of the messages the agent resends (calibrated to the logs' usage; see usage-profile.ts). */
  tokens: number;
  /** The same after ctxvm's trim at the default policy. */
  trimmedTokens: number;
  /** Share of `tokens` the trim removes (0..1; negative if it grew). */
  reduction: number;
  /** The system prompt and tools read off the log's usage (null when unknown); trimming leaves them alone. */
  systemAndTools: number | null;
  /** Share of the whole request removed, system prompt and tools included (null when those are unknown). */
  requestReduction: number | null;
  /** Tool results' share of `tokens`. */
  toolResultShare: number;
  class: SessionClass;
  /** The one-time cache write of the trimmed prefix (USD). */
  cacheWriteUsd: number;
  /** The first call's cost over the untrimmed session's warm read (USD; negative when cheaper at once). */
  firstCallExtraUsd: number;
  perTurnSavingUsd: number;
  /** Calls until trimming has paid for its cache write (1 = from the first); null = never. */
  breakEvenTurn: number | null;
}

/** The paper's table for one set of sessions. Means are over the set; reductions are 0..1. */
export interface EconomicsGroup {
  n: number;
  reductionMean: number;
  reductionPeak: number;
  /** Mean break-even call over the sessions that break even (null when none does). */
  breakEvenMean: number | null;
  /** Median break-even call over the same sessions (the mean is pulled up by barely reduced ones). */
  breakEvenMedian: number | null;
  /** Sessions that never break even (left out of breakEvenMean). */
  neverBreakEven: number;
  /** Mean tokens the agent would resend (messages). */
  contextMean: number;
  /** Sessions reduced by more than HIGH_REDUCTION: how many, their share of n, their mean break-even. */
  over30: { n: number; share: number; breakEvenMean: number | null };
}

export interface EconomicsGroups {
  all: EconomicsGroup;
  mixed: EconomicsGroup;
  conversational: EconomicsGroup;
}

export interface EconomicsReport {
  sessions: SessionEconomics[];
  groups: EconomicsGroups;
  /** Files that are not sessions ctxvm can trim, or have nothing to resend, with the reason. */
  skipped: { file: string; reason: string }[];
  ttl: CacheTtl;
  /** The --model override, if any. */
  model?: string;
  /** How tokens were counted (one line per agent seen). */
  tokenizers: Partial<Record<AgentKind, string>>;
}

export interface EconomicsOptions {
  /** Price every session as this model (default: each session's own). */
  model?: string;
  /** Cache lifetime whose write price applies (default 5m). */
  ttl?: CacheTtl;
  /** Trim policy overrides (default: the default policy, as the paper's table is about). */
  policy?: Partial<TrimPolicy>;
  /** Where scratch folders go (default the OS temp folder). */
  scratchDir?: string;
  /** Before the first session (0 done) and after each: how many are done, of how many, and the file. */
  onProgress?: (done: number, total: number, file: string) => void;
  signal?: AbortSignal;
}

const round = (x: number, digits = 4) => Math.round(x * 10 ** digits) / 10 ** digits;

/** Trims one session into a scratch folder and works out its row. */
export async function sessionEconomics(file: string, options: EconomicsOptions = {}): Promise<SessionEconomics & { tokenizer: string }> {
  const dir = await mkdtemp(join(options.scratchDir ?? tmpdir(), 'ctxvm-economics-'));
  try {
    const store = createFsObjectStore({ root: join(dir, 'objects'), durability: 'deferred' });
    const r = await trimSession({ input: file, output: join(dir, 'trimmed.jsonl'), store, ...(options.policy ? { policy: options.policy } : {}), ...(options.signal ? { signal: options.signal } : {}) });
    const tokens = r.input.tokens ?? 0;
    const trimmedTokens = r.output.tokens ?? 0;
    const toolResultShare = tokens > 0 ? (r.input.breakdown?.toolResult ?? 0) / tokens : 0;
    const pricedAs = options.model ?? r.model;
    const price = priceFor(pricedAs);
    const money = trimEconomics({ beforeTokens: tokens, afterTokens: trimmedTokens, price, ttl: options.ttl ?? '5m' });
    return {
      file,
      agent: r.agent,
      ...(r.model ? { model: r.model } : {}),
      pricedAs: pricedAs ?? 'unknown',
      priced: price.matched,
      tokens,
      trimmedTokens,
      reduction: r.reduction ?? 0,
      systemAndTools: r.request?.systemAndTools ?? null,
      requestReduction: r.request?.reduction ?? null,
      toolResultShare: round(toolResultShare),
      class: sessionClass(toolResultShare),
      ...money,
      tokenizer: r.tokenizer ?? '',
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const meanOrNull = (xs: number[]) => (xs.length ? round(mean(xs), 2) : null);
function median(xs: number[]): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The paper's table for a set of sessions. */
export function economicsGroup(sessions: readonly SessionEconomics[]): EconomicsGroup {
  const breakEvens = sessions.flatMap((s) => (s.breakEvenTurn === null ? [] : [s.breakEvenTurn]));
  const high = sessions.filter((s) => s.reduction > HIGH_REDUCTION);
  return {
    n: sessions.length,
    reductionMean: round(mean(sessions.map((s) => s.reduction))),
    reductionPeak: round(sessions.length ? Math.max(...sessions.map((s) => s.reduction)) : 0),
    breakEvenMean: meanOrNull(breakEvens),
    breakEvenMedian: median(breakEvens),
    neverBreakEven: sessions.length - breakEvens.length,
    contextMean: Math.round(mean(sessions.map((s) => s.tokens))),
    over30: {
      n: high.length,
      share: sessions.length ? round(high.length / sessions.length) : 0,
      breakEvenMean: meanOrNull(high.flatMap((s) => (s.breakEvenTurn === null ? [] : [s.breakEvenTurn]))),
    },
  };
}

/** The table per class and overall. */
export function economicsGroups(sessions: readonly SessionEconomics[]): EconomicsGroups {
  return {
    all: economicsGroup(sessions),
    mixed: economicsGroup(sessions.filter((s) => s.class === 'mixed')),
    conversational: economicsGroup(sessions.filter((s) => s.class === 'conversational')),
  };
}

const MAX_REASON_CHARS = 240;

/** Why a file is left out rather than failing the whole run (one line), or undefined when the error is not about the file. */
export function skipReason(error: unknown): string | undefined {
  if (!CtxvmError.is(error)) return undefined;
  const lines = error.message.split('\n').map((l) => l.trim()).filter(Boolean);
  const joined = lines.join(' ');
  return joined.length > MAX_REASON_CHARS ? `${joined.slice(0, MAX_REASON_CHARS - 1)}…` : joined;
}

/** The economics of every session under `paths` (folders walked; see find-sessions.ts). */
export async function sessionsEconomics(paths: readonly string[], options: EconomicsOptions & { cwd?: string } = {}): Promise<EconomicsReport> {
  const files = await findSessionFiles(paths, options.cwd);
  const sessions: SessionEconomics[] = [];
  const skipped: EconomicsReport['skipped'] = [];
  const tokenizers: EconomicsReport['tokenizers'] = {};
  options.onProgress?.(0, files.length, '');
  for (const [i, file] of files.entries()) {
    options.signal?.throwIfAborted();
    try {
      const { tokenizer, ...row } = await sessionEconomics(file, options);
      if (row.tokens === 0) skipped.push({ file, reason: 'nothing to resend (no messages)' });
      else {
        sessions.push(row);
        tokenizers[row.agent] ??= tokenizer;
      }
    } catch (error) {
      const reason = skipReason(error);
      if (reason === undefined) throw error;
      skipped.push({ file, reason });
    }
    options.onProgress?.(i + 1, files.length, file);
  }
  return { sessions, groups: economicsGroups(sessions), skipped, ttl: options.ttl ?? '5m', ...(options.model ? { model: options.model } : {}), tokenizers };
}
