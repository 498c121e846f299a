/**
 * What the trimmer pages out. A policy is data, not constants: thresholds in tokens, per-tool
 * overrides, how much recent history stays untouched. `resolvePolicy` fills in the defaults.
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
  /** Tool results larger than this are paged out behind a stub, tokens (default 200). */
  toolResultTokens: number;
  /** Tool-use input values (Write content, Edit strings, MultiEdit edits) larger than this are paged out, tokens (default 200). */
  toolInputTokens: number;
  /** The most recent model round trips (assistant message + the user message answering it) left untouched (default 2). */
  keepLastTurns: number;
  /** Leave tool results flagged `is_error` in place, whatever their size (default true). */
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
  /** Characters of the payload's head and of its tail quoted in a stub (default 160 each). */
  excerptChars: number;
  /** Overrides per tool name. */
  tools: Record<string, ToolRule>;
}

export const DEFAULT_TRIM_POLICY: Readonly<TrimPolicy> = Object.freeze({
  toolResultTokens: 200,
  toolInputTokens: 200,
  keepLastTurns: 2,
  keepErrors: true,
  keepNewestReadOnly: true,
  images: true,
  thinking: true,
  toolUseResult: true,
  metadataLines: true,
  dropBeforeCompaction: true,
  excerptChars: 160,
  tools: {},
});

/** Merges user options over the defaults and checks them. */
export function resolvePolicy(overrides: Partial<TrimPolicy> = {}): TrimPolicy {
  const policy: TrimPolicy = { ...DEFAULT_TRIM_POLICY, ...overrides, tools: { ...DEFAULT_TRIM_POLICY.tools, ...(overrides.tools ?? {}) } };
  for (const key of ['toolResultTokens', 'toolInputTokens', 'keepLastTurns', 'excerptChars'] as const) {
    const v = policy[key];
    if (!Number.isInteger(v) || v < 0) throw new UsageError(`trim policy: ${key} must be a non-negative integer, got ${String(v)}`);
  }
  return policy;
}

/** Threshold for one tool's results, or undefined when that tool's results are always kept. */
export function toolResultThreshold(policy: TrimPolicy, toolName: string | undefined): number | undefined {
  const rule = toolName ? policy.tools[toolName] : undefined;
  if (rule?.keep) return undefined;
  return rule?.toolResultTokens ?? policy.toolResultTokens;
}
