/**
 * The context's estimate set against the usage the log records. For every logged request of the
 * current context (after the last compaction) we rebuild what that request sent from the file —
 * the context up to the reply it produced — and keep its features; the estimate of a prefix is a
 * linear function of them. Two uses: the system prompt and tools, which no file holds, are the
 * first request's billed input minus its file-derived part; and bench:trim fits and checks the
 * calibration against every request of the corpus.
 */
import { readLines } from '../core/jsonl.js';
import { createTokenCounter, type TokenCounter } from '../text/tokens.js';
import { billingFor } from './billing-model.js';
import { asSent, codexItemParts, createCodexHistoryBuilder, type CodexContextItem } from './codex/context.js';
import { isModelOutput, isUserTurnItem, type CodexLine } from './codex/types.js';
import type { AgentContext, AgentKind, ContextEntry, ContextPart } from './context-model.js';
import { imageTokens } from './image-tokens.js';
import { readLoggedUsage, type LoggedRequest } from './logged-usage.js';

/** What the estimate of a context is a function of. */
export interface ContextFeatures {
  /** o200k_base tokens of the text parts (uncalibrated). */
  textTokens: number;
  /** Characters of encrypted content billed by its length (Claude thinking signatures). */
  encryptedChars: number;
  /** Tokens that need no calibration: images by pixel size, parts with billedTokens. */
  fixedTokens: number;
  /** Entries (messages or items). */
  entries: number;
}

/** The linear estimate's coefficients. */
export interface CalibrationParams {
  /** Multiplies textTokens (the counter's calibration). */
  textFactor: number;
  encryptedTokensPerChar: number;
  entryTokens: number;
}

/** One logged request with the features of what it sent. */
export interface ProfiledRequest extends LoggedRequest {
  features: ContextFeatures;
}

/** A session's logged requests of the current context. */
export interface UsageProfile {
  agent: AgentKind;
  requests: ProfiledRequest[];
}

const ZERO: ContextFeatures = Object.freeze({ textTokens: 0, encryptedChars: 0, fixedTokens: 0, entries: 0 });

export function addFeatures(a: ContextFeatures, b: ContextFeatures): ContextFeatures {
  return { textTokens: a.textTokens + b.textTokens, encryptedChars: a.encryptedChars + b.encryptedChars, fixedTokens: a.fixedTokens + b.fixedTokens, entries: a.entries + b.entries };
}

/** The estimate of a context with these features. */
export function estimateFromFeatures(f: ContextFeatures, p: CalibrationParams): number {
  return Math.round(f.textTokens * p.textFactor + f.encryptedChars * p.encryptedTokensPerChar + f.fixedTokens + f.entries * p.entryTokens);
}

/** The coefficients countContextTokens uses for `agent` with `counter`. */
export function calibrationParams(agent: AgentKind, counter: TokenCounter): CalibrationParams {
  const b = billingFor(agent);
  return { textFactor: counter.calibration, encryptedTokensPerChar: b.encryptedTokensPerChar, entryTokens: b.entryTokens };
}

/** Features of the parts of one entry, counted with an uncalibrated counter. */
export function entryFeatures(entry: Pick<ContextEntry, 'parts' | 'notBilled'>, raw: TokenCounter): ContextFeatures {
  if (entry.notBilled) return ZERO;
  let textTokens = 0;
  let encryptedChars = 0;
  let fixedTokens = 0;
  for (const p of entry.parts) {
    if (p.billedTokens !== undefined) fixedTokens += p.billedTokens;
    else if (p.category === 'image') fixedTokens += imageTokens(p.text);
    else if (p.encryptedChars) encryptedChars += p.encryptedChars;
    else textTokens += raw.count(p.text);
  }
  return { textTokens, encryptedChars, fixedTokens, entries: 1 };
}

/** Features of a whole context. */
export function contextFeatures(ctx: AgentContext, raw: TokenCounter = createTokenCounter()): ContextFeatures {
  return ctx.entries.reduce((acc, e) => addFeatures(acc, entryFeatures(e, raw)), ZERO);
}

/**
 * Claude: each logged reply sent the messages before it. Replies of the current context only
 * (after the last compact boundary); the loaded context is the chain Claude Code resumes.
 */
export async function claudeUsageProfile(file: string, ctx: AgentContext, raw: TokenCounter = createTokenCounter()): Promise<UsageProfile> {
  const { requests, lastResetLine } = await readLoggedUsage(file, 'claude');
  const byLine = new Map(requests.filter((r) => r.line > lastResetLine).map((r) => [r.line, r] as const));
  const out: ProfiledRequest[] = [];
  let prefix = ZERO;
  for (const e of ctx.entries) {
    const logged = e.role === 'assistant' && !e.injected ? byLine.get(e.line) : undefined;
    if (logged) out.push({ ...logged, features: prefix });
    prefix = addFeatures(prefix, entryFeatures(e, raw));
  }
  return { agent: 'claude', requests: out };
}

/**
 * Codex: at each token_count event, the history so far without the call's own output items. A
 * reasoning item of the current turn (after the last user prompt) is billed as the reasoning
 * tokens its call reported; one of an earlier turn is not billed at all (see toAgentContext).
 */
