/**
 * What the trimmer pages out. A policy is data, not constants: thresholds in tokens, per-tool
 * overrides, how much recent history stays untouched, what a stub may cost. `resolvePolicy` fills
 * in the defaults.
 *
 * Thresholds adapt to the payload and to where it is in the session: a payload goes only when
 * its stub costs at most `maxStubShare` of it (so small outputs stay, whatever the threshold),
 * payloads of the last `keepLastTurns` round trips go only above `tailPayloadTokens`, and older
 * payloads above a threshold that falls from the tail's to `toolResultTokens` as they age
 * (`thresholdHalfLifeTurns`): what the next turn most likely needs stays, what is long past goes.
 */
import { UsageError } from '../../errors.js';

/** Per-tool override, keyed by tool name (e.g. "Read", "mcp__github__get_file"). */
export interface ToolRule {
  /** Page out this tool's results above this many tokens (overrides `toolResultTokens`). */
  toolResultTokens?: number;
  /** Never page out this tool's results. */
  keep?: boolean;
}

export interface TrimPolicy {
  /** Old tool results larger than this are paged out behind a stub, tokens (default 50). */
  toolResultTokens: number;
  /** Old tool-use input values (Write content, Edit strings, …) larger than this are paged out, tokens (default 50). */
  toolInputTokens: number;
  /** The most recent model round trips (assistant message + the user message answering it) whose text, thinking and ordinary payloads stay untouched (default 1). */
  keepLastTurns: number;
  /** Payloads inside the last `keepLastTurns` round trips larger than this are still paged out, tokens; 0 leaves those round trips byte-identical (default 1000). */
  tailPayloadTokens: number;
  /** Round trips over which an old payload's threshold halves on its way from `tailPayloadTokens` down to `toolResultTokens`; 0 = no decay, old payloads all at `toolResultTokens` (default 0). */
  thresholdHalfLifeTurns: number;
  /** A stub may cost at most this share of the tokens it replaces; a payload too small for that stays (default 0.25). */
  maxStubShare: number;
  /** Share of a payload's tokens a stub may spend quoting it, before `excerptChars` caps it (default 0.02). */
  excerptShare: number;
  /** At most this many characters of excerpt in one stub (default 120). */
  excerptChars: number;
  /** Treat tool results flagged `is_error` of the current user turn (from the last prompt on) like the tail's: paged out only above `tailPayloadTokens` (default true; with a tail of 0, never). Errors of earlier turns page out like any old result, their stub keeping the status and error line. */
  keepErrors: boolean;
  /** Page out all but the newest result of repeated reads of one file (default true). */
  keepNewestReadOnly: boolean;
  /** Page out base64 images in tool results and in user messages (default true). */
  images: boolean;
  /** Page out thinking blocks of earlier turns (default true). */
  thinking: boolean;
  /** Page out the `toolUseResult` UI duplicate on tool-result lines (default true; never sent to the model). */
  toolUseResult: boolean;
  /** Page out file-history-snapshot, queue-operation and progress lines (default true). */
  metadataLines: boolean;
  /** Drop content before the last compaction boundary, except preserved messages (default true). */
  dropBeforeCompaction: boolean;
  /** Overrides per tool name. */
  tools: Record<string, ToolRule>;
}

export const DEFAULT_TRIM_POLICY: Readonly<TrimPolicy> = Object.freeze({
  toolResultTokens: 50,
  toolInputTokens: 50,
  keepLastTurns: 1,
  tailPayloadTokens: 1000,
  thresholdHalfLifeTurns: 0,
  maxStubShare: 0.25,
  excerptShare: 0.02,
  excerptChars: 120,
  keepErrors: true,
  keepNewestReadOnly: true,
  images: true,
  thinking: true,
  toolUseResult: true,
  metadataLines: true,
  dropBeforeCompaction: true,
  tools: {},
});

/** Merges user options over the defaults and checks them. */
export function resolvePolicy(overrides: Partial<TrimPolicy> = {}): TrimPolicy {
  const policy: TrimPolicy = { ...DEFAULT_TRIM_POLICY, ...overrides, tools: { ...DEFAULT_TRIM_POLICY.tools, ...(overrides.tools ?? {}) } };
  for (const key of ['toolResultTokens', 'toolInputTokens', 'keepLastTurns', 'tailPayloadTokens', 'excerptChars'] as const) {
    const v = policy[key];
    if (!Number.isInteger(v) || v < 0) throw new UsageError(`trim policy: ${key} must be a non-negative integer, got ${String(v)}`);
  }
  for (const key of ['thresholdHalfLifeTurns', 'excerptShare'] as const) {
    const v = policy[key];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new UsageError(`trim policy: ${key} must be a non-negative number, got ${String(v)}`);
  }
  if (typeof policy.maxStubShare !== 'number' || !(policy.maxStubShare > 0 && policy.maxStubShare <= 1)) {
    throw new UsageError(`trim policy: maxStubShare must be a number in (0, 1], got ${String(policy.maxStubShare)}`);
  }
  return policy;
}

/** Threshold for one tool's results, or undefined when that tool's results are always kept. */
export function toolResultThreshold(policy: TrimPolicy, toolName: string | undefined): number | undefined {
  const rule = toolName ? policy.tools[toolName] : undefined;
  if (rule?.keep) return undefined;
  return rule?.toolResultTokens ?? policy.toolResultTokens;
}

/**
 * The threshold for a payload `age` round trips before the protected tail ends (age < 0: inside
 * it), given the tool's base threshold: the tail's threshold halving every
 * `thresholdHalfLifeTurns` round trips down to the base. Undefined inside the tail when the tail
 * is left untouched.
 */
export function thresholdAtAge(policy: TrimPolicy, base: number, age: number): number | undefined {
  if (age < 0) return policy.tailPayloadTokens > 0 ? Math.max(base, policy.tailPayloadTokens) : undefined;
  const top = Math.max(base, policy.tailPayloadTokens);
  if (policy.thresholdHalfLifeTurns <= 0 || top <= base) return base;
  return Math.max(base, Math.round(top * 0.5 ** ((age + 1) / policy.thresholdHalfLifeTurns)));
}

/** Characters of excerpt a stub for a payload of `tokens` tokens may hold. */
export function excerptBudget(policy: TrimPolicy, tokens: number): number {
  return Math.min(policy.excerptChars, Math.floor(tokens * policy.excerptShare * 4));
}
