/**
 * Branch: a new session with a new id, forked from a session file — optionally cut at a chosen
 * message or turn, trimmed by default — and written atomically into the agent's own folder, so
 * `claude --resume <id>` / `codex resume <id>` opens it.
 *
 * Pipeline (everything before the commit happens in a staging folder under ctxvm's scratch folder,
 * never in the agent's; see staging.ts):
 *   1. rewrite: new ids (and the cut) into a staged copy — this is the *pre-trim branch*;
 *   2. side files (Claude Code): subagent transcripts rewritten, tool outputs copied;
 *   3. trim the staged copy with the Step 2 trimmer, so its restore annotations name lines of the
 *      pre-trim branch: `restoreSession` on the branch gives back the untrimmed branch (new ids),
 *      never the source (a branch is a new session; its lineage is the caller's DAG edge);
 *   4. validate: a branch that adds a finding its source did not have is never written;
 *   5. commit: `<id>/` side folder, then the session file, linked into place.
 *
 * `prepareBranch` stops before step 5 and hands back `commit()`/`discard()`, for callers that
 * decide after seeing the result (the auto-trim hook skips branches that save nothing).
 */
import { join } from 'node:path';
import { CtxvmError, UsageError } from '../../errors.js';
import type { ObjectStore } from '../../store/object-store.js';
import type { TokenCounter } from '../../text/tokens.js';
import { selectClaudeChain } from '../claude/chain.js';
import { scanClaudeSession } from '../claude/scan.js';
import { codexDriver } from '../codex/driver.js';
import type { AgentKind } from '../context-model.js';
import { detectAgent, driverFor, newFindings, registerSessionDriver, trimSession, type TrimReport } from '../session.js';
import type { TrimPolicy } from '../trim/policy.js';
import { planClaude, planCodex } from './agent-plan.js';
import { invalidOutputError } from '../invalid-output.js';
import { isUuid, newSessionId, resumeCommand } from './paths.js';
import { holdUnderLease } from './held-store.js';
import { commitStaging, createStaging, type Staging } from './staging.js';

export interface BranchOptions {
  /** The session file to branch from: a Claude Code transcript or a Codex rollout. */
  source: string;
  /** Its agent (default: detected from the file). */
  agent?: AgentKind;
  /**
   * Cut point: a message uuid of a Claude Code transcript (or its first 8+ hex digits), or a turn
   * number — the N-th prompt the person typed, from 1 — for either agent. The branch keeps the
   * conversation up to and including that message (for a turn: all of that turn), with the split
   * lines and tool results its replies need. Default: no cut.
   */
  at?: string | number;
  /** Trim the branch with the Step 2 trimmer (default true). */
  trim?: boolean;
  /** Trim policy overrides (see TrimPolicy). */
  policy?: Partial<TrimPolicy>;
  /** Object store for paged-out payloads (and the objects an earlier trim of the source named). */
  store: ObjectStore;
  /** Claude Code's config folder (`$CLAUDE_CONFIG_DIR`, default ~/.claude at the edges). */
  claudeConfigDir: string;
  /** Codex CLI's home (`$CODEX_HOME`, default ~/.codex at the edges). */
  codexHome: string;
  /**
   * ctxvm's scratch folder (`$CTXVM_HOME/tmp` at the edges): the branch is built in a
   * `staging-<pid>-<random>` folder there, which `ctxvm gc` removes once its process is gone.
   */
  scratchDir: string;
  /**
   * Project folder of the branch (default: the source's `cwd`). Claude Code: the branch goes into
   * that project's folder; both agents: `cwd` fields at or below the source's move there.
   */
  cwd?: string;
  /** Write into this folder instead of the agent's own one for the project / the day. */
  targetDir?: string;
  /**
   * Claude Code: the folder holding the source's `subagents/` and `tool-results/` (default
   * `<dirname(source)>/<source sessionId>`). Pass it when `source` is a copy made elsewhere.
   */
  sessionDir?: string;
  /** Claude Code: a title for the session picker (appended as a `custom-title` line). */
  title?: string;
  /** Clock for the Codex file name and folder (default now). */
  now?: Date | number;
  /** The new session id (default: a fresh v4 uuid for Claude Code, v7 for Codex). */
  newId?: string;
  /**
   * The new uuid of a source line uuid (default: derived from it under the new session id, see
   * src/core/derived-uuid.ts; injectable for reproducible tests).
   */
  newUuid?: (source: string) => string;
  /** Token counter for the trim report (default o200k). */
  tokens?: TokenCounter;
  /** Count tokens before and after trimming (default true; off for speed). */
  measure?: boolean;
  signal?: AbortSignal;
}

