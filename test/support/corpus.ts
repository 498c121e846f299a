/**
 * The shared real-session corpus and the synthetic session generator, found from the repository
 * root (`../shared/`). Both are optional on a laptop: suites that need them skip with a printed
 * reason when they are absent.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (the folder holding package.json). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The shared corpus folder (`<repo>/../shared/corpus`). */
export const CORPUS_DIR = resolve(REPO_ROOT, '..', 'shared', 'corpus');

/** Claude Code sessions of the corpus. */
export const CLAUDE_CORPUS_DIR = join(CORPUS_DIR, 'sessions', 'claude-code');

/** The deterministic Claude Code session generator (`../shared/tools/gen-claude-session.mjs`). */
export const CLAUDE_GENERATOR = resolve(REPO_ROOT, '..', 'shared', 'tools', 'gen-claude-session.mjs');

const UUID_JSONL = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl$/;

function walk(dir: string, out: string[]): void {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      // subagent transcripts are sidechain-only and not resumable
      if (name !== 'subagents') walk(path, out);
    } else out.push(path);
  }
}

/**
 * The main Claude Code session files of the corpus: `<uuid>.jsonl` anywhere and
 * `drmaciver/*.jsonl`, without `agent-*.jsonl` and `subagents/`. Empty when the corpus is absent.
 */
export function claudeMainSessions(): string[] {
  if (!existsSync(CLAUDE_CORPUS_DIR)) return [];
  const all: string[] = [];
  walk(CLAUDE_CORPUS_DIR, all);
  return all.filter((path) => {
    const name = basename(path);
    if (!name.endsWith('.jsonl') || name.startsWith('agent-')) return false;
    if (UUID_JSONL.test(name)) return true;
    return basename(dirname(path)) === 'drmaciver' && dirname(dirname(path)) === CLAUDE_CORPUS_DIR;
  });
}

/** Why corpus tests are skipped, or undefined when the corpus is there. */
export function corpusSkipReason(): string | undefined {
  if (!existsSync(CLAUDE_CORPUS_DIR)) return `Claude Code corpus not found at ${CLAUDE_CORPUS_DIR}: corpus tests skipped`;
  if (claudeMainSessions().length === 0) return `no Claude Code main session files under ${CLAUDE_CORPUS_DIR}: corpus tests skipped`;
  return undefined;
}

/** Why generator-based tests are skipped, or undefined when the generator is there. */
export function generatorSkipReason(): string | undefined {
  return existsSync(CLAUDE_GENERATOR) ? undefined : `session generator not found at ${CLAUDE_GENERATOR}: generated-session tests skipped`;
}

const printed = new Set<string>();
/** Prints a skip reason once per test file (so a skipped suite says why). */
export function printSkipReason(reason: string | undefined): void {
  if (reason && !printed.has(reason)) {
    printed.add(reason);
    console.warn(`[skip] ${reason}`);
  }
}

export interface GenerateOptions {
  turns: number;
  seed: number;
  compactions?: number;
  edgeCases?: boolean | string;
  images?: boolean;
  toolUseResult?: boolean;
  profile?: 'conversational' | 'mixed-tools' | 'heavy-tools';
}

/** Runs the generator into `out` (deterministic: same options, same bytes) and returns `out`. */
export function generateClaudeSession(out: string, options: GenerateOptions): string {
  const edge = options.edgeCases === true ? 'on' : options.edgeCases === false || options.edgeCases === undefined ? 'off' : options.edgeCases;
  const args = [
    CLAUDE_GENERATOR,
    '--turns',
    String(options.turns),
    '--seed',
    String(options.seed),
    '--compactions',
    String(options.compactions ?? 0),
    '--edge-cases',
    edge,
    '--images',
    options.images === false ? 'off' : 'on',
    '--tool-use-result',
    options.toolUseResult === false ? 'off' : 'on',
    ...(options.profile ? ['--profile', options.profile] : []),
    '--out',
    out,
  ];
  execFileSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  return out;
}
