/**
 * Each agent's half of a branch: read the source, decide where the branch goes and where it is
 * cut, then (on `write`) produce the rewritten pre-trim branch and its side files in staging.
 */
import { dirname, join } from 'node:path';
import { CtxvmError, UsageError } from '../../errors.js';
import { selectClaudeChain } from '../claude/chain.js';
import { scanClaudeSession } from '../claude/scan.js';
import { scanCodexSession } from '../codex/scan.js';
import type { BranchOptions, BranchResult } from './branch.js';
import { parseBranchPoint } from './branch-point.js';
import { listClaudeTurns, planClaudeCut, type ClaudeCut } from './claude-cut.js';
import type { IdSource } from '../trim/id-object.js';
import { claudeIdSource, createClaudeIdMap, rewriteClaudeFile } from './claude-rewrite.js';
import { planCodexCut, rewriteCodexFile, type CodexCut } from './codex-rewrite.js';
import { codexRolloutName, codexSessionDir, findClaudeProjectDir } from './paths.js';
import { copyClaudeSideFiles, listClaudeSideFiles, type ClaudeSideFile } from './side-files.js';

/** What one agent's half of the pipeline decided before anything is written. */
export interface AgentPlan {
  sourceSessionId: string;
  cwd?: string;
  targetDir: string;
  fileName: string;
  /** Claude Code: where the side folder goes. */
  sideTarget?: string;
  /** Writes the rewritten (pre-trim) branch into `out` and side files into `sideDir`. */
  write(out: string, sideDir: string): Promise<Written>;
}

export interface Written {
  at?: BranchResult['at'];
  inheritedObjects: Set<string>;
  sideFiles: string[];
  warnings: string[];
  /** Claude cuts: the branch uuid of the message cut at, checked to be on the resumed chain. */
  checkOnChain?: string;
  /** How the branch's uuids derive from the source's (Claude Code), for its trim. */
  idSource?: IdSource;
}

export async function planClaude(options: BranchOptions, id: string): Promise<AgentPlan> {
  const index = await scanClaudeSession(options.source, { ...(options.signal ? { signal: options.signal } : {}) });
  if (!index.sessionId) throw new CtxvmError('E_INVALID', `${options.source}: no line has a sessionId: not a resumable Claude Code session`, { hint: 'summary-only stubs cannot be resumed' });
  if (selectClaudeChain(index).lines.length === 0) {
    throw new CtxvmError('E_INVALID', `${options.source}: no conversation to resume (only subagent or metadata lines)`, { hint: 'subagent transcripts (agent-*.jsonl) are not sessions; branch the main session' });
  }
  const sourceSessionId = index.sessionId;
  const cwd = options.cwd ?? index.cwd;
  if (!options.targetDir && !cwd) throw new UsageError(`${options.source}: no line records the project folder (cwd)`, { hint: 'pass cwd (the project folder the branch belongs to)' });
  const targetDir = options.targetDir ?? (await findClaudeProjectDir(options.claudeConfigDir, cwd!));
  const point = options.at === undefined ? undefined : parseBranchPoint(options.at);
  const cut: ClaudeCut | undefined = point ? planClaudeCut(index, point, point.kind === 'turn' ? await listClaudeTurns(index) : []) : undefined;

  const map = createClaudeIdMap(index, id, options.newUuid);
  if (options.cwd && index.cwd && options.cwd !== index.cwd) map.cwd = { from: index.cwd, to: options.cwd };
  const side: ClaudeSideFile[] = await listClaudeSideFiles(options.sessionDir ?? join(dirname(options.source), sourceSessionId));
  if (side.some((f) => f.kind === 'tool-result')) map.toolResultsPath = { from: `/${sourceSessionId}/tool-results/`, to: `/${id}/tool-results/` };
  const sideTarget = join(targetDir, id);

  return {
    sourceSessionId,
    ...(cwd ? { cwd } : {}),
    targetDir,
    fileName: `${id}.jsonl`,
    sideTarget,
    async write(out, sideDir) {
      const rewritten = await rewriteClaudeFile({
        input: options.source,
        output: out,
        index,
        map,
        ...(cut ? { cut } : {}),
        ...(options.title !== undefined ? { title: options.title } : {}),
        lookFor: cut ? side.map((f) => f.key) : [],
        ...(options.signal ? { signal: options.signal } : {}),
      });
      const warnings: string[] = [];
      if (rewritten.droppedTornLine) warnings.push('the source ended with a torn (unterminated) line, left out of the branch');
      // a cut branch takes the side files its kept lines mention; the compaction agent's
      // transcript goes with a kept compaction boundary
      const keptBoundary = !cut || index.lines.some((m) => m.subtype === 'compact_boundary' && m.uuid !== undefined && cut.keepUuids.has(m.uuid));
      const take = cut ? side.filter((f) => f.kind === 'other' || rewritten.referenced.has(f.key) || (keptBoundary && f.key.startsWith('acompact'))) : side;
      if (take.length < side.length) warnings.push(`${side.length - take.length} side file(s) of messages after the cut were not carried over`);
      const written = take.length ? await copyClaudeSideFiles(take, sideDir, map, options.newUuid) : [];
      // only a trim reads it: an untrimmed branch does not build the inverse map
      const idSource = options.trim === false ? undefined : claudeIdSource(map);
      const target = cut?.target;
      const at: BranchResult['at'] | undefined =
        cut && target
          ? {
              line: target.line,
              ...(cut.turn !== undefined ? { turn: cut.turn } : {}),
              ...(target.uuid ? { uuid: target.uuid, newUuid: map.uuids.get(target.uuid)! } : {}),
              droppedLines: rewritten.droppedLines,
            }
          : undefined;
      return {
        ...(at ? { at } : {}),
        inheritedObjects: rewritten.inheritedObjects,
        sideFiles: written.map((rel) => join(sideTarget, ...rel.split('/'))),
        warnings,
        ...(at?.newUuid && (target!.kind === 'user' || target!.kind === 'assistant') ? { checkOnChain: at.newUuid } : {}),
        ...(idSource ? { idSource } : {}),
      };
    },
  };
}

