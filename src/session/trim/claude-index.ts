/**
 * Pass 1 of the Claude Code trimmer: the index of `scanClaudeSession`, in memory that does not
 * grow with the file. Lines are read with the fast skimmer (../claude/skim-line.ts), and lines
 * before the second-to-last compaction boundary are *folded*: the trim removes them whatever else
 * happens (they are before the last boundary), so of each only what the plan still needs is kept
 * — its tool_use ids (results answering them become orphans), its uuid with its nearest kept
 * ancestor (children are relinked around it), and whole metadata for the rare kept line (a
 * `summary`). The window that stays — the last two compaction intervals — is what the agent's
 * context is built from and has the usual per-line metadata.
 *
 * When the caller knows where folding starts (`foldBelow`, see fold-point.ts), the lines before
 * it are read with an even lighter skim and handed on at once (`onFolded`) to be paged out, so
 * pass 3 starts at the window. Otherwise lines are folded as later boundaries show they can be.
 *
 * The last boundary's preserved messages are normally in the window; when they reach further
 * back, the caller indexes again without folding (see `preservedReachesFolded`).
 */
import { badLineError, readLineBatches, type RawLine } from '../../core/jsonl.js';
import { CompactIdMap } from '../../core/uuid-map.js';
import type { ParseError } from '../../errors.js';
import { describeLine, type ClaudeIndex, type LineMeta } from '../claude/scan.js';
import { skimClaudeBookkeeping, skimClaudeLine, type LineBookkeeping } from '../claude/skim-line.js';
import { lineKind, type ClaudeLine } from '../claude/types.js';
import type { LineRoute } from './claude-lines.js';

/** What the trimmer keeps of folded lines (all before `windowStart`). */
export interface FoldedLines {
  /** Folded lines the trim keeps (`summary` lines), with their metadata, by line number. */
  kept: Map<number, LineMeta>;
  /** Line numbers of folded lines that are JSON but not objects (they pass through like blanks). */
  nonObjects: Set<number>;
  /** tool_use ids on folded (removed) lines. */
  toolUseIds: Set<string>;
  /** uuid of a folded (removed) line → its nearest kept ancestor (null at a root). */
  relink: CompactIdMap<string | null>;
}

/** The trimmer's index: a `ClaudeIndex` whose `lines` are the window only. */
export interface ClaudeTrimIndex extends ClaudeIndex {
  /** 1-based line number where the window starts; earlier lines are folded. */
  windowStart: number;
  folded: FoldedLines;
  /** JSON object lines in the whole file (folded ones included). */
  objectLines: number;
  /** Where pass 3 starts reading when pass 1 handed the lines before it to `onFolded`. */
  readFrom?: { byteOffset: number; line: number };
}

/** Options of `indexClaudeForTrim`. */
export interface TrimIndexOptions {
  /** Fold lines before the second-to-last boundary (default true; off when nothing before the last boundary is dropped). */
  fold?: boolean;
  /** Byte offset of a boundary line before which every line is folded as it is read (see fold-point.ts). */
  foldBelow?: number;
  /** Receives, in order, each line folded while reading (with `foldBelow`) and what to do with it; awaited when it returns a promise. */
  onFolded?: (raw: RawLine, route: LineRoute) => Promise<void> | undefined;
  /** Where to keep what folding keeps (default: a new `emptyFolded()`); `onFolded` may read it. */
  folded?: FoldedLines;
  signal?: AbortSignal;
  /** Called with bytes read so far. */
  onProgress?: (bytes: number) => void;
}

function parseLine(bytes: Buffer, text: () => string): unknown {
  try {
    const skeleton = skimClaudeLine(bytes);
    if (skeleton !== undefined) return skeleton;
  } catch {
    // broken structure: JSON.parse says how, below
  }
  return JSON.parse(text());
}

/** An empty `FoldedLines`. */
export function emptyFolded(): FoldedLines {
  return { kept: new Map(), nonObjects: new Set(), toolUseIds: new Set(), relink: new CompactIdMap() };
}

/** Folds a line the trim removes: its tool_use ids vanish, its children link past it. */
function foldRemoved(folded: FoldedLines, uuid: unknown, parentUuid: unknown, toolUseIds: readonly unknown[]): void {
  for (const id of toolUseIds) folded.toolUseIds.add(id as string);
  if (typeof uuid !== 'string') return;
  let parent = (parentUuid as string | null | undefined) ?? null;
  while (parent !== null && folded.relink.has(parent)) parent = folded.relink.get(parent)!;
  folded.relink.set(uuid, parent);
}

/** Folded lines that stay: summaries, and lines that carry no message (titles, modes, unknown types). */
function keptWhenFolded(type: unknown): boolean {
  return type === 'summary' || lineKind({ type } as ClaudeLine) === 'other';
}

function fold(m: LineMeta, folded: FoldedLines): void {
  if (m.kind === 'summary' || m.kind === 'other') folded.kept.set(m.line, m);
  else
    foldRemoved(
      folded,
      m.uuid,
      m.parentUuid,
      m.toolUses.map((u) => u.id),
    );
}

