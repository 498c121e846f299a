/**
 * Rewrites a Codex CLI rollout into a branch: the new id goes into `session_meta.payload.id` (and
 * the file name, chosen by the caller); every other line is copied byte for byte unless it carries
 * an earlier trim's restore annotation (dropped) or a `cwd` that moves. A cut at turn N keeps the
 * lines before the (N+1)-th user turn, and the contextual user messages (`<environment_context>`…)
 * written just before that turn go with it.
 */
import { basename } from 'node:path';
import { readJsonl, JsonlWriter } from '../../core/jsonl.js';
import { CtxvmError, UsageError } from '../../errors.js';
import type { CodexIndex } from '../codex/scan.js';
import type { CodexLine } from '../codex/types.js';
import { remapPath, stripAnnotation, type CwdRemap } from './rewrite-common.js';

const NEWLINE = Buffer.from('\n');

/** What a Codex cut keeps: the lines before `beforeLine`. */
export interface CodexCut {
  /** First file line (1-based) left out; Infinity keeps everything. */
  beforeLine: number;
  turn: number;
  /** Turns the rollout has. */
  turns: number;
}

/** The user turns of a rollout: file lines of the `response_item` user messages the person typed. */
export function listCodexTurns(index: CodexIndex): { turn: number; line: number }[] {
  return index.lines.filter((m) => m.kind === 'response_item' && m.isUserTurn).map((m, i) => ({ turn: i + 1, line: m.line }));
}

/** Decides where a branch cut at turn `turn` (1-based) ends. */
export function planCodexCut(index: CodexIndex, turn: number): CodexCut {
  const turns = listCodexTurns(index);
  if (turn < 1 || turn > turns.length) {
    throw new UsageError(`--at ${turn}: ${basename(index.file)} has ${turns.length} user turn(s)`, { hint: turns.length ? `pass a turn number from 1 to ${turns.length}` : 'this rollout has no user turn to cut at' });
  }
  const next = turns[turn];
  if (!next) return { beforeLine: Infinity, turn, turns: turns.length };
  // context messages written for the next turn (environment, instructions) belong to it
  let i = index.lines.findIndex((m) => m.line === next.line);
  while (i > 0) {
    const prev = index.lines[i - 1]!;
    if (prev.kind === 'response_item' && prev.payloadType === 'message' && prev.role === 'user' && !prev.isUserTurn) i--;
    else break;
  }
  return { beforeLine: index.lines[i]!.line, turn, turns: turns.length };
}

export interface RewriteCodexFileOptions {
  input: string;
  output: string;
  index: CodexIndex;
  sessionId: string;
  cut?: CodexCut;
  cwd?: CwdRemap;
  signal?: AbortSignal;
}

export interface RewriteCodexFileResult {
  lines: number;
  bytes: number;
  inheritedObjects: Set<string>;
  droppedTornLine: boolean;
  droppedLines: number;
}

/**
 * Replaces the JSON string `"from"` by `"to"` in a line's text when that reproduces `expected`
 * exactly (keeping the writer's own formatting of numbers and escapes); else serialises `expected`.
 */
function spliceOrStringify(text: string, from: string, to: string, expected: unknown): string {
  const spliced = text.split(JSON.stringify(from)).join(JSON.stringify(to));
  try {
    if (JSON.stringify(JSON.parse(spliced)) === JSON.stringify(expected)) return spliced;
  } catch {
    // fall through
  }
  return JSON.stringify(expected);
}

/** Streams the rollout into `output` (atomically) with the new id, cut and remapped. */
export async function rewriteCodexFile(options: RewriteCodexFileOptions): Promise<RewriteCodexFileResult> {
  const { input, output, index, sessionId, cut } = options;
  const oldId = index.sessionId;
  if (!oldId) throw new CtxvmError('E_INVALID', `${input}: no session_meta line with payload.id: not a resumable Codex rollout`);
  const objects = new Set<string>();
  const writer = await JsonlWriter.open(output, { sync: false });
  let droppedTornLine = false;
  let droppedLines = 0;
  let pendingBad: { eol: string; error: Error } | undefined;
  try {
    for await (const rec of readJsonl<CodexLine>(input, { onBadLine: 'yield', signal: options.signal })) {
      if (pendingBad) throw pendingBad.error;
      if (rec.error) {
        pendingBad = { eol: rec.raw.eol, error: rec.error };
        continue;
      }
      if (cut && rec.raw.line >= cut.beforeLine) {
        droppedLines++;
        continue;
      }
      const value = rec.value;
      if (!value || typeof value !== 'object' || Array.isArray(value)) throw new CtxvmError('E_PARSE', `${input}:${rec.raw.line}: not a JSON object`);
      const payload = value.payload && typeof value.payload === 'object' && !Array.isArray(value.payload) ? (value.payload as Record<string, unknown>) : undefined;
      const isMeta = value.type === 'session_meta' && payload?.id === oldId;
      const movesCwd = (value.type === 'session_meta' || value.type === 'turn_context') && typeof payload?.cwd === 'string' && remapPath(payload.cwd, options.cwd) !== payload.cwd;
      const annotated = 'ctxvm' in value;
      if (!isMeta && !movesCwd && !annotated) {
        // copied as written (a last line without a terminator gets one: the agent appends after it)
        await writer.writeRaw(Buffer.concat([rec.raw.bytes, NEWLINE]));
        continue;
      }
      stripAnnotation(value, objects);
      if (payload && movesCwd) payload.cwd = remapPath(payload.cwd as string, options.cwd);
      if (payload && isMeta) payload.id = sessionId;
      const text = isMeta && !movesCwd && !annotated ? spliceOrStringify(rec.raw.text, oldId, sessionId, value) : JSON.stringify(value);
      await writer.writeRaw(text + '\n');
    }
    if (pendingBad) {
      if (pendingBad.eol !== '') throw pendingBad.error;
      droppedTornLine = true;
    }
    await writer.close();
  } catch (error) {
    await writer.abort();
    throw error;
  }
  return { lines: writer.lines, bytes: writer.bytes, inheritedObjects: objects, droppedTornLine, droppedLines };
}
