/**
 * How another program (Claude Code's hooks, an MCP client) should start this very ctxvm. Such a
 * program runs the command later, from its own environment: a `ctxvm` that only `npx` or
 * `npm run` put on PATH (their `_npx/…/.bin` or `node_modules/.bin` folders) will not be there
 * then. So the command is `ctxvm` only when a `ctxvm` on the ordinary PATH is this installation;
 * otherwise the absolute paths of node and of this CLI's script.
 */
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export type SelfCommandKind = 'path' | 'absolute';

export interface SelfCommand {
  /** The command line to run ctxvm with (shell words, quoted where needed). */
  command: string;
  /** `path`: `ctxvm` as found on PATH; `absolute`: node and the script by absolute path. */
  kind: SelfCommandKind;
  /** The script the command runs (real path). */
  script: string;
}

/** Folders that exist only while npx or an npm script runs. */
const TRANSIENT_BIN = /[\\/](?:_npx[\\/][^\\/]+[\\/])?node_modules[\\/]\.bin[\\/]?$/;

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** Quotes one word for a POSIX shell when it holds anything but plain path characters. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Splits a command line into its words (plain, single- and double-quoted), as a shell would. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  const re = /\s*(?:'([^']*)'|"((?:\\.|[^"\\])*)"|((?:\\.|[^\s'"\\])+))/gy;
  let current: string | undefined;
  let last = 0;
  for (let m = re.exec(line); m; m = re.exec(line)) {
    const glued = m.index === last && current !== undefined && !/^\s/.test(m[0]);
    const piece = m[1] ?? (m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3]!.replace(/\\(.)/g, '$1'));
    if (glued) current += piece;
    else {
      if (current !== undefined) words.push(current);
      current = piece;
    }
    last = re.lastIndex;
  }
  if (current !== undefined) words.push(current);
  return words;
}

/** The first `name` on PATH outside npx's and npm's temporary bin folders. */
export function findOnPath(name: string, env: Readonly<Record<string, string | undefined>>): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir || TRANSIENT_BIN.test(dir) || /[\\/]_npx[\\/]/.test(dir)) continue;
    const candidate = join(dir, name);
    if (executable(candidate)) return candidate;
  }
  return undefined;
}

/** The command that starts this ctxvm from another program's environment. */
export function selfCommand(env: Readonly<Record<string, string | undefined>>, script = process.argv[1] ?? '', execPath = process.execPath): SelfCommand {
  const mine = real(script) ?? script;
  const found = findOnPath('ctxvm', env);
  if (found && real(found) === mine) return { command: 'ctxvm', kind: 'path', script: mine };
  return { command: `${shellWord(execPath)} ${shellWord(mine)}`, kind: 'absolute', script: mine };
}

/** True when `command`'s first word can be run from an ordinary PATH (npx's folders do not count). */
export function commandRunnable(command: string, env: Readonly<Record<string, string | undefined>>): boolean {
  const [first = '', second] = shellWords(command);
  const found = first.includes('/') || first.includes('\\') ? executable(first) : findOnPath(first, env) !== undefined;
  // `node /path/to/main.js …`: the script must be there too
  if (found && second !== undefined && /\.[cm]?js$/.test(second)) return real(second) !== undefined;
  return found;
}

/** How an installed command finds ctxvm: by PATH lookup, or by absolute path. */
export function commandKind(command: string): SelfCommandKind {
  const first = shellWords(command)[0] ?? '';
  return first.includes('/') || first.includes('\\') ? 'absolute' : 'path';
}
