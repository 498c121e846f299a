/**
 * Where each agent keeps its sessions, and the ids it gives them. Claude Code:
 * `$CLAUDE_CONFIG_DIR/projects/<sanitized cwd>/<uuid>.jsonl`; Codex CLI:
 * `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<uuid>.jsonl` (local time, UUID v7).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentKind } from '../context-model.js';

/** Claude Code cuts a sanitized project folder name at this many characters and appends a hash. */
export const CLAUDE_PROJECT_DIR_MAX_CHARS = 200;

export { isUuid } from '../../core/derived-uuid.js';

/** Claude Code's 32-bit string hash for long folder names (djb2 variant over UTF-16 code units). */
function claudePathHash(text: string): number {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = ((h << 5) - h + text.charCodeAt(i)) | 0;
  return h;
}

/**
 * The folder name Claude Code uses for a project: `cwd` with every non-alphanumeric character
 * replaced by '-' (`/home/u/my.proj` → `-home-u-my-proj`); names longer than 200 characters are
 * cut and suffixed with a hash of the full path, as Claude Code 2.1 does.
 */
export function encodeClaudeProjectDir(cwd: string): string {
  const name = cwd.replace(/[^a-zA-Z0-9]/g, '-');
  if (name.length <= CLAUDE_PROJECT_DIR_MAX_CHARS) return name;
  return `${name.slice(0, CLAUDE_PROJECT_DIR_MAX_CHARS)}-${Math.abs(claudePathHash(cwd)).toString(36)}`;
}

/** The folder holding a project's Claude Code sessions. */
export function claudeProjectDir(claudeConfigDir: string, cwd: string): string {
  return join(claudeConfigDir, 'projects', encodeClaudeProjectDir(cwd));
}

/**
 * The project folder Claude Code uses for `cwd`, looking at what exists: for a path over 200
 * characters the hash suffix depends on Claude Code's runtime (and Claude Code itself matches
 * such folders by their first 200 characters), so an existing `<first 200>-*` folder is reused.
 */
export async function findClaudeProjectDir(claudeConfigDir: string, cwd: string): Promise<string> {
  const exact = claudeProjectDir(claudeConfigDir, cwd);
  const name = encodeClaudeProjectDir(cwd);
  if (name.length <= CLAUDE_PROJECT_DIR_MAX_CHARS) return exact;
  if (await stat(exact).then((s) => s.isDirectory(), () => false)) return exact;
  const prefix = `${name.slice(0, CLAUDE_PROJECT_DIR_MAX_CHARS)}-`;
  const names = await readdir(join(claudeConfigDir, 'projects')).catch(() => [] as string[]);
  const match = names.filter((n) => n.startsWith(prefix)).sort()[0];
  return match ? join(claudeConfigDir, 'projects', match) : exact;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `sessions/YYYY/MM/DD` under `codexHome` for `date`, in local time (as Codex names its folders). */
export function codexSessionDir(codexHome: string, date: Date): string {
  return join(codexHome, 'sessions', String(date.getFullYear()), pad(date.getMonth() + 1), pad(date.getDate()));
}

/** `rollout-YYYY-MM-DDTHH-MM-SS-<id>.jsonl` for `date` in local time. */
export function codexRolloutName(id: string, date: Date): string {
  const stamp = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}-${pad(date.getMinutes())}-${pad(date.getSeconds())}`;
  return `rollout-${stamp}-${id}.jsonl`;
}

/** A UUID version 7 (48-bit Unix ms timestamp, then random bits), the kind Codex gives sessions. */
export function uuidV7(nowMs: number, random: Buffer = randomBytes(10)): string {
  const b = Buffer.alloc(16);
  b.writeUIntBE(Math.max(0, Math.floor(nowMs)) % 2 ** 48, 0, 6);
  random.copy(b, 6, 0, 10);
  b[6] = 0x70 | (b[6]! & 0x0f);
  b[8] = 0x80 | (b[8]! & 0x3f);
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A fresh session id in the agent's own style (v4 for Claude Code, v7 for Codex). */
export function newSessionId(agent: AgentKind, nowMs: number): string {
  return agent === 'codex' ? uuidV7(nowMs) : randomUUID();
}

/** The command that opens session `id` in its agent (run it in the project's folder). */
export function resumeCommand(agent: AgentKind, id: string): string {
  return agent === 'codex' ? `codex resume ${id}` : `claude --resume ${id}`;
}
