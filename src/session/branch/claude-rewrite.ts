/**
 * Rewrites a Claude Code transcript into a branch: a new `sessionId` on every line that has one,
 * and every line `uuid` remapped to a fresh one, consistently wherever a line refers to another
 * (`parentUuid`, `logicalParentUuid`, `leafUuid`, `sourceToolAssistantUUID`, the preserved uuids
 * and segment of `compactMetadata`, the `messageId` of file-history snapshots, and any other field
 * outside the API message). The API message itself — text, thinking, tool ids, `message.id` — is
 * left alone, except the path of a tool result that Claude Code persisted beside the session
 * (`<session>/tool-results/…`), which follows the copied file.
 */
import { randomUUID } from 'node:crypto';
import { uuidBytes, uuidDeriver } from '../../core/derived-uuid.js';
import { readJsonl, JsonlWriter, type RawLine } from '../../core/jsonl.js';
import { CtxvmError } from '../../errors.js';
import type { ClaudeIndex } from '../claude/scan.js';
import type { ClaudeLine, ContentBlock } from '../claude/types.js';
import type { IdSource } from '../trim/id-object.js';
import { keptByCut, type ClaudeCut } from './claude-cut.js';
import { remapPath, replaceInStrings, stripAnnotation, type CwdRemap } from './rewrite-common.js';

/** How ids map from the source to the branch. */
export interface ClaudeIdMap {
  /** Every `sessionId` value found in the source; each becomes `sessionId`. */
  oldSessionIds: Set<string>;
  /** The branch's session id. */
  sessionId: string;
  /** Source line uuid → branch line uuid. */
  uuids: Map<string, string>;
  /** Rewrite `/<old>/tool-results/` to `/<new>/tool-results/` inside tool results (set when those files are copied). */
  toolResultsPath?: { from: string; to: string };
  /** Move `cwd` fields from one project folder to another. */
  cwd?: CwdRemap;
}

/**
 * Builds the id map of a transcript from its index. Each line's new uuid is derived from its old
 * one under the branch's session id (src/core/derived-uuid.ts), which lets a trim of the branch
 * store its ids as the source's; `newUuid` is injectable for tests.
 */
export function createClaudeIdMap(index: ClaudeIndex, sessionId: string, newUuid: (source: string) => string = uuidDeriver(sessionId, randomUUID)): ClaudeIdMap {
  const uuids = new Map<string, string>();
  for (const m of index.lines) if (m.uuid && !uuids.has(m.uuid)) uuids.set(m.uuid, newUuid(m.uuid));
  const oldSessionIds = new Set<string>();
  if (index.sessionId) oldSessionIds.add(index.sessionId);
  return { oldSessionIds, sessionId, uuids };
}

/**
 * The map seen from the branch's side, for a trim of the branch: which source uuid each derived
 * branch uuid came from (the trim's id object then names it by that, see trim/id-object.ts).
 * Read when called, so it covers what `extendClaudeIdMap` added since.
 */
export function claudeIdSource(map: ClaudeIdMap): IdSource | undefined {
  const seed = uuidBytes(map.sessionId);
  if (!seed) return undefined;
  const bySource = new Map<string, Buffer>();
  for (const [from, to] of map.uuids) {
    const a = uuidBytes(from);
    const b = uuidBytes(to);
    if (a && b) bySource.set(b.toString('hex'), a);
  }
  return { seed, sourceOf: (uuid) => bySource.get(uuid.toString('hex')) };
}

/** Adds the uuids of another transcript (a subagent's) to the map. */
export function extendClaudeIdMap(map: ClaudeIdMap, uuids: Iterable<string>, newUuid: (source: string) => string = uuidDeriver(map.sessionId, randomUUID)): void {
  for (const u of uuids) if (!map.uuids.has(u)) map.uuids.set(u, newUuid(u));
}

/** What rewriting one line did. */
export interface RewrittenLine {
  value: ClaudeLine;
  /** Source uuids this line refers to (not counting its own `uuid`). */
  references: string[];
}

function remapIds(value: unknown, map: ClaudeIdMap, refs: string[]): unknown {
  if (typeof value === 'string') {
    const u = map.uuids.get(value);
    if (u !== undefined) {
      refs.push(value);
      return u;
    }
    return map.oldSessionIds.has(value) ? map.sessionId : value;
  }
  if (Array.isArray(value)) return value.map((v) => remapIds(v, map, refs));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = remapIds(v, map, refs);
    return out;
  }
  return value;
}

function rewriteToolResultPaths(line: ClaudeLine, from: string, to: string): void {
  const content = line.message?.content;
  if (Array.isArray(content)) {
    line.message!.content = content.map((b): ContentBlock => (b?.type === 'tool_result' ? (replaceInStrings(b, from, to) as ContentBlock) : b));
  }
  if (line.toolUseResult !== undefined) line.toolUseResult = replaceInStrings(line.toolUseResult, from, to);
}

/**
 * Rewrites one parsed line (mutating and returning it). Object addresses named by an earlier
 * trim's annotation, which is dropped, are added to `objects`.
 */
