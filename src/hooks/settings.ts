/**
 * Claude Code's `settings.json`, as far as ctxvm's hooks need it:
 *
 *   { "hooks": { "SessionEnd": [ { "hooks": [ { "type": "command", "command": "…" } ] } ],
 *                "PreCompact": [ { "matcher": "auto", "hooks": [ … ] } ] } }
 *
 * Reading aborts on a file it cannot parse (naming the file, line and column) or whose `hooks`
 * do not have that shape; nothing is ever written then. Edits keep everything else as it was
 * (key order, other hooks, the file's indentation), go through a backup
 * (`settings.json.ctxvm-backup-<UTC timestamp>`) and an atomic replace, and are re-checked against
 * the file just before writing so a concurrent change (Claude Code saving a setting) is never lost.
 * A symlinked settings file is edited where it points.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import { writeFileAtomic } from '../core/atomic-file.js';
import { CtxvmError, ParseError, ioError } from '../errors.js';
import { firstJsonErrorOffset, positionOf } from './json-position.js';

/** The Claude Code hook events ctxvm installs itself on. */
export const HOOK_EVENTS = ['SessionEnd', 'PreCompact'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** A command hook entry. */
export interface CommandHook {
  type: 'command';
  command: string;
  /** Seconds Claude Code waits for the command. */
  timeout?: number;
  [key: string]: unknown;
}

/** One matcher group of an event: `{ matcher?, hooks: [...] }`. */
export interface HookGroup {
  matcher?: string;
  hooks: CommandHook[];
  [key: string]: unknown;
}

export type Settings = Record<string, unknown> & { hooks?: Record<string, HookGroup[]> };

/** The settings file as read: parsed value and what is needed to write it back the same way. */
export interface SettingsFile {
  /** The path given. */
  path: string;
  /** The file actually read and written (the symlink's target, when it is one). */
  realPath: string;
  exists: boolean;
  settings: Settings;
  /** The exact text read ('' when the file does not exist). */
  text: string;
  /** Indentation found in the file (default two spaces). */
  indent: string | number;
  /** File mode to keep (default 0o600 for a new file). */
  mode: number;
  bom: boolean;
}

/** `ctxvm hooks run --event <E>` as run by Claude Code, after the base command. */
export function hookCommand(base: string, event: HookEvent): string {
  return `${base} hooks run --event ${event}`;
}

const OURS = /(?:^|\s)hooks run --event (SessionEnd|PreCompact)(?:\s|$)/;

/** True for a hook command ctxvm installed (whatever the base command it was installed with). */
export function isCtxvmHookCommand(command: unknown): boolean {
  return typeof command === 'string' && OURS.test(command);
}

function detectIndent(text: string): string | number {
  const m = /^[{[]\s*\n([ \t]+)\S/.exec(text);
  if (!m) return 2;
  return m[1]!.startsWith('\t') ? '\t' : m[1]!.length;
}

/** Parses settings text; a JSON error names the file, the line and the column. */
export function parseSettings(text: string, file: string): Settings {
  let value: unknown;
  try {
    value = text.trim() === '' ? {} : JSON.parse(text);
  } catch (cause) {
    const offset = firstJsonErrorOffset(text);
    const at = positionOf(text, offset < 0 ? text.length : offset);
    const reason = (cause as Error).message.replace(/ in JSON at position \d+.*$/, '').replace(/, (?:\.\.\.)?".*" is not valid JSON$/s, '');
    throw new ParseError({ file, line: at.line, byteOffset: at.byteOffset }, `not valid JSON at column ${at.column}: ${reason}`, {
      cause,
      hint: 'fix the file (or restore one of its .ctxvm-backup-* copies); ctxvm changed nothing',
    });
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new CtxvmError('E_PARSE', `${file}: expected a JSON object at the top level`, { hint: 'ctxvm changed nothing' });
  }
  checkHooksShape(value as Settings, file);
  return value as Settings;
}

/** Throws (naming the key path) when `hooks` is not `{ Event: [ { hooks: [ {...} ] } ] }`. */
function checkHooksShape(settings: Settings, file: string): void {
  const hooks = settings.hooks as unknown;
  if (hooks === undefined) return;
  const bad = (path: string, what: string) =>
    new CtxvmError('E_PARSE', `${file}: ${path} should be ${what}`, { hint: 'see the Claude Code hooks documentation; ctxvm changed nothing' });
  if (!hooks || typeof hooks !== 'object' || Array.isArray(hooks)) throw bad('"hooks"', 'an object of event names');
  for (const event of HOOK_EVENTS) {
    const groups = (hooks as Record<string, unknown>)[event];
    if (groups === undefined) continue;
    if (!Array.isArray(groups)) throw bad(`"hooks.${event}"`, 'a list of matcher groups');
    groups.forEach((g: unknown, i) => {
      if (!g || typeof g !== 'object' || Array.isArray(g)) throw bad(`"hooks.${event}[${i}]"`, 'an object { matcher?, hooks: [...] }');
      const list = (g as { hooks?: unknown }).hooks;
      if (!Array.isArray(list)) throw bad(`"hooks.${event}[${i}].hooks"`, 'a list of hook entries');
      list.forEach((h: unknown, j) => {
        if (!h || typeof h !== 'object' || Array.isArray(h)) throw bad(`"hooks.${event}[${i}].hooks[${j}]"`, 'an object { type, command }');
      });
    });
  }
}

/** Reads the settings file (a missing file reads as `{}`). */
export async function readSettingsFile(path: string): Promise<SettingsFile> {
  let realPath = path;
  try {
    realPath = await realpath(path);
  } catch {
    // missing: written where asked
  }
  let raw: Buffer;
  let mode = 0o600;
  try {
    raw = await readFile(realPath);
    mode = (await stat(realPath)).mode & 0o777;
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return { path, realPath, exists: false, settings: {}, text: '', indent: 2, mode, bom: false };
    throw ioError('read', path, cause);
  }
  const bom = raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf;
  const text = raw.subarray(bom ? 3 : 0).toString('utf8');
  return { path, realPath, exists: true, settings: parseSettings(text, path), text, indent: detectIndent(text), mode, bom };
}

/** What an install/uninstall changed. */
export interface HooksEdit {
  settings: Settings;
  changed: boolean;
  /** Events whose ctxvm entry was added, updated or removed. */
  events: HookEvent[];
}

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/**
 * Adds (or updates) ctxvm's entry for each event; idempotent. Other hooks stay as they are; an
 * older ctxvm entry with another base command is updated in place, duplicates are removed.
 */
export function installHooks(settings: Settings, base: string, events: readonly HookEvent[] = HOOK_EVENTS): HooksEdit {
  const out = clone(settings);
  const changedEvents: HookEvent[] = [];
  for (const event of events) {
    const want = hookCommand(base, event);
    const hooks = (out.hooks ??= {});
    const groups = hooks[event] ?? [];
    let kept = false;
    let changed = false;
    const nextGroups: HookGroup[] = [];
    for (const group of groups) {
      const next: CommandHook[] = [];
      let removed = false;
      for (const h of group.hooks) {
        if (!isCtxvmHookCommand(h.command)) next.push(h);
        else if (!kept) {
          kept = true;
          if (h.command !== want || h.type !== 'command') {
            next.push({ ...h, type: 'command', command: want });
            changed = true;
          } else next.push(h);
        } else removed = true; // a duplicate
      }
      if (removed) changed = true;
      // a group only ctxvm's duplicates were in goes with them; anything else keeps its place
      if (removed && next.length === 0) continue;
      nextGroups.push({ ...group, hooks: next });
    }
    hooks[event] = nextGroups;
    if (!kept) {
      hooks[event].push({ hooks: [{ type: 'command', command: want }] });
      changed = true;
    }
    if (changed) changedEvents.push(event);
  }
  return { settings: changedEvents.length ? out : settings, changed: changedEvents.length > 0, events: changedEvents };
}

/** Removes ctxvm's entries only; groups, events and `hooks` left empty by that removal go too. */
export function uninstallHooks(settings: Settings, events: readonly HookEvent[] = HOOK_EVENTS): HooksEdit {
  const out = clone(settings);
  const changedEvents: HookEvent[] = [];
  const hooks = out.hooks;
  if (!hooks) return { settings, changed: false, events: [] };
  for (const event of events) {
    const groups = hooks[event];
    if (!groups) continue;
    let changed = false;
    const kept: HookGroup[] = [];
    for (const group of groups) {
      const rest = group.hooks.filter((h) => !isCtxvmHookCommand(h.command));
      if (rest.length === group.hooks.length) kept.push(group);
      else {
        changed = true;
        if (rest.length > 0) kept.push({ ...group, hooks: rest });
      }
    }
    if (!changed) continue;
    changedEvents.push(event);
    if (kept.length > 0) hooks[event] = kept;
    else delete hooks[event];
  }
  if (changedEvents.length > 0 && Object.keys(hooks).length === 0) delete out.hooks;
  return { settings: changedEvents.length ? out : settings, changed: changedEvents.length > 0, events: changedEvents };
}

/** What is installed. */
export interface HooksStatus {
  /** Per event: the ctxvm command installed, or null. */
  installed: Record<HookEvent, string | null>;
  /** Other hooks on those events (left alone by ctxvm). */
  foreignHooks: Record<HookEvent, number>;
  /** `disableAllHooks: true` turns every hook off, ctxvm's included. */
  disableAllHooks: boolean;
}

export function hooksStatus(settings: Settings): HooksStatus {
  const installed = { SessionEnd: null, PreCompact: null } as Record<HookEvent, string | null>;
  const foreignHooks = { SessionEnd: 0, PreCompact: 0 } as Record<HookEvent, number>;
  for (const event of HOOK_EVENTS) {
    for (const group of settings.hooks?.[event] ?? []) {
      for (const h of group.hooks) {
        if (isCtxvmHookCommand(h.command)) installed[event] ??= h.command;
        else foreignHooks[event]++;
      }
    }
  }
  return { installed, foreignHooks, disableAllHooks: settings.disableAllHooks === true };
}

/** The file's text for `settings`, in its own indentation and with its BOM, ending in a newline. */
export function renderSettings(file: SettingsFile, settings: Settings): string {
  return `${file.bom ? '\ufeff' : ''}${JSON.stringify(settings, null, file.indent)}\n`;
}

/** `20260102T030405123Z` (UTC, sortable, safe in file names). */
export function backupStamp(nowMs: number): string {
  return new Date(nowMs).toISOString().replace(/[-:.]/g, '');
}

export interface EditSettingsOptions {
  /** Clock for the backup's name, Unix ms (default now). */
  nowMs?: number;
  /** Attempts when the file changes under us (default 3). */
  attempts?: number;
}

export interface EditSettingsResult extends HooksEdit {
  path: string;
  /** Where the previous file was copied, when something was written over an existing file. */
  backup?: string;
}

/**
 * Applies `edit` to the settings file: nothing is written when it changes nothing; else the old
 * file is backed up, and the new one replaces it atomically, provided the file did not change
 * since it was read (retried, then E_CONFLICT).
 */
export async function editSettingsFile(path: string, edit: (settings: Settings) => HooksEdit, options: EditSettingsOptions = {}): Promise<EditSettingsResult> {
  const attempts = options.attempts ?? 3;
  for (let attempt = 1; ; attempt++) {
    const file = await readSettingsFile(path);
    const result = edit(file.settings);
    if (!result.changed) return { ...result, path };
    // the file must still be what we parsed: Claude Code may have saved a setting meanwhile
    const now = await readSettingsFile(path).catch(() => undefined);
    if (!now || now.exists !== file.exists || now.text !== file.text) {
      if (attempt >= attempts) throw new CtxvmError('E_CONFLICT', `${path} keeps changing while ctxvm edits it; nothing was written`, { hint: 'try again when Claude Code is idle' });
      continue;
    }
    let backup: string | undefined;
    if (file.exists) {
      backup = `${file.realPath}.ctxvm-backup-${backupStamp(options.nowMs ?? Date.now())}`;
      for (let n = 1; await stat(backup).then(() => true, () => false); n++) backup = `${file.realPath}.ctxvm-backup-${backupStamp(options.nowMs ?? Date.now())}-${n}`;
      await writeFileAtomic(backup, await readFile(file.realPath), { mode: file.mode });
    }
    await writeFileAtomic(file.realPath, renderSettings(file, result.settings), { mode: file.mode });
    return { ...result, path, ...(backup ? { backup } : {}) };
  }
}
