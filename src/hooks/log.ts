/**
 * The hooks' log: `$CTXVM_HOME/logs/hooks.log`, one JSON object per line. A hook must not print
 * (Claude Code reads a hook's stdout), so this is the only place its outcome goes; `ctxvm hooks
 * status` shows the last entries. Rotated to `hooks.log.1` past 1 MiB.
 */
import { appendFile, mkdir, readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** Rotate the log past this size, bytes. */
export const HOOK_LOG_MAX_BYTES = 1 << 20;

export function hookLogPath(ctxvmHome: string): string {
  return join(ctxvmHome, 'logs', 'hooks.log');
}

/** Where a hook's branch was recorded in the DAG: snapshot and branch names. */
export interface HookDagEntry {
  snapshot: string;
  branch: string;
}

/** One log entry. */
export interface HookLogEntry {
  /** ISO-8601 time. */
  time: string;
  event: string;
  outcome: 'branched' | 'skipped' | 'failed' | 'queued';
  sessionId?: string;
  transcript?: string;
  reason?: string;
  branch?: { sessionId: string; path: string; resume: string };
  tokens?: { before?: number; after?: number; reduction?: number };
  /** The snapshot and branch recorded in the DAG (`ctxvm tree`), when recording worked. */
  dag?: HookDagEntry;
  /** Duration of the run, ms. */
  ms?: number;
}

/** Appends an entry; never throws (a hook that cannot log still must not fail the agent). */
export async function appendHookLog(ctxvmHome: string, entry: HookLogEntry): Promise<void> {
  const path = hookLogPath(ctxvmHome);
  try {
    await mkdir(join(ctxvmHome, 'logs'), { recursive: true });
    const size = await stat(path).then((s) => s.size, () => 0);
    if (size > HOOK_LOG_MAX_BYTES) await rename(path, `${path}.1`).catch(() => undefined);
    await appendFile(path, JSON.stringify(entry) + '\n', { mode: 0o600 });
  } catch {
    // nowhere left to report to
  }
}

/** The last `n` entries, oldest first (unreadable lines skipped). */
export async function readHookLog(ctxvmHome: string, n = 10): Promise<HookLogEntry[]> {
  let text: string;
  try {
    text = await readFile(hookLogPath(ctxvmHome), 'utf8');
  } catch {
    return [];
  }
  const out: HookLogEntry[] = [];
  for (const line of text.split('\n').slice(-(n + 1))) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as HookLogEntry);
    } catch {
      // a torn line from a crashed writer
    }
  }
  return out.slice(-n);
}
