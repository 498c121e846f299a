/**
 * Branch library: fork a session into a new one (new id, optional cut, trimmed by default),
 * written atomically into the agent's own folder. Re-exports only.
 */
export { branchSession, prepareBranch, type BranchOptions, type BranchResult, type PreparedBranch } from './branch.js';
export { parseBranchPoint, type BranchPoint } from './branch-point.js';
export { listClaudeTurns, planClaudeCut, type ClaudeCut, type ClaudeTurn } from './claude-cut.js';
export { listCodexTurns, planCodexCut, type CodexCut } from './codex-rewrite.js';
export {
  CLAUDE_PROJECT_DIR_MAX_CHARS,
  claudeProjectDir,
  codexRolloutName,
  codexSessionDir,
  encodeClaudeProjectDir,
  findClaudeProjectDir,
  isUuid,
  newSessionId,
  resumeCommand,
  uuidV7,
} from './paths.js';
export { listClaudeSideFiles, type ClaudeSideFile } from './side-files.js';
export { cleanupStaleBranchStaging, STAGING_PREFIX } from './staging.js';