export interface BranchResult {
  agent: AgentKind;
  /** The new session id. */
  sessionId: string;
  /** The new session file. */
  path: string;
  /** The command that opens the branch (run it in `cwd`). */
  resume: string;
  /** The project folder the branch belongs to. */
  cwd?: string;
  /** Lines and bytes of the branch file. */
  lines: number;
  bytes: number;
  source: { path: string; sessionId: string };
  /** Where the branch was cut, when `at` was given. */
  at?: { line: number; turn?: number; uuid?: string; newUuid?: string; droppedLines: number };
  /**
   * The trim report when trimmed: `input` is the pre-trim branch (source path shown), `output` the
   * branch. `restoreSession` on the branch rebuilds the pre-trim branch byte for byte.
   */
  trimmed?: TrimReport;
  /** Side files written (absolute paths): subagent transcripts, tool outputs. */
  sideFiles: string[];
  /**
   * Object-store holders that keep this branch's objects alive: the trim's `trim:<uuid>`, and
   * `branch:<id>` for objects named by an earlier trim of the source (its stubs still page in).
   */
  holders: string[];
  /** Things worth telling the user (a torn last line left out, side files not carried over). */
  warnings: string[];
}

/** A branch built and validated, not yet visible to the agent. */
export interface PreparedBranch {
  /** What `commit()` will make visible. */
  readonly result: BranchResult;
  /** Makes the branch visible to the agent (atomically); refuses to replace anything. */
  commit(): Promise<BranchResult>;
  /** Throws the branch away and releases its object references. */
  discard(): Promise<void>;
}

/** The Codex driver is registered by whoever imports it; the branch needs it either way. */
function ensureDrivers(): void {
  try {
    driverFor('codex');
  } catch {
    registerSessionDriver(codexDriver);
  }
}

async function refAll(store: ObjectStore, hashes: Iterable<string>, holder: string): Promise<number> {
  const present: string[] = [];
  for (const h of hashes) if (await store.has(h)) present.push(h);
  if (present.length > 0) await store.refMany(present, holder);
  return present.length;
}

/** True when the branch resumes through the message with `uuid` (its line is on the loaded chain). */
async function resumesThrough(file: string, uuid: string): Promise<boolean> {
  const index = await scanClaudeSession(file);
  const chain = new Set(selectClaudeChain(index).lines);
  return index.lines.some((m) => m.uuid === uuid && chain.has(m.line));
}

