/**
 * Configuration from the environment, with every path injectable. Library code receives a
 * `CtxvmConfig`; only the edges (CLI, server) call `loadConfig(process.env)`.
 */
import { homedir } from 'node:os';
import { join, resolve, isAbsolute } from 'node:path';
import { UsageError } from '../errors.js';

export interface CtxvmConfig {
  /** ctxvm's own data folder (default `~/.ctxvm`). */
  home: string;
  /** Content-addressed objects (default `<home>/objects`). */
  objectsDir: string;
  /** Warm store: a SQLite file path (default `<home>/ctxvm.db`) or a `postgres://` URL. */
  db: string;
  /** Hot tier: a `redis://` URL, or undefined for the in-process cache. */
  redis: string | undefined;
  /** Claude Code's config folder (default `~/.claude`). */
  claudeConfigDir: string;
  /** Codex CLI's home folder (default `~/.codex`). */
  codexHome: string;
}

/** The environment variables ctxvm reads, with what each one means. */
export const ENVIRONMENT_VARIABLES: Readonly<Record<string, string>> = {
  CTXVM_HOME: 'ctxvm data folder (default ~/.ctxvm)',
  CTXVM_DB: 'warm store: SQLite file path or postgres:// URL (default $CTXVM_HOME/ctxvm.db)',
  CTXVM_REDIS: 'hot tier: redis:// URL (unset = in-process cache)',
  CLAUDE_CONFIG_DIR: 'Claude Code config folder (default ~/.claude)',
  CODEX_HOME: 'Codex CLI home folder (default ~/.codex)',
};

export interface LoadConfigOptions {
  /** Home directory used for defaults (default `os.homedir()`). */
  homeDir?: string;
  /** Base for relative paths (default `process.cwd()`). */
  cwd?: string;
}

function expandPath(value: string, homeDir: string, cwd: string): string {
  if (value === '~') return homeDir;
  if (value.startsWith('~/')) return join(homeDir, value.slice(2));
  return isAbsolute(value) ? value : resolve(cwd, value);
}

function isUrl(value: string, schemes: string[]): boolean {
  return schemes.some((s) => value.startsWith(`${s}://`));
}

/** Builds the configuration from an environment map (pass `process.env` at the edges only). */
export function loadConfig(env: Readonly<Record<string, string | undefined>>, options: LoadConfigOptions = {}): CtxvmConfig {
  const homeDir = options.homeDir ?? homedir();
  const cwd = options.cwd ?? process.cwd();
  const nonEmpty = (name: string) => {
    const v = env[name]?.trim();
    return v ? v : undefined;
  };
  const home = expandPath(nonEmpty('CTXVM_HOME') ?? '~/.ctxvm', homeDir, cwd);
  const dbRaw = nonEmpty('CTXVM_DB');
  let db = join(home, 'ctxvm.db');
  if (dbRaw) {
    if (isUrl(dbRaw, ['postgres', 'postgresql'])) db = dbRaw;
    else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(dbRaw)) {
      throw new UsageError(`CTXVM_DB=${dbRaw.replace(/\/\/[^@]*@/, '//***@')} is not supported`, {
        hint: 'use a SQLite file path or a postgres:// URL',
      });
    } else db = expandPath(dbRaw, homeDir, cwd);
  }
  const redisRaw = nonEmpty('CTXVM_REDIS');
  if (redisRaw && !isUrl(redisRaw, ['redis', 'rediss'])) {
    throw new UsageError('CTXVM_REDIS must be a redis:// or rediss:// URL', { hint: 'unset it to use the in-process cache' });
  }
  return {
    home,
    objectsDir: join(home, 'objects'),
    db,
    redis: redisRaw,
    claudeConfigDir: expandPath(nonEmpty('CLAUDE_CONFIG_DIR') ?? '~/.claude', homeDir, cwd),
    codexHome: expandPath(nonEmpty('CODEX_HOME') ?? '~/.codex', homeDir, cwd),
  };
}

/** Hides credentials in a connection URL so it can be shown or logged. */
export function redactUrl(url: string): string {
  return url.replace(/(\/\/)([^@/]*)@/, (_m, slashes: string, auth: string) => {
    const user = auth.split(':')[0];
    return `${slashes}${user ? `${user}:***` : '***'}@`;
  });
}
