/**
 * A throwaway sessions environment for DAG tests: temp CTXVM_HOME (SQLite warm store + fs object
 * store), CLAUDE_CONFIG_DIR and CODEX_HOME, plus helpers to place session files where the agents
 * keep them and to copy a session with new ids (what a plain branch does).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqlSessionCatalog } from '../../src/session/dag/sql-catalog.js';
import type { SessionCatalog } from '../../src/session/dag/catalog.js';
import { encodeClaudeProjectDir } from '../../src/session/discovery/resolve.js';
import { createFsObjectStore } from '../../src/store/drivers/objects-fs.js';
import type { ObjectStore } from '../../src/store/object-store.js';
import { openWarmDatabase } from '../../src/store/warm/open.js';
import type { SqlDatabase } from '../../src/store/warm/sql.js';

export interface DagEnv {
  root: string;
  home: string;
  claudeConfigDir: string;
  codexHome: string;
  db: SqlDatabase;
  catalog: SessionCatalog;
  store: ObjectStore;
  /** Environment variables pointing a CLI run at this environment. */
  env: Record<string, string>;
  /** Writes `content` as Claude Code session `id` of project `cwd`; returns its path. */
  putClaudeSession(cwd: string, id: string, content: string | Buffer): Promise<string>;
  close(): Promise<void>;
}

export async function createDagEnv(): Promise<DagEnv> {
  const root = await mkdtemp(join(tmpdir(), 'ctxvm-dag-'));
  const home = join(root, 'ctxvm');
  const claudeConfigDir = join(root, 'claude');
  const codexHome = join(root, 'codex');
  await Promise.all([mkdir(home, { recursive: true }), mkdir(join(claudeConfigDir, 'projects'), { recursive: true }), mkdir(join(codexHome, 'sessions'), { recursive: true })]);
  const db = await openWarmDatabase({ db: join(home, 'ctxvm.db') });
  const catalog = createSqlSessionCatalog(db);
  const store = createFsObjectStore({ root: join(home, 'objects'), durability: 'deferred' });
  return {
    root,
    home,
    claudeConfigDir,
    codexHome,
    db,
    catalog,
    store,
    env: { CTXVM_HOME: home, CLAUDE_CONFIG_DIR: claudeConfigDir, CODEX_HOME: codexHome },
    async putClaudeSession(cwd, id, content) {
      const dir = join(claudeConfigDir, 'projects', encodeClaudeProjectDir(cwd));
      await mkdir(dir, { recursive: true });
      const path = join(dir, `${id}.jsonl`);
      await writeFile(path, content);
      return path;
    },
    async close() {
      await db.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** A copy of a session with every UUID replaced consistently (a branch without trimming). */
export function copyWithNewIds(content: string): { content: string; ids: Map<string, string> } {
  const ids = new Map<string, string>();
  const out = content.replace(UUID, (u) => {
    let next = ids.get(u);
    if (!next) ids.set(u, (next = randomUUID()));
    return next;
  });
  return { content: out, ids };
}

/** Reads a file as text. */
export const readText = (path: string) => readFile(path, 'utf8');
