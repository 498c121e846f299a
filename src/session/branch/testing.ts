/**
 * Helpers for tests of branches (used by the unit, crash and real-agent tests): temp agent homes
 * and an object store, reproducible uuids, and checks that a branch kept every id relation of its
 * source.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsObjectStore } from '../../store/drivers/objects-fs.js';
import type { ObjectStore } from '../../store/object-store.js';

export interface BranchTestEnv {
  dir: string;
  claudeConfigDir: string;
  codexHome: string;
  /** Stands for `$CTXVM_HOME/tmp`: where branches are staged. */
  scratchDir: string;
  store: ObjectStore;
  cleanup(): Promise<void>;
}

/** A temp folder with `claude/`, `codex/`, `ctxvm/tmp/` and an object store under `objects/`. */
export async function createBranchTestEnv(prefix = 'ctxvm-branch-'): Promise<BranchTestEnv> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return {
    dir,
    claudeConfigDir: join(dir, 'claude'),
    codexHome: join(dir, 'codex'),
    scratchDir: join(dir, 'ctxvm', 'tmp'),
    store: createFsObjectStore({ root: join(dir, 'objects'), durability: 'deferred' }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** A uuid generator that counts: `<seed>-0000-4000-8000-000000000001`, … (seed: 8 hex digits). */
export function countingUuids(seed = 'b0000000'): () => string {
  let n = 0;
  return () => `${seed}-0000-4000-8000-${String(++n).padStart(12, '0')}`;
}

/** The JSON objects of a JSONL file (lines that do not parse are skipped). */
export async function readJsonObjects(path: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const line of (await readFile(path, 'utf8')).split('\n')) {
    if (!line.trim()) continue;
    try {
      const v = JSON.parse(line) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) out.push(v as Record<string, unknown>);
    } catch {
      // a torn line
    }
  }
  return out;
}

/** Fields outside the API message that name another line by uuid. */
export const UUID_REFERENCE_FIELDS = ['parentUuid', 'logicalParentUuid', 'leafUuid', 'sourceToolAssistantUUID', 'messageId'] as const;

/**
 * Checks, line by line, that `branch` is `source` with new ids: returns the problems found (empty
 * when every line pairs up). Lines pair in order; the caller makes sure both have the same lines.
 */
export function compareRewrittenLines(source: Record<string, unknown>[], branch: Record<string, unknown>[], newSessionId: string): string[] {
  const problems: string[] = [];
  if (source.length !== branch.length) return [`${source.length} source lines, ${branch.length} branch lines`];
  const map = new Map<string, string>();
  source.forEach((s, i) => {
    const b = branch[i]!;
    if (typeof s.uuid === 'string') {
      if (typeof b.uuid !== 'string' || b.uuid === s.uuid) problems.push(`line ${i + 1}: uuid not remapped`);
      else if (map.has(s.uuid) && map.get(s.uuid) !== b.uuid) problems.push(`line ${i + 1}: uuid ${s.uuid} remapped two ways`);
      else map.set(s.uuid, b.uuid);
    }
  });
  const branchUuids = new Set(map.values());
  for (const u of map.keys()) if (branchUuids.has(u)) problems.push(`source uuid ${u} reappears in the branch`);
  source.forEach((s, i) => {
    const b = branch[i]!;
    if ('sessionId' in s && b.sessionId !== newSessionId) problems.push(`line ${i + 1}: sessionId ${String(b.sessionId)}`);
    for (const f of UUID_REFERENCE_FIELDS) {
      const sv = s[f];
      const want = typeof sv === 'string' ? (map.get(sv) ?? sv) : sv;
      if (JSON.stringify(b[f]) !== JSON.stringify(want)) problems.push(`line ${i + 1}: ${f} ${JSON.stringify(b[f])}, expected ${JSON.stringify(want)}`);
    }
    const snap = (s.snapshot as { messageId?: unknown } | undefined)?.messageId;
    if (typeof snap === 'string' && (b.snapshot as { messageId?: unknown }).messageId !== (map.get(snap) ?? snap)) problems.push(`line ${i + 1}: snapshot.messageId not remapped`);
    if (JSON.stringify(s.message) !== JSON.stringify(b.message)) problems.push(`line ${i + 1}: message changed`);
    if (JSON.stringify(s.toolUseResult) !== JSON.stringify(b.toolUseResult)) problems.push(`line ${i + 1}: toolUseResult changed`);
  });
  return problems;
}
