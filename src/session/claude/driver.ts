/** The Claude Code session driver. */
import type { SessionDriver } from '../driver.js';
import { trimClaudeSession } from '../trim/claude-trim.js';
import { claudeAgentContext } from './agent-context.js';
import { reconstructClaudeContext } from './context.js';
import { scanClaudeSession } from './scan.js';
import { validateClaudeContext } from './validate.js';

export const claudeDriver: SessionDriver = {
  agent: 'claude',
  async load(file, options = {}) {
    const index = await scanClaudeSession(file, options);
    const ctx = await reconstructClaudeContext(index, { lean: options.lean === true });
    return {
      agent: 'claude',
      file,
      ...(index.sessionId ? { sessionId: index.sessionId } : {}),
      ...(index.cwd ? { cwd: index.cwd } : {}),
      context: claudeAgentContext(ctx),
      findings: validateClaudeContext(index, ctx),
      lines: index.lines.length + index.badLines.length,
      bytes: index.totalBytes,
    };
  },
  async trim(input) {
    const stats = await trimClaudeSession(input);
    return { ...stats, counters: { ...stats.counters } };
  },
};