/** Streams a transcript once and returns the trimmer's index. Bad lines are collected, not thrown. */
export async function indexClaudeForTrim(file: string, options: TrimIndexOptions = {}): Promise<ClaudeTrimIndex> {
  const folded = options.folded ?? emptyFolded();
  const index: ClaudeTrimIndex = { file, lines: [], badLines: [], lastBoundary: -1, totalBytes: 0, windowStart: 1, folded, objectLines: 0 };
  const badLines: ParseError[] = index.badLines;
  const doFold = options.fold !== false;
  const foldBelow = doFold && options.onFolded ? (options.foldBelow ?? 0) : 0;
  const identity = (line: { sessionId?: unknown; cwd?: unknown; version?: unknown }) => {
    index.sessionId ??= typeof line.sessionId === 'string' ? line.sessionId : undefined;
    index.cwd ??= typeof line.cwd === 'string' ? line.cwd : undefined;
    index.version ??= typeof line.version === 'string' ? line.version : undefined;
  };

  const parseLine = (raw: RawLine): unknown => {
    try {
      const skeleton = skimClaudeLine(raw.bytes);
      if (skeleton !== undefined) return skeleton;
    } catch {
      // broken structure: JSON.parse says how, below
    }
    return JSON.parse(raw.text);
  };
  /** A line before `foldBelow`: removed (or a kept summary, or passed through), handed on at once. */
  const foldNow = (raw: RawLine): Promise<void> | undefined => {
    if (raw.isBlank) return options.onFolded!(raw, { kind: 'pass' });
    let skim: LineBookkeeping | undefined;
    try {
      skim = skimClaudeBookkeeping(raw.bytes);
    } catch {
      // broken structure, or beyond what the scanner follows: JSON.parse decides, below
    }
    if (!skim) {
      let value: unknown;
      try {
        value = JSON.parse(raw.text);
      } catch (cause) {
        badLines.push(badLineError(file, raw, false, cause));
        return undefined;
      }
      if (!value || typeof value !== 'object' || Array.isArray(value)) {
        folded.nonObjects.add(raw.line);
        return options.onFolded!(raw, { kind: 'pass' });
      }
      const line = value as ClaudeLine;
      const meta = describeLine(line, raw.line, raw.byteOffset, raw.bytes.length);
      skim = { type: line.type, uuid: meta.uuid, parentUuid: meta.parentUuid, sessionId: line.sessionId, cwd: line.cwd, version: line.version, toolUseIds: meta.toolUses.map((u) => u.id), regions: [] };
      if (!keptWhenFolded(skim.type)) {
        index.objectLines++;
        identity(skim);
        foldRemoved(folded, skim.uuid, skim.parentUuid, skim.toolUseIds);
        return options.onFolded!(raw, { kind: 'removed', regions: null });
      }
    }
    index.objectLines++;
    identity(skim);
    if (keptWhenFolded(skim.type)) {
      const meta = describeLine(parseLine(raw) as ClaudeLine, raw.line, raw.byteOffset, raw.bytes.length);
      folded.kept.set(raw.line, meta);
      return options.onFolded!(raw, { kind: 'kept', meta });
    }
    foldRemoved(folded, skim.uuid, skim.parentUuid, skim.toolUseIds);
    return options.onFolded!(raw, { kind: 'removed', regions: skim.regions });
  };

  const handle = (raw: RawLine, isLast: boolean) => {
    if (raw.isBlank) return;
    let value: unknown;
    try {
      value = parseLine(raw);
    } catch (cause) {
      badLines.push(badLineError(file, raw, isLast, cause));
      return;
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      folded.nonObjects.add(raw.line);
      return;
    }
    const line = value as ClaudeLine;
    index.objectLines++;
    const meta = describeLine(line, raw.line, raw.byteOffset, raw.bytes.length);
    if (meta.kind === 'system' && meta.subtype === 'compact_boundary') {
      if (doFold && index.lastBoundary > 0) {
        // the window keeps the last two compaction intervals
        for (const m of index.lines.slice(0, index.lastBoundary)) fold(m, folded);
        index.lines = index.lines.slice(index.lastBoundary);
        index.windowStart = index.lines[0]!.line;
      }
      index.lastBoundary = index.lines.length;
    }
    identity(line);
    index.lines.push(meta);
  };

  // one line of look-ahead, so a bad last line without a terminator can be called truncated
  let previous: RawLine | undefined;
  for await (const batch of readLineBatches(file, { reuseBuffers: true, ...(options.signal ? { signal: options.signal } : {}) })) {
    for (const raw of batch) {
      index.totalBytes = raw.byteOffset + raw.bytes.length + raw.eol.length;
      if (raw.byteOffset < foldBelow) {
        const pending = foldNow(raw);
        if (pending) await pending;
        continue;
      }
      if (foldBelow > 0 && index.readFrom === undefined) {
        index.readFrom = { byteOffset: raw.byteOffset, line: raw.line };
        index.windowStart = raw.line;
      }
      if (previous) handle(previous, false);
      previous = raw;
    }
    options.onProgress?.(index.totalBytes);
  }
  if (previous) handle(previous, true);
  // only folded non-object lines matter to callers; drop the window's
  for (const n of folded.nonObjects) if (n >= index.windowStart) folded.nonObjects.delete(n);
  return index;
}
