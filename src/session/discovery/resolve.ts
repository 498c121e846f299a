/**
 * Session references, accepted wherever a command takes a session: a session id, a unique id
 * prefix, a file path, or `--latest` (the newest session of the current directory's project).
 */
import { realpath, stat } from 'node:fs/promises';
import { basename, isAbsolute, resolve, sep } from 'node:path';
import { NotFoundError, UsageError } from '../../errors.js';
import type { AgentKind } from '../context-model.js';
import { EXACT_COUNT_MAX_BYTES, resentMessages, sessionIdOf, type DiscoveredSession } from './discover.js';
import { encodeClaudeProjectDir } from '../branch/paths.js';
import { probeSessionFile } from './probe.js';
import { detectSessionAgent } from '../detect-agent.js';

// One definition of Claude Code's folder naming (with its long-name hash) for discovery and branches.
export { encodeClaudeProjectDir } from '../branch/paths.js';

/** Shortest id prefix accepted, characters. */
export const MIN_ID_PREFIX = 4;

/** Options of `resolveSessionRef`. */
export interface ResolveSessionOptions {
  /** The discovered sessions (see discoverSessions). */
  sessions: readonly DiscoveredSession[];
  /** Directory relative paths and `--latest` are resolved against. */
  cwd: string;
  /** Only this agent's sessions. */
  agent?: AgentKind;
}

const looksLikePath = (ref: string) => ref.includes('/') || ref.includes(sep) || ref.endsWith('.jsonl') || ref.startsWith('.');

/** The newest session whose project is `cwd` (or, failing that, the closest enclosing project). */
export function latestSessionFor(cwd: string, sessions: readonly DiscoveredSession[], agent?: AgentKind): DiscoveredSession | undefined {
  const pool = sessions.filter((s) => !agent || s.agent === agent);
  const encoded = encodeClaudeProjectDir(cwd);
  // Sessions arrive newest first; empty title-only files are not something to resume.
  const pick = (list: DiscoveredSession[]) => list.find((s) => s.messages > 0) ?? list[0];
  const exact = pool.filter((s) => s.project === cwd || (s.agent === 'claude' && s.projectDir === encoded));
  if (exact.length) return pick(exact);
  let best: { depth: number; list: DiscoveredSession[] } | undefined;
  for (const s of pool) {
    if (!s.project || !(cwd.startsWith(s.project.endsWith(sep) ? s.project : s.project + sep))) continue;
    const depth = s.project.length;
    if (!best || depth > best.depth) best = { depth, list: [s] };
    else if (depth === best.depth) best.list.push(s);
  }
  return best ? pick(best.list) : undefined;
}

/** A session file outside the agents' folders: probed on the spot. */
async function sessionFromFile(path: string): Promise<DiscoveredSession> {
  const info = await stat(path).catch((cause: unknown) => {
    throw new NotFoundError(`${path}: no such session file`, { cause });
  });
  if (!info.isFile()) throw new UsageError(`${path}: not a file`, { hint: 'pass a session .jsonl file' });
  const agent = await detectSessionAgent(path);
  const probe = await probeSessionFile(path, { agent, size: info.size });
  const v = probe.view;
  const resent = info.size <= EXACT_COUNT_MAX_BYTES ? await resentMessages(path) : undefined;
  const id = agent === 'claude' && v.sessionId && basename(path, '.jsonl') !== v.sessionId ? v.sessionId : sessionIdOf({ agent, path, sessionId: v.sessionId ?? null });
  return {
    agent,
    id,
    path,
    project: v.cwd ?? null,
    bytes: info.size,
    messages: resent ?? v.messages,
    messagesExact: resent !== undefined,
    updatedAt: new Date(Math.round(info.mtimeMs)).toISOString(),
    ...(v.customTitle || v.summary ? { title: (v.customTitle ?? v.summary)! } : {}),
  };
}

function describe(s: DiscoveredSession): string {
  return `${s.id} (${s.agent}, ${s.path})`;
}

/** Resolves a session reference, or `--latest` when `ref` is undefined and `latest` is set. */
export async function resolveSessionRef(ref: string | undefined, latest: boolean, options: ResolveSessionOptions): Promise<DiscoveredSession> {
  const sessions = options.sessions.filter((s) => !options.agent || s.agent === options.agent);
  if (latest) {
    if (ref !== undefined) throw new UsageError('give either a session reference or --latest, not both');
    const cwd = resolve(options.cwd);
    const real = await realpath(cwd).catch(() => cwd);
    const found = latestSessionFor(cwd, sessions, options.agent) ?? (real !== cwd ? latestSessionFor(real, sessions, options.agent) : undefined);
    if (!found) {
      throw new NotFoundError(`no session found for the project ${cwd}`, { hint: 'run `ctxvm sessions` to see the sessions ctxvm knows, then pass an id or a path' });
    }
    return found;
  }
  if (ref === undefined || ref.trim() === '') throw new UsageError('no session given', { hint: 'pass a session id, an id prefix, a path, or --latest' });
  if (looksLikePath(ref)) {
    const path = isAbsolute(ref) ? ref : resolve(options.cwd, ref);
    const real = await realpath(path).catch(() => path);
    const known = sessions.find((s) => s.path === path || s.path === real);
    if (known) return known;
    // A file in an agent folder that the index does not list yet, or anywhere else.
    return sessionFromFile(real);
  }
  const exact = sessions.filter((s) => s.id === ref);
  if (exact.length === 1) return exact[0]!;
  if (exact.length > 1) {
    throw new UsageError(`session id ${ref} matches ${exact.length} files: ${exact.map((s) => s.path).join(', ')}`, { hint: 'pass the path of the one you mean' });
  }
  if (ref.length >= MIN_ID_PREFIX) {
    const prefixed = sessions.filter((s) => s.id.startsWith(ref));
    if (prefixed.length === 1) return prefixed[0]!;
    if (prefixed.length > 1) {
      throw new UsageError(`session id prefix "${ref}" is ambiguous: ${prefixed.slice(0, 5).map(describe).join('; ')}${prefixed.length > 5 ? '; …' : ''}`, {
        hint: 'give more characters of the id',
      });
    }
  }
  throw new NotFoundError(`no session with id ${ref}${ref.length >= MIN_ID_PREFIX ? ' (or starting with it)' : ''}`, {
    hint: 'run `ctxvm sessions` to list the sessions, or pass the file path',
  });
}
