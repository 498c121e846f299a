/**
 * The sessions side of `ctxvm demo`, end to end on a generated Claude Code session in a temporary
 * home (its own CLAUDE_CONFIG_DIR, CODEX_HOME and CTXVM_HOME, SQLite warm store, fs object store):
 *
 *   analyze → trim → validate → restore (byte-identical) → snapshot → branch (trimmed) → the
 *   person continues the branch → later snapshot of the branch → tree → page-in of one stub → du.
 *
 * Every step goes through the same library calls as the CLI commands, and returns its numbers.
 * The rendering is in sessions-demo-render.ts.
 */
import { mkdir, readFile, writeFile, appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TokenCategory } from '../session/context-model.js';
import type { DagGraph } from '../session/dag/tree.js';
import { buildDemoClaudeSession, continueDemoClaudeSession } from './claude-session.js';
import type { DemoContext } from './section.js';

/** Id and project of the generated session. */
export const DEMO_SESSION_ID = '7d3f2a10-5c1e-4b6a-9e2d-0a1b2c3d4e5f';
export const DEMO_PROJECT = '/home/demo/app';

/** Everything the sessions demo measured (sizes in bytes, tokens of the reconstructed context). */
export interface SessionsDemoResult {
  session: { id: string; path: string; lines: number; bytes: number };
  analyze: { messages: number; tokens: number; tokenizer: string; breakdown: Record<TokenCategory, number>; trimmedTokens: number; trimmedBreakdown: Record<TokenCategory, number> };
  trim: { input: { bytes: number; tokens: number | null }; output: { bytes: number; tokens: number | null }; reduction: number | null; pagedOut: Record<string, number>; objects: number };
  validate: { valid: boolean; errors: number; warnings: number };
  restore: { identical: boolean; bytes: number; restoredLines: number };
  snapshot: { id: string; name: string; bytes: number; files: number; objects: number; storedBytes: number };
  branch: { name: string; sessionId: string; path: string; resume: string; tokens: { before: number | null; after: number | null; reduction: number | null } };
  /** The branch after the person asked one more thing, and its snapshot (child of the branch in the DAG). */
  laterSnapshot: { id: string; name: string; bytes: number; addedLines: number; branchValid: boolean; newObjects: number; newStoredBytes: number; sourceBranchId: string | null };
  tree: DagGraph;
  pageIn: { ref: string; chars: number; head: string; inOriginal: boolean } | null;
  du: { snapshots: number; branches: number; logicalBytes: number; storedBytes: number; ratio: number; savings: number };
  /** Prompt caching after the trim (5-minute TTL, untrimmed cache warm), when the model is priced. */
  cache: { model: string; breakEvenCall: number | null; savingPerCallUsd: number } | null;
}

/** A stub to page in: a tool result (paged in by its call's id) if there is one, more telling than an image. */
function pickStubRef(trimmed: string, findStubs: (line: unknown) => { ref: string }[]): string | null {
  const refs: string[] = [];
  for (const line of trimmed.split('\n')) if (line.includes('[ctxvm paged out')) refs.push(...findStubs(JSON.parse(line)).map((s) => s.ref));
  return refs.find((r) => !r.startsWith('ctxvm:') && !r.includes('/')) ?? refs[0] ?? null;
}

