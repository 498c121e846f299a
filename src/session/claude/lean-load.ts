/**
 * A lean load of a Claude Code transcript (lean-line.ts): one read that gives the index, the lean
 * lines after the last compaction boundary and the findings, in memory that holds no payload. It
 * is `claudeDriver.load(file, { lean: true })`, and the trimmer's first pass, which plans from the
 * same index.
 */
import type { ValidationFinding } from '../driver.js';
import { reconstructClaudeContext, type ClaudeContext } from './context.js';
import { LeanLines } from './lean-line.js';
import { scanClaudeSession, type ClaudeIndex } from './scan.js';
import { validateClaudeContext } from './validate.js';

export interface LeanClaudeLoad {
  index: ClaudeIndex;
  /** Lean lines after the last compaction boundary, by line number. */
  lean: LeanLines;
  /** The context with stand-ins for long texts: for validation only, never to count or show. */
  context: ClaudeContext;
  findings: ValidationFinding[];
}

export interface LeanLoadOptions {
  signal?: AbortSignal;
  /** Also note where the members a trim edits lie (`ClaudeIndex.edits`). */
  edits?: boolean;
  /** Called with bytes read so far. */
  onProgress?: (bytes: number) => void;
}

export async function loadClaudeLean(file: string, options: LeanLoadOptions = {}): Promise<LeanClaudeLoad> {
  const lean = new LeanLines();
  const index = await scanClaudeSession(file, {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    onLine: (v, raw, meta) => lean.add(v, raw, meta),
    ...(options.edits ? { edits: true } : {}),
  });
  const context = await reconstructClaudeContext(index, { lean: true, leanValues: lean });
  return { index, lean, context, findings: validateClaudeContext(index, context) };
}