/** Builds and validates a branch in a staging folder under `scratchDir`; `commit()` makes it visible. */
export async function prepareBranch(options: BranchOptions): Promise<PreparedBranch> {
  ensureDrivers();
  const agent = await detectAgent(options.source);
  if (options.agent && options.agent !== agent) throw new UsageError(`${options.source} is a ${agent} session, not ${options.agent}`);
  const now = options.now === undefined ? new Date() : new Date(options.now);
  if (Number.isNaN(now.getTime())) throw new UsageError(`invalid clock value ${String(options.now)}`);
  const id = options.newId ?? newSessionId(agent, now.getTime());
  if (!isUuid(id)) throw new UsageError(`new session id ${JSON.stringify(id)} is not a lowercase uuid`);

  const plan = agent === 'claude' ? await planClaude(options, id) : await planCodex(options, id, now);
  const target = join(plan.targetDir, plan.fileName);
  // every reference made before the commit is held by a lease of this process, so a branch killed
  // before it is committed leaves nothing gc cannot release (see held-store.ts)
  const held = holdUnderLease(options.store);
  const store = held.store;
  const inheritedHolder = `branch:${id}`;
  let staging: Staging | undefined;
  let trimmed: TrimReport | undefined;
  const release = () => held.release();
  try {
    staging = await createStaging(options.scratchDir, id);
    const pre = staging.file('branch.part');
    const written = await plan.write(pre, staging.sideDir);
    const holders: string[] = [];
    // stubs the source already had point at objects an earlier trim stored: keep them alive
    if ((await refAll(store, written.inheritedObjects, inheritedHolder)) > 0) holders.push(inheritedHolder);
    let final = pre;
    if (options.trim !== false) {
      final = staging.file('trimmed.part');
      trimmed = await trimSession({
        input: pre,
        output: final,
        store,
        ...(options.policy ? { policy: options.policy } : {}),
        ...(options.tokens ? { tokens: options.tokens } : {}),
        measure: options.measure !== false,
        ...(written.idSource ? { idSource: written.idSource } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      holders.push(trimmed.holder);
      trimmed = { ...trimmed, input: { ...trimmed.input, path: options.source }, output: { ...trimmed.output, path: target } };
    }
    // a branch may carry what its source already had (reported by validate); it adds nothing
    const source = await driverFor(agent).load(options.source);
    const loaded = await driverFor(agent).load(final);
    const added = newFindings(source.findings, loaded.findings).filter((f) => f.severity === 'error');
    if (added.length > 0) {
      if (source.findings.some((f) => f.severity === 'error')) throw invalidOutputError({ input: options.source, output: 'branch', inputFindings: source.findings, added, ...(options.at !== undefined ? { hint: 'or try another --at point' } : {}) });
      // a cut can leave out what a valid source had (a result before the cut, its call after)
      const list = added.slice(0, 10).map((e) => `branch line ${e.line}: ${e.rule}: ${e.message}`);
      throw new CtxvmError('E_INVALID', `the branch of ${options.source}${options.at !== undefined ? ` at ${String(options.at)}` : ''} would be invalid, so nothing was written:\n  ${list.join('\n  ')}`, {
        hint: options.at !== undefined ? 'try another --at point' : `check the source with \`ctxvm session validate ${options.source}\``,
      });
    }
    if (written.checkOnChain && !(await resumesThrough(final, written.checkOnChain))) {
      const chain = source.findings.filter((f) => f.severity === 'error' || f.rule === 'parent-chain' || f.rule === 'dangling-parent');
      if (chain.length > 0) {
        const list = chain.slice(0, 10).map((f) => `${options.source}:${f.line}: ${f.rule}: ${f.message}`);
        throw new CtxvmError('E_INVALID', `the branch of ${options.source} would not resume through the message at line ${written.at?.line}, so nothing was written: the source's own chain is broken:\n  ${list.join('\n  ')}`, {
          hint: `run \`ctxvm session validate ${options.source}\` to see every problem; cut at a message on the chain Claude Code resumes (after the break), or repair the parentUuid named above`,
        });
      }
      throw new CtxvmError('E_INTERNAL', `this is a bug in ctxvm: the branch of ${options.source}, a valid session, would not resume through the message at line ${written.at?.line}; nothing was written`, {
        hint: `the source is untouched; please report it with ${options.source}`,
      });
    }
    const result: BranchResult = {
      agent,
      sessionId: id,
      path: target,
      resume: resumeCommand(agent, id),
      ...(plan.cwd ? { cwd: plan.cwd } : {}),
      lines: loaded.lines,
      bytes: loaded.bytes,
      source: { path: options.source, sessionId: plan.sourceSessionId },
      ...(written.at ? { at: written.at } : {}),
      ...(trimmed ? { trimmed } : {}),
      sideFiles: written.sideFiles,
      holders,
      warnings: written.warnings,
    };
    const st = staging;
    let state: 'open' | 'committed' | 'discarded' = 'open';
    return {
      result,
      async commit() {
        if (state !== 'open') throw new CtxvmError('E_USAGE', `branch ${id} was already ${state}`);
        try {
          // the real holders just before the file appears: a kill in between keeps objects a
          // little longer than needed, never loses what a committed branch names
          await held.confirm();
          await commitStaging(st, final, target, written.sideFiles.length > 0 ? plan.sideTarget : undefined, plan.targetDir);
        } catch (error) {
          state = 'discarded';
          await release().catch(() => undefined);
          await st.remove();
          throw error;
        }
        state = 'committed';
        await st.remove();
        return result;
      },
      async discard() {
        if (state !== 'open') return;
        state = 'discarded';
        await release().catch(() => undefined);
        await st.remove();
      },
    };
  } catch (error) {
    await release().catch(() => undefined);
    await staging?.remove();
    throw error;
  }
}

/** Builds, validates and commits a branch; see the module comment. */
export async function branchSession(options: BranchOptions): Promise<BranchResult> {
  const prepared = await prepareBranch(options);
  return prepared.commit();
}