export async function planCodex(options: BranchOptions, id: string, now: Date): Promise<AgentPlan> {
  const index = await scanCodexSession(options.source, { ...(options.signal ? { signal: options.signal } : {}) });
  if (!index.sessionId) throw new CtxvmError('E_INVALID', `${options.source}: no session_meta line with payload.id: not a resumable Codex rollout`);
  const point = options.at === undefined ? undefined : parseBranchPoint(options.at);
  if (point?.kind === 'uuid') throw new UsageError(`--at ${point.uuid}: Codex rollouts have no message uuids`, { hint: 'pass a turn number (1 = the first prompt)' });
  const cut: CodexCut | undefined = point?.kind === 'turn' ? planCodexCut(index, point.turn) : undefined;
  const cwd = options.cwd ?? index.cwd;
  return {
    sourceSessionId: index.sessionId,
    ...(cwd ? { cwd } : {}),
    targetDir: options.targetDir ?? codexSessionDir(options.codexHome, now),
    fileName: codexRolloutName(id, now),
    async write(out) {
      const rewritten = await rewriteCodexFile({
        input: options.source,
        output: out,
        index,
        sessionId: id,
        ...(cut ? { cut } : {}),
        ...(options.cwd && index.cwd && options.cwd !== index.cwd ? { cwd: { from: index.cwd, to: options.cwd } } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      const warnings: string[] = [];
      if (rewritten.droppedTornLine) warnings.push('the source ended with a torn (unterminated) line, left out of the branch');
      if (options.title !== undefined) warnings.push('Codex rollouts record no title; the title was ignored');
      const lastKept = cut && Number.isFinite(cut.beforeLine) ? cut.beforeLine - 1 : (index.lines[index.lines.length - 1]?.line ?? 0);
      return {
        ...(cut ? { at: { line: lastKept, turn: cut.turn, droppedLines: rewritten.droppedLines } } : {}),
        inheritedObjects: rewritten.inheritedObjects,
        sideFiles: [],
        warnings,
      };
    },
  };
}
