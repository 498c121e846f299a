/**
 * The session files under folders and files a user names: every `.jsonl` below a folder except
 * what no agent resumes on its own — subagent transcripts (`subagents/`, `agent-*.jsonl`), a
 * workflow's `journal.jsonl` and `tool-results/` — in path order. A file named directly is taken
 * as it is.
 */
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { UsageError } from '../../errors.js';

const SKIPPED_FOLDERS = new Set(['subagents', 'tool-results', 'node_modules', '.git']);

function isSessionFileName(name: string): boolean {
  return name.endsWith('.jsonl') && !name.startsWith('agent-') && name !== 'journal.jsonl';
}

/** The session files under `paths` (folders walked, files taken), absolute, sorted, without duplicates. */
export async function findSessionFiles(paths: readonly string[], cwd = process.cwd()): Promise<string[]> {
  if (paths.length === 0) throw new UsageError('name at least one session file or folder', { hint: 'e.g. ctxvm session economics ~/.claude/projects' });
  const out = new Set<string>();
  const walk = async (dir: string) => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (!SKIPPED_FOLDERS.has(e.name)) await walk(p);
      } else if (e.isFile() && isSessionFileName(e.name)) out.add(p);
    }
  };
  for (const given of paths) {
    const p = resolve(cwd, given);
    const st = await stat(p).catch((cause: unknown) => {
      throw new UsageError(`${given}: no such file or folder`, { cause, hint: 'pass session .jsonl files or folders that hold them' });
    });
    if (st.isDirectory()) await walk(p);
    else out.add(p);
  }
  return [...out].sort();
}
