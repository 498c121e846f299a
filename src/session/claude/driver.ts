/** The Claude Code session driver. */
import type { SessionDriver } from '../driver.js';
import { trimClaudeSession } from '../trim/claude-trim.js';
import { claudeAgentContext } from './agent-context.js';
import { reconstructClaudeContext } from './context.js';
import { LeanLines } from './lean-line.js';
import { scanClaudeSession } from './scan.js';
import { validateClaudeContext } from './validate.js';

export const claudeDriver: SessionDriver = {
  agent: 'claude',
  async load(file, options = {}) {
    // a lean load keeps the lines it scans (lean-line.ts) rather than reading the chain again
    const lean = options.lean === true ? new LeanLines() : undefined;
    const index = await scanClaudeSession(file, { ...(options.signal ? { signal: options.signal } : {}), ...(lean ? { onLine: (v, raw, meta) => lean.add(v, raw, meta) } : {}) });
    const ctx = await reconstructClaudeContext(index, lean ? { lean: true, leanValues: lean.values } : {});
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
