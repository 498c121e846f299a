/**
 * Fills temp CLAUDE_CONFIG_DIR / CODEX_HOME folders from the shared corpus the way the agents lay
 * them out. Claude Code: every `projects/` folder of a corpus source (`projects/`, `.claude/projects/`,
 * `config/projects/` …) is merged into `<config>/projects/`, project folders whole (sessions, a
 * `sessions/` subfolder, `<id>/subagents/`, `subagents/<id>/workflows/`, `tool-results/`); a folder
 * of loose transcripts (drmaciver) is placed under each session's own cwd. Codex: every
 * `sessions/YYYY/MM/DD/` and `archived_sessions/` folder of a source (at its root or under
 * `.codex/`). Files are copied (the corpus is read-only) with fresh, writable modes.
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

/** Folders named `name` under `dir` (not below one another), depth-first. */
async function foldersNamed(dir: string, name: string, depth = 3): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    if (e.name === name) out.push(join(dir, e.name));
    else if (depth > 0) out.push(...(await foldersNamed(join(dir, e.name), name, depth - 1)));
  }
  return out;
}

async function placeClaude(claudeConfigDir: string): Promise<PlacedSession[]> {
  const placed: PlacedSession[] = [];
  for (const source of await readdir(CLAUDE_CORPUS_DIR)) {
    const root = join(CLAUDE_CORPUS_DIR, source);
    const projectRoots = await foldersNamed(root, 'projects', 2);
    if (projectRoots.length === 0) {
      // a folder of loose transcripts (drmaciver): place each under its own cwd
      for (const name of await readdir(root)) {
        if (!name.endsWith('.jsonl')) continue;
        const text = await readFile(join(root, name), 'utf8');
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
    for (const projects of projectRoots) {
      for (const folder of await readdir(projects)) {
        const dst = join(claudeConfigDir, 'projects', folder);
        await copyTree(join(projects, folder), dst);
        for (const dir of [dst, join(dst, 'sessions')]) {
          let names: string[] = [];
          try {
            names = await readdir(dir);
          } catch {
            continue;
          }
          for (const name of names) {
            if (!UUID_JSONL.test(name)) continue;
            const text = await readFile(join(dir, name), 'utf8');
            placed.push({ agent: 'claude', id: basename(name, '.jsonl'), path: join(dir, name), project: firstFields(text).cwd ?? null, bytes: Buffer.byteLength(text) });
          }
        }
      }
    }
  }
  return placed;
}

async function placeCodex(codexHome: string): Promise<PlacedSession[]> {
  const codexCorpus = join(CORPUS_DIR, 'sessions', 'codex');
  for (const source of await readdir(codexCorpus)) {
    for (const kind of ['sessions', 'archived_sessions']) {
      for (const dir of await foldersNamed(join(codexCorpus, source), kind, 1)) await copyTree(dir, join(codexHome, kind));
    }
  }
  const placed: PlacedSession[] = [];
  const walk = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
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
  await walk(join(codexHome, 'archived_sessions'));
  return placed;
}

/** Copies the corpus into the two agent folders; returns the main session files placed. */
export async function populateAgentHomes(claudeConfigDir: string, codexHome: string): Promise<PlacedSession[]> {
  return [...(await placeClaude(claudeConfigDir)), ...(await placeCodex(codexHome))];
}
