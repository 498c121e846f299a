/**
 * Which agent wrote a session file, told by its first JSON object line — and, when there is none,
 * what the file is instead: empty, blank lines only, JSON values that are not objects, or a first
 * line that is not JSON (binary, cut off, a line without a newline), each said as such.
 */
import { stat } from 'node:fs/promises';
import { readJsonl } from '../core/jsonl.js';
import { CtxvmError, ioError } from '../errors.js';
import type { AgentKind } from './context-model.js';

const HINT = 'pass a Claude Code .jsonl transcript or a Codex rollout-*.jsonl';

/** Tells a Codex rollout from a Claude Code transcript by the shape of one JSON object line. */
export function agentOfLine(line: Record<string, unknown>): AgentKind {
  return 'payload' in line && typeof line.type === 'string' && ('timestamp' in line || line.type === 'session_meta') ? 'codex' : 'claude';
}

/** The agent of a session file; throws a ParseError (exit 2) naming what the file is when it is no session. */
export async function detectSessionAgent(file: string): Promise<AgentKind> {
  let values = 0;
  let objects = 0;
  for await (const rec of readJsonl<unknown>(file, { onBadLine: 'yield' })) {
    if (rec.error) throw rec.error;
    const v = rec.value;
    if (!v || typeof v !== 'object' || Array.isArray(v)) {
      values++;
      continue;
    }
    // every line of both formats has a "type": an object without one says nothing of the agent
    objects++;
    if (typeof (v as { type?: unknown }).type === 'string') return agentOfLine(v as Record<string, unknown>);
  }
  if (objects > 0) {
    throw new CtxvmError('E_PARSE', `${file}: not a session: none of its ${objects} JSON object line(s) has the "type" field every Claude Code and Codex line has`, { hint: HINT });
  }
  if (values > 0) {
    throw new CtxvmError('E_PARSE', `${file}: no line is a JSON object (${values} line${values === 1 ? ' holds' : 's hold'} other JSON values), not a session`, { hint: HINT });
  }
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch (cause) {
    throw ioError('read', file, cause);
  }
  throw new CtxvmError('E_PARSE', size === 0 ? `${file}: empty file, not a session` : `${file}: only blank lines (${size} bytes), not a session`, { hint: HINT });
}
