/**
 * The usage a session log records for each model request: what the provider billed as input.
 * Claude Code writes `message.usage` on every assistant line (input + cache reads + cache writes;
 * the split lines of one reply repeat it); Codex writes `event_msg` `token_count` events whose
 * `last_token_usage` is the call that just finished (it repeats the last one at the start of a
 * turn, and writes `info: null` before the first call). Only lines that can hold usage are parsed.
 */
import { readLines } from '../core/jsonl.js';
import type { AgentKind } from './context-model.js';

/** One model request as the log records it. */
export interface LoggedRequest {
  /** 1-based line of the record: the reply's first line (Claude) or the token_count event (Codex). */
  line: number;
  /** Input tokens billed for the request: uncached, cache reads and cache writes together. */
  inputTokens: number;
  /** Codex: reasoning tokens the call produced (its `reasoning_output_tokens`). */
  reasoningTokens?: number;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

/** Claude `message.usage` → billed input tokens, or undefined when there is none. */
export function claudeUsageInput(message: unknown): number | undefined {
  if (!isObject(message) || !isObject(message.usage)) return undefined;
  const u = message.usage;
  const total = num(u.input_tokens) + num(u.cache_read_input_tokens) + num(u.cache_creation_input_tokens);
  return total > 0 ? total : undefined;
}

/** What a log records about its requests. */
export interface LoggedUsage {
  /** Every request with usage, in file order (sidechain replies left out). */
  requests: LoggedRequest[];
  /** Line of the last context reset (Claude `compact_boundary`, Codex `compacted`), 0 when none. */
  lastResetLine: number;
}

/** The requests the log records usage for, and where its current context began. */
export async function readLoggedUsage(file: string, agent: AgentKind, options: { signal?: AbortSignal } = {}): Promise<LoggedUsage> {
  return agent === 'claude' ? readClaude(file, options) : readCodex(file, options);
}

async function readClaude(file: string, options: { signal?: AbortSignal }): Promise<LoggedUsage> {
  const out: LoggedRequest[] = [];
  const seen = new Set<string>();
  let lastResetLine = 0;
  for await (const raw of readLines(file, options)) {
    const boundary = raw.bytes.indexOf('"compact_boundary"') >= 0;
    if (!boundary && raw.bytes.indexOf('"usage"') < 0) continue;
    const v = parse(raw.text);
    if (boundary && v?.type === 'system' && v.subtype === 'compact_boundary') {
      lastResetLine = raw.line;
      continue;
    }
    if (!v || v.type !== 'assistant' || v.isSidechain === true || !isObject(v.message)) continue;
    const id = typeof v.message.id === 'string' ? v.message.id : undefined;
    if (id !== undefined) {
      if (seen.has(id)) continue;
      seen.add(id);
    }
    const inputTokens = claudeUsageInput(v.message);
    if (inputTokens !== undefined) out.push({ line: raw.line, inputTokens });
  }
  return { requests: out, lastResetLine };
}

async function readCodex(file: string, options: { signal?: AbortSignal }): Promise<LoggedUsage> {
  const out: LoggedRequest[] = [];
  let previous: string | undefined;
  let lastResetLine = 0;
  for await (const raw of readLines(file, options)) {
    const reset = raw.bytes.indexOf('"compacted"') >= 0;
    if (!reset && raw.bytes.indexOf('"token_count"') < 0) continue;
    const v = parse(raw.text);
    if (reset && v?.type === 'compacted') {
      lastResetLine = raw.line;
      continue;
    }
    if (!v || v.type !== 'event_msg' || !isObject(v.payload) || v.payload.type !== 'token_count') continue;
    const info = v.payload.info;
    if (!isObject(info) || !isObject(info.last_token_usage)) continue;
    // the same running total again is the turn-start repeat, not a new call
    const key = JSON.stringify(info.total_token_usage ?? info.last_token_usage);
    if (key === previous) continue;
    previous = key;
    const last = info.last_token_usage;
    const inputTokens = num(last.input_tokens);
    if (inputTokens > 0) out.push({ line: raw.line, inputTokens, reasoningTokens: num(last.reasoning_output_tokens) });
  }
  return { requests: out, lastResetLine };
}

function parse(text: string): Json | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}
