/** The Codex CLI session driver: load (reconstruct + validate) and trim, like the Claude Code one. */
import type { SessionDriver } from '../driver.js';
import { reconstructCodexContext, toAgentContext } from './context.js';
import { scanCodexSession } from './scan.js';
import { trimCodexSession } from './trim.js';
import { validateCodexContext } from './validate.js';

export const codexDriver: SessionDriver = {
  agent: 'codex',
  async load(file, options = {}) {
    const index = await scanCodexSession(file, options);
    const ctx = await reconstructCodexContext(index, options);
    return {
      agent: 'codex',
      file,
      ...(index.sessionId ? { sessionId: index.sessionId } : {}),
      ...(index.cwd ? { cwd: index.cwd } : {}),
      context: toAgentContext(ctx),
      findings: validateCodexContext(index, ctx),
      lines: index.lines.length + index.badLines.length,
      bytes: index.totalBytes,
    };
  },
  async trim(input) {
    const stats = await trimCodexSession(input);
    return { ...stats, counters: { ...stats.counters } };
  },
};
