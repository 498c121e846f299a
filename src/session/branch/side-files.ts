/**
 * The files Claude Code keeps beside a session, in `<sessionId>/`: subagent transcripts
 * (`subagents/agent-<id>.jsonl` and `.meta.json`, including the compaction agent's
 * `agent-acompact-*`) and tool outputs too large for the log (`tool-results/<name>`). A branch
 * carries them into its own `<newId>/` folder: transcripts rewritten with the branch's ids, the
 * rest copied byte for byte. Only regular files are taken; links are skipped.
 */
import { copyFile, lstat, mkdir, readdir } from 'node:fs/promises';
import { constants } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { ioError } from '../../errors.js';
import { rewriteClaudeSideTranscript, type ClaudeIdMap } from './claude-rewrite.js';

export interface ClaudeSideFile {
  /** Path relative to the session folder, with '/' separators (e.g. `subagents/agent-a1.jsonl`). */
  rel: string;
  abs: string;
  kind: 'subagent' | 'tool-result' | 'other';
  /**
   * What names the file inside the transcript: the agent id of a subagent file, the file name of
   * a tool result. A cut branch takes the file only when a kept line mentions it.
   */
  key: string;
}

/** Lists the side files of a session folder (empty when it does not exist). */
export async function listClaudeSideFiles(sessionDir: string): Promise<ClaudeSideFile[]> {
  const out: ClaudeSideFile[] = [];
  const walk = async (dir: string): Promise<void> => {
    let names: string[];
    try {
      names = (await readdir(dir)).sort();
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code === 'ENOENT' || (cause as NodeJS.ErrnoException).code === 'ENOTDIR') return;
      throw ioError('list', dir, cause);
    }
    for (const name of names) {
      const abs = join(dir, name);
      const info = await lstat(abs);
      if (info.isDirectory()) await walk(abs);
      else if (info.isFile()) {
        const rel = relative(sessionDir, abs).split(sep).join('/');
        const agent = /^agent-(.+?)(?:\.meta\.json|\.jsonl)$/.exec(name);
        if (agent && rel.startsWith('subagents/')) out.push({ rel, abs, kind: 'subagent', key: agent[1]! });
        else if (rel.startsWith('tool-results/')) out.push({ rel, abs, kind: 'tool-result', key: name });
        else out.push({ rel, abs, kind: 'other', key: rel });
      }
    }
  };
  await walk(sessionDir);
  return out;
}

/** Copies side files into `dest` (a fresh folder): `.jsonl` subagent transcripts rewritten, the rest as is. */
export async function copyClaudeSideFiles(files: readonly ClaudeSideFile[], dest: string, map: ClaudeIdMap, newUuid?: (source: string) => string): Promise<string[]> {
  const written: string[] = [];
  for (const f of files) {
    const target = join(dest, ...f.rel.split('/'));
    await mkdir(dirname(target), { recursive: true });
    if (f.kind === 'subagent' && basename(f.abs).endsWith('.jsonl')) await rewriteClaudeSideTranscript(f.abs, target, map, newUuid);
    else {
      try {
        await copyFile(f.abs, target, constants.COPYFILE_EXCL);
      } catch (cause) {
        throw ioError('copy', f.abs, cause);
      }
    }
    written.push(f.rel);
  }
  return written;
}
