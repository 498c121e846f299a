/** The Claude Code session driver. */
import type { LoadedSession, LoadOptions, SessionDriver } from '../driver.js';
import { trimClaudeSession } from '../trim/claude-trim.js';
import { claudeAgentContext } from './agent-context.js';
import { reconstructClaudeContext } from './context.js';
import { loadClaudeLean } from './lean-load.js';
import { scanClaudeSession, type ClaudeIndex } from './scan.js';
import { validateClaudeContext } from './validate.js';

/** A full load from an index already made: the chain's lines are read, nothing is scanned. */
async function loadFromIndex(index: ClaudeIndex, options: Pick<LoadOptions, 'signal' | 'onProgress'>): Promise<LoadedSession> {
  const context = await reconstructClaudeContext(index, options);
  return loadedSession(index, claudeAgentContext(context), validateClaudeContext(index, context));
}

function loadedSession(index: ClaudeIndex, context: LoadedSession['context'], findings: LoadedSession['findings']): LoadedSession {
  return {
    agent: 'claude',
    file: index.file,
    ...(index.sessionId ? { sessionId: index.sessionId } : {}),
    ...(index.cwd ? { cwd: index.cwd } : {}),
    context,
    findings,
    lines: index.lines.length + index.badLines.length,
    bytes: index.totalBytes,
  };
}

export const claudeDriver: SessionDriver = {
  agent: 'claude',
  findsOwnTrimFindings: true,
  async load(file, options = {}) {
    if (options.lean !== true) return loadFromIndex(await scanClaudeSession(file, options), options);
    const { index, context, findings } = await loadClaudeLean(file, options);
    return loadedSession(index, claudeAgentContext(context), findings);
  },
  async trim(input) {
    const { index, ...stats } = await trimClaudeSession(input);
    // the input's index, kept for one full load of the input (the numbers of `session trim`)
    let kept: ClaudeIndex | undefined = index;
    return {
      ...stats,
      counters: { ...stats.counters },
      loadInput: (options = {}) => {
        const from = kept;
        kept = undefined;
        return from ? loadFromIndex(from, options) : claudeDriver.load(input.input, options);
      },
    };
  },
};
