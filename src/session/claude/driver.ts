/** The Claude Code session driver. */
import type { SessionDriver } from '../driver.js';
import { trimClaudeSession } from '../trim/claude-trim.js';
import { claudeAgentContext } from './agent-context.js';
import { reconstructClaudeContext } from './context.js';
import { loadClaudeLean } from './lean-load.js';
import { scanClaudeSession } from './scan.js';
import { validateClaudeContext } from './validate.js';

export const claudeDriver: SessionDriver = {
  agent: 'claude',
  findsOwnTrimFindings: true,
  async load(file, options = {}) {
    let loaded;
    if (options.lean === true) loaded = await loadClaudeLean(file, options);
    else {
      const index = await scanClaudeSession(file, options);
      const context = await reconstructClaudeContext(index);
      loaded = { index, context, findings: validateClaudeContext(index, context) };
    }
    const { index, context, findings } = loaded;
    return {
      agent: 'claude',
      file,
      ...(index.sessionId ? { sessionId: index.sessionId } : {}),
      ...(index.cwd ? { cwd: index.cwd } : {}),
      context: claudeAgentContext(context),
      findings,
      lines: index.lines.length + index.badLines.length,
      bytes: index.totalBytes,
    };
  },
  async trim(input) {
    const stats = await trimClaudeSession(input);
    return { ...stats, counters: { ...stats.counters } };
  },
};
