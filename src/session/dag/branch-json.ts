/** One JSON shape for a branch made from a snapshot, shared by the CLI and the HTTP API. */
import type { SnapshotBranchResult } from './branch-snapshot.js';

/** The JSON document of a branch: `ctxvm branch --json`, `ctxvm trim --json` and the HTTP API. */
export function branchJson(r: SnapshotBranchResult) {
  return {
    sessionId: r.sessionId,
    path: r.path,
    resume: r.resume,
    name: r.branch.name,
    id: r.branch.id,
    agent: r.agent,
    cwd: r.cwd ?? null,
    snapshot: r.snapshot,
    trimmed: r.trimmed
      ? { inputTokens: r.trimmed.input.tokens ?? null, outputTokens: r.trimmed.output.tokens ?? null, reduction: r.trimmed.reduction ?? null, inputBytes: r.trimmed.input.bytes, outputBytes: r.trimmed.output.bytes }
      : null,
    at: r.at ?? null,
    lines: r.lines,
    bytes: r.bytes,
    sideFiles: r.sideFiles,
    warnings: r.warnings,
  };
}