export function rewriteClaudeLine(line: ClaudeLine, map: ClaudeIdMap, objects: Set<string>): RewrittenLine {
  stripAnnotation(line, objects);
  const refs: string[] = [];
  for (const key of Object.keys(line)) {
    // the API message and the UI's copy of a tool's output are content, not bookkeeping
    if (key === 'message' || key === 'toolUseResult') continue;
    const v = line[key];
    if (key === 'sessionId' && typeof v === 'string') line.sessionId = map.sessionId;
    else if (key === 'cwd' && typeof v === 'string') line.cwd = remapPath(v, map.cwd);
    else if (key === 'uuid' && typeof v === 'string') line.uuid = map.uuids.get(v) ?? v;
    else line[key] = remapIds(v, map, refs);
  }
  if (map.toolResultsPath) rewriteToolResultPaths(line, map.toolResultsPath.from, map.toolResultsPath.to);
  return { value: line, references: refs };
}

export interface RewriteClaudeFileOptions {
  input: string;
  output: string;
  index: ClaudeIndex;
  map: ClaudeIdMap;
  /** Keep only what this cut keeps (default: every line). */
  cut?: ClaudeCut;
  /** Append a `custom-title` line: the name Claude Code shows in its session picker. */
  title?: string;
  /** Strings to look for in the kept source lines (names of side files); see `referenced`. */
  lookFor?: readonly string[];
  signal?: AbortSignal;
}

export interface RewriteClaudeFileResult {
  lines: number;
  bytes: number;
  /** Object addresses named by restore annotations of an earlier trim (dropped from the branch). */
  inheritedObjects: Set<string>;
  /** True when the source ended with a torn (truncated, unterminated) line, which was left out. */
  droppedTornLine: boolean;
  /** Source lines the cut left out. */
  droppedLines: number;
  /** The `lookFor` strings found in at least one kept source line. */
  referenced: Set<string>;
}

/** Streams the transcript into `output` (atomically), rewritten and cut. */
export async function rewriteClaudeFile(options: RewriteClaudeFileOptions): Promise<RewriteClaudeFileResult> {
  const { input, output, index, map, cut } = options;
  const metaByLine = new Map(index.lines.map((m) => [m.line, m] as const));
  const objects = new Set<string>();
  const lookFor = options.lookFor ?? [];
  const referenced = new Set<string>();
  const writer = await JsonlWriter.open(output, { sync: false });
  let droppedTornLine = false;
  let droppedLines = 0;
  let pendingBad: { raw: RawLine; error: Error } | undefined;
  try {
    for await (const rec of readJsonl<ClaudeLine>(input, { onBadLine: 'yield', signal: options.signal })) {
      if (pendingBad) throw pendingBad.error; // a bad line that was not the last one
      if (rec.error) {
        pendingBad = { raw: rec.raw, error: rec.error };
        continue;
      }
      const meta = metaByLine.get(rec.raw.line);
      const value = rec.value;
      if (!meta || !value || typeof value !== 'object' || Array.isArray(value)) {
        // JSON that is not an object: Claude Code skips it, so does the branch
        droppedLines++;
        continue;
      }
      if (cut && meta.uuid && !keptByCut(cut, meta)) {
        droppedLines++;
        continue;
      }
      const type = value.type;
      const { value: line, references } = rewriteClaudeLine(value, map, objects);
      // a line without a uuid that names a message the cut dropped (a file-history snapshot, a
      // summary of a later leaf) describes a conversation the branch does not have
      if (cut && !meta.uuid && !keptByCut(cut, meta, references, type)) {
        droppedLines++;
        continue;
      }
      for (const needle of lookFor) if (!referenced.has(needle) && rec.raw.text.includes(needle)) referenced.add(needle);
      await writer.writeRaw(JSON.stringify(line) + '\n');
    }
    if (pendingBad) {
      if (pendingBad.raw.eol !== '') throw pendingBad.error;
      droppedTornLine = true;
    }
    if (options.title !== undefined) await writer.writeRaw(JSON.stringify({ type: 'custom-title', customTitle: options.title, sessionId: map.sessionId }) + '\n');
    if (writer.lines === 0) throw new CtxvmError('E_INVALID', `${input}: the branch would be empty; nothing was written`);
    await writer.close();
  } catch (error) {
    await writer.abort();
    throw error;
  }
  return {
    lines: writer.lines,
    bytes: writer.bytes,
    inheritedObjects: objects,
    droppedTornLine,
    droppedLines,
    referenced,
  };
}

/**
 * Rewrites a subagent transcript (`<session>/subagents/agent-*.jsonl`) with the branch's ids: its
 * own uuids are added to the map first. Lines are otherwise kept; the file is never cut.
 */
export async function rewriteClaudeSideTranscript(input: string, output: string, map: ClaudeIdMap, newUuid?: (source: string) => string): Promise<{ lines: number; bytes: number }> {
  const own: string[] = [];
  for await (const rec of readJsonl<ClaudeLine>(input, { onBadLine: 'yield' })) if (typeof rec.value?.uuid === 'string') own.push(rec.value.uuid);
  extendClaudeIdMap(map, own, newUuid);
  const objects = new Set<string>();
  const writer = await JsonlWriter.open(output, { sync: false });
  try {
    for await (const rec of readJsonl<ClaudeLine>(input, { onBadLine: 'yield' })) {
      const v = rec.value;
      // a subagent transcript is shown, never resumed: keep what cannot be parsed as it was
      if (!v || typeof v !== 'object' || Array.isArray(v)) await writer.writeLine(rec.raw);
      else await writer.writeRaw(JSON.stringify(rewriteClaudeLine(v, map, objects).value) + '\n');
    }
    await writer.close();
  } catch (error) {
    await writer.abort();
    throw error;
  }
  return { lines: writer.lines, bytes: writer.bytes };
}