export async function codexUsageProfile(file: string, raw: TokenCounter = createTokenCounter()): Promise<UsageProfile> {
  const { requests } = await readLoggedUsage(file, 'codex');
  const loggedAt = new Map(requests.map((r) => [r.line, r] as const));
  const builder = createCodexHistoryBuilder();
  const reasoningTokens = new Map<number, number>();
  const pending: number[] = [];
  const cache = new WeakMap<object, ContextFeatures>();
  const itemFeatures = (x: CodexContextItem): ContextFeatures => {
    let f = cache.get(x.item);
    if (!f) {
      const parts: ContextPart[] = codexItemParts(asSent(x).item, { compactionSummary: x.compactionSummary === true });
      f = entryFeatures({ parts }, raw);
      cache.set(x.item, f);
    }
    return f;
  };
  let out: ProfiledRequest[] = [];
  for await (const rawLine of readLines(file)) {
    const logged = loggedAt.get(rawLine.line);
    const b = rawLine.bytes;
    if (!logged && b.indexOf('"response_item"') < 0 && b.indexOf('"compacted"') < 0 && b.indexOf('"thread_rolled_back"') < 0) continue;
    let value: CodexLine;
    try {
      value = JSON.parse(rawLine.text) as CodexLine;
    } catch {
      continue;
    }
    builder.add(rawLine.line, value);
    const payload = value.payload as Record<string, unknown> | undefined;
    if (value.type === 'compacted') out = [];
    if (value.type === 'response_item' && payload?.type === 'reasoning') pending.push(rawLine.line);
    if (!logged) continue;
    for (const line of pending) reasoningTokens.set(line, (logged.reasoningTokens ?? 0) / pending.length);
    pending.length = 0;
    const { history } = builder.finish();
    let end = history.length;
    while (end > 0 && isModelOutput(history[end - 1]!.item.type, history[end - 1]!.item.role)) end--;
    let lastPrompt = -1;
    for (let i = 0; i < end; i++) if (isUserTurnItem(history[i]!.item)) lastPrompt = i;
    let features = ZERO;
    for (let i = 0; i < end; i++) {
      const x = history[i]!;
      // a reasoning item costs its call's reasoning tokens while its turn is current, nothing after
      if (x.item.type !== 'reasoning') features = addFeatures(features, itemFeatures(x));
      else if (i > lastPrompt) features = addFeatures(features, { ...ZERO, fixedTokens: Math.round(reasoningTokens.get(x.line) ?? 0), entries: 1 });
    }
    out.push({ ...logged, features });
  }
  return { agent: 'codex', requests: out };
}

/** A fall in billed input this much larger than the estimate's fall means the system prompt or tools changed. */
const UNEXPLAINED_DROP = { minTokens: 1000, share: 0.05 };

/**
 * The requests since the system prompt and tools last changed. Neither is logged, but a change
 * shows: the billed input falls (a smaller tool set, other instructions) while the messages it
 * sent did not shrink as much.
 */
export function currentSegment(profile: UsageProfile, params: CalibrationParams): ProfiledRequest[] {
  const r = profile.requests;
  let start = 0;
  for (let i = 1; i < r.length; i++) {
    const billedDrop = r[i - 1]!.inputTokens - r[i]!.inputTokens;
    const estimateDrop = estimateFromFeatures(r[i - 1]!.features, params) - estimateFromFeatures(r[i]!.features, params);
    if (billedDrop - estimateDrop > Math.max(UNEXPLAINED_DROP.minTokens, UNEXPLAINED_DROP.share * r[i - 1]!.inputTokens)) start = i;
  }
  return r.slice(start);
}

/** What the log's usage says beyond the file: the system prompt and tools, and a check of the estimate. */
export interface LoggedContext {
  /** Logged requests since the context and its system prompt and tools last changed. */
  requests: number;
  /**
   * The system prompt and tool definitions: the first request's billed input minus the estimate
   * of the messages it sent; null when the log records no usage, or usage below the estimate.
   */
  systemAndTools: number | null;
  /** The first logged request of the current context. */
  first?: { line: number; inputTokens: number; messagesEstimate: number };
  /** The last one, estimated as systemAndTools + its messages: how far the estimate is from the bill. */
  last?: { line: number; inputTokens: number; estimate: number; error: number };
}

/** Reads the system prompt and tools off a usage profile (see LoggedContext). */
export function loggedContext(profile: UsageProfile, params: CalibrationParams): LoggedContext {
  const requests = currentSegment(profile, params);
  const first = requests[0];
  if (!first) return { requests: 0, systemAndTools: null };
  const firstEstimate = estimateFromFeatures(first.features, params);
  const system = first.inputTokens - firstEstimate;
  const out: LoggedContext = {
    requests: requests.length,
    systemAndTools: system >= 0 ? system : null,
    first: { line: first.line, inputTokens: first.inputTokens, messagesEstimate: firstEstimate },
  };
  const last = requests[requests.length - 1]!;
  if (system >= 0) {
    const estimate = system + estimateFromFeatures(last.features, params);
    out.last = { line: last.line, inputTokens: last.inputTokens, estimate, error: Math.round((estimate / last.inputTokens - 1) * 10_000) / 10_000 };
  }
  return out;
}

/**
 * The LoggedContext of a loaded session (one more read of the file, for its usage records). `raw`:
 * the uncalibrated counter to profile with (createMeasurementCounters' `raw` counts each text
 * `counter` counted once).
 */
export async function readLoggedContext(file: string, context: AgentContext, counter: TokenCounter, raw: TokenCounter = createTokenCounter()): Promise<LoggedContext> {
  const profile = context.agent === 'claude' ? await claudeUsageProfile(file, context, raw) : await codexUsageProfile(file, raw);
  return loggedContext(profile, calibrationParams(context.agent, counter));
}