/** Runs the sessions demo in `ctx.home` (subfolders claude/, codex/, ctxvm/, work/). */
export async function runSessionsDemo(ctx: DemoContext): Promise<SessionsDemoResult> {
  const [session, { restoreSession }, { pageIn }, { createFsObjectStore }, { openWarmDatabase }, { createSqlSessionCatalog }, { createSnapshot }, { branchFromSnapshot }, { buildDag }, { diskUsage }, { encodeClaudeProjectDir }] =
    await Promise.all([
      import('../session/session.js'),
      import('../session/trim/restore.js'),
      import('../session/trim/page-in.js'),
      import('../store/drivers/objects-fs.js'),
      import('../store/warm/open.js'),
      import('../session/dag/sql-catalog.js'),
      import('../session/dag/snapshot.js'),
      import('../session/dag/branch-snapshot.js'),
      import('../session/dag/tree.js'),
      import('../session/dag/maintenance.js'),
      import('../session/branch/paths.js'),
    ]);
  const claudeConfigDir = join(ctx.home, 'claude');
  const codexHome = join(ctx.home, 'codex');
  const ctxvmHome = join(ctx.home, 'ctxvm');
  const work = join(ctx.home, 'work');
  const projectDir = join(claudeConfigDir, 'projects', encodeClaudeProjectDir(DEMO_PROJECT));
  await Promise.all([mkdir(projectDir, { recursive: true }), mkdir(codexHome, { recursive: true }), mkdir(work, { recursive: true })]);
  // a clock that moves forward one second per call, from the demo's "now"
  let tick = ctx.nowMs;
  const now = () => (tick += 1000);

  // the session, as Claude Code leaves it in its projects folder
  const lines = buildDemoClaudeSession({ sessionId: DEMO_SESSION_ID, cwd: DEMO_PROJECT, startMs: ctx.nowMs - 3_600_000 });
  const original = join(projectDir, `${DEMO_SESSION_ID}.jsonl`);
  await writeFile(original, lines.join('\n') + '\n');
  const originalBytes = await readFile(original);

  const store = createFsObjectStore({ root: join(ctxvmHome, 'objects'), durability: 'deferred' });
  const analysis = await session.analyzeSession(original);
  const trimmedPath = join(work, 'trimmed.jsonl');
  const trim = await session.trimSession({ input: original, output: trimmedPath, store });
  const validation = await session.validateSession(trimmedPath);
  const restoredPath = join(work, 'restored.jsonl');
  const restored = await restoreSession({ input: trimmedPath, output: restoredPath, store });
  const identical = (await readFile(restoredPath)).equals(originalBytes);

  const db = await openWarmDatabase({ db: join(ctxvmHome, 'ctxvm.db'), parts: ['sessions'] });
  try {
    const catalog = createSqlSessionCatalog(db);
    const snap = await createSnapshot({ catalog, store, source: { agent: 'claude', sessionId: DEMO_SESSION_ID, path: original, project: DEMO_PROJECT }, name: 'demo', description: 'the generated session', now });
    const branch = await branchFromSnapshot({ catalog, store, snapshot: snap.id, name: 'demo-trimmed', claudeConfigDir, codexHome, scratchDir: join(ctxvmHome, 'tmp'), now });
    // the person resumes the branch and asks one more thing; then it is snapshotted again
    const more = continueDemoClaudeSession({
      lines: (await readFile(branch.path, 'utf8')).split('\n').filter(Boolean),
      prompt: 'Before we merge: is the /healthz test still passing on the trimmed branch?',
      reply: 'Yes — the last run shows all 300 tests passing, including the /healthz test.',
      atMs: now(),
    });
    await appendFile(branch.path, more.join('\n') + '\n');
    const branchValid = (await session.validateSession(branch.path)).valid;
    const later = await createSnapshot({ catalog, store, source: { agent: 'claude', sessionId: branch.sessionId, path: branch.path, project: branch.cwd ?? DEMO_PROJECT }, name: 'demo-trimmed-2', description: 'the branch, one question later', now });

    const tree = buildDag(await catalog.listSnapshots(), await catalog.listBranches());
    const { findStubs } = await import('../session/trim/stub-scan.js');
    const ref = pickStubRef(await readFile(trimmedPath, 'utf8'), findStubs);
    let paged: SessionsDemoResult['pageIn'] = null;
    if (ref) {
      const p = await pageIn(store, ref, { files: [trimmedPath] });
      // the payload is in the original file, JSON-escaped
      const inOriginal = originalBytes.toString('utf8').includes(JSON.stringify(p.text).slice(1, -1));
      paged = { ref, chars: p.text.length, head: p.text.split('\n').find((l) => l.trim()) ?? '', inOriginal };
    }
    const du = await diskUsage({ catalog, store });
    const cache = analysis.cache.priced ? analysis.cache.scenarios.find((s) => s.ttl === '5m' && s.untrimmedCacheWarm) : undefined;
    const t = branch.trimmed;
    return {
      session: { id: DEMO_SESSION_ID, path: original, lines: lines.length, bytes: originalBytes.length },
      analyze: { messages: analysis.messages, tokens: analysis.tokens, tokenizer: analysis.tokenizer, breakdown: analysis.breakdown, trimmedTokens: analysis.trimmed.tokens, trimmedBreakdown: analysis.trimmed.breakdown },
      trim: { input: { bytes: trim.input.bytes, tokens: trim.input.tokens ?? null }, output: { bytes: trim.output.bytes, tokens: trim.output.tokens ?? null }, reduction: trim.reduction ?? null, pagedOut: trim.pagedOut, objects: trim.objects },
      validate: { valid: validation.valid, errors: validation.errors.length, warnings: validation.warnings.length },
      restore: { identical, bytes: restored.bytes, restoredLines: restored.restoredLines },
      snapshot: { id: snap.id, name: snap.name, bytes: snap.bytes, files: snap.files, objects: snap.objects, storedBytes: snap.storedBytes },
      branch: { name: branch.branch.name, sessionId: branch.sessionId, path: branch.path, resume: branch.resume, tokens: { before: t?.input.tokens ?? null, after: t?.output.tokens ?? null, reduction: t?.reduction ?? null } },
      laterSnapshot: { id: later.id, name: later.name, bytes: later.bytes, addedLines: more.length, branchValid, newObjects: later.newObjects, newStoredBytes: later.newStoredBytes, sourceBranchId: later.record.sourceBranchId },
      tree,
      pageIn: paged,
      du: { snapshots: du.snapshots, branches: du.branches, logicalBytes: du.logicalBytes, storedBytes: du.storedBytes, ratio: du.ratio, savings: du.savings },
      cache: cache ? { model: analysis.cache.model, breakEvenCall: cache.breakEvenTurn ?? null, savingPerCallUsd: cache.perTurnSavingUsd } : null,
    };
  } finally {
    await db.close();
  }
}

/** Checks the demo makes claims about; each failure is one line. */
export function sessionsDemoProblems(r: SessionsDemoResult): string[] {
  const out: string[] = [];
  if (!r.validate.valid) out.push(`the trimmed session is invalid (${r.validate.errors} errors)`);
  if (!r.restore.identical) out.push('the restored session differs from the original');
  if (!r.laterSnapshot.branchValid) out.push('the continued branch is invalid');
  if (r.pageIn && !r.pageIn.inOriginal) out.push(`paged-in payload ${r.pageIn.ref} is not in the original`);
  if (r.laterSnapshot.sourceBranchId === null) out.push('the later snapshot is not linked to the branch');
  return out;
}
