/**
 * Fills temp CLAUDE_CONFIG_DIR / CODEX_HOME folders from the shared corpus the way the agents lay
 * them out: Claude Code `projects/<encoded cwd>/<sessionId>.jsonl` (+ `<id>/subagents/` and older
 * `agent-*.jsonl` beside them), Codex `sessions/YYYY/MM/DD/rollout-*.jsonl`. Files are copied
 * (the corpus is read-only) with fresh, writable modes.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { encodeClaudeProjectDir } from '../../src/session/discovery/resolve.js';
import { CLAUDE_CORPUS_DIR, CORPUS_DIR } from './corpus.js';

/** A main session file placed in an agent folder. */
export interface PlacedSession {
  agent: 'claude' | 'codex';
  id: string;
  path: string;
  project: string | null;
  bytes: number;
}

async function copyTree(src: string, dst: string): Promise<void> {
  await mkdir(dst, { recursive: true });
  for (const e of await readdir(src, { withFileTypes: true })) {
    if (e.isDirectory()) await copyTree(join(src, e.name), join(dst, e.name));
    else if (e.isFile()) await writeFile(join(dst, e.name), await readFile(join(src, e.name)));
  }
}

function firstFields(text: string): { sessionId?: string; cwd?: string } {
  const out: { sessionId?: string; cwd?: string } = {};
  for (const line of text.split('\n')) {
    try {
      const v = JSON.parse(line) as Record<string, unknown>;
      const p = (v.payload ?? {}) as Record<string, unknown>;
      out.sessionId ??= (typeof v.sessionId === 'string' ? v.sessionId : undefined) ?? (v.type === 'session_meta' && typeof p.id === 'string' ? p.id : undefined);
      out.cwd ??= (typeof v.cwd === 'string' ? v.cwd : undefined) ?? (typeof p.cwd === 'string' ? p.cwd : undefined);
      if (out.sessionId && out.cwd) break;
    } catch {
      // skip
    }
  }
  return out;
}

const UUID_JSONL = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl$/;

/** Copies the corpus into the two agent folders; returns the main session files placed. */
export async function populateAgentHomes(claudeConfigDir: string, codexHome: string): Promise<PlacedSession[]> {
  const placed: PlacedSession[] = [];
  for (const source of await readdir(CLAUDE_CORPUS_DIR)) {
    const projects = join(CLAUDE_CORPUS_DIR, source, 'projects');
    let folders: string[] = [];
    try {
      folders = await readdir(projects);
    } catch {
      // a folder of loose transcripts (drmaciver): place each under its own cwd
      for (const name of await readdir(join(CLAUDE_CORPUS_DIR, source))) {
        if (!name.endsWith('.jsonl')) continue;
        const text = await readFile(join(CLAUDE_CORPUS_DIR, source, name), 'utf8');
        const { sessionId, cwd } = firstFields(text);
        if (!sessionId || !cwd) continue;
        const dir = join(claudeConfigDir, 'projects', encodeClaudeProjectDir(cwd));
        await mkdir(dir, { recursive: true });
        const path = join(dir, `${sessionId}.jsonl`);
        await writeFile(path, text);
        placed.push({ agent: 'claude', id: sessionId, path, project: cwd, bytes: Buffer.byteLength(text) });
      }
      continue;
    }
    for (const folder of folders) {
      const dst = join(claudeConfigDir, 'projects', folder);
      await copyTree(join(projects, folder), dst);
      for (const name of await readdir(dst)) {
        if (!UUID_JSONL.test(name)) continue;
        const text = await readFile(join(dst, name), 'utf8');
        placed.push({ agent: 'claude', id: basename(name, '.jsonl'), path: join(dst, name), project: firstFields(text).cwd ?? null, bytes: Buffer.byteLength(text) });
      }
    }
  }
  const codexCorpus = join(CORPUS_DIR, 'sessions', 'codex');
  for (const source of await readdir(codexCorpus)) {
    const sessions = join(codexCorpus, source, 'sessions');
    await copyTree(sessions, join(codexHome, 'sessions'));
  }
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) await walk(path);
      else if (e.name.startsWith('rollout-')) {
        const text = await readFile(path, 'utf8');
        const f = firstFields(text);
        placed.push({ agent: 'codex', id: f.sessionId!, path, project: f.cwd ?? null, bytes: Buffer.byteLength(text) });
      }
    }
  };
  await walk(join(codexHome, 'sessions'));
  return placed;
}
