/**
 * The JSON Claude Code writes on a hook's stdin, parsed and checked. Kept apart from the worker
 * (run.ts) so `ctxvm hooks run` can hand a payload over without loading the branch and trim code.
 */
import { isAbsolute } from 'node:path';
import { UsageError } from '../errors.js';
import { HOOK_EVENTS, type HookEvent } from './settings.js';

/** The JSON Claude Code writes on a hook's stdin (fields ctxvm uses; others are ignored). */
export interface HookPayload {
  session_id: string;
  transcript_path: string;
  cwd?: string;
  hook_event_name?: string;
  /** PreCompact: 'manual' | 'auto'. */
  trigger?: string;
  /** SessionEnd: 'clear' | 'logout' | 'prompt_input_exit' | 'other'. */
  reason?: string;
  [key: string]: unknown;
}

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** Parses and checks a hook payload (the session id is used in file names, so it is checked strictly). */
export function parseHookPayload(text: string): HookPayload {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (cause) {
    throw new UsageError(`hook payload is not JSON: ${(cause as Error).message}`, { cause });
  }
  const p = v as Partial<HookPayload> | null;
  if (!p || typeof p !== 'object') throw new UsageError('hook payload is not a JSON object');
  if (typeof p.session_id !== 'string' || !SAFE_ID.test(p.session_id)) throw new UsageError(`hook payload: session_id ${JSON.stringify(p.session_id)} is missing or not an id`);
  if (typeof p.transcript_path !== 'string' || !isAbsolute(p.transcript_path) || !p.transcript_path.endsWith('.jsonl')) {
    throw new UsageError(`hook payload: transcript_path ${JSON.stringify(p.transcript_path)} is not an absolute .jsonl path`);
  }
  return p as HookPayload;
}

/** Whether `value` names a hook event ctxvm handles. */
export function isHookEvent(value: unknown): value is HookEvent {
  return typeof value === 'string' && (HOOK_EVENTS as readonly string[]).includes(value);
}
