/**
 * Which lines Claude Code loads on resume (resume-model.md §1.1–1.5), decided from the pass-1
 * index alone: cut at the last compaction boundary (keeping preserved messages), pick the leaf,
 * walk `parentUuid` (bridging a missing parent by timestamp, as Claude Code does), and bring back
 * the off-path lines of parallel tool calls.
 */
import type { ClaudeIndex, LineMeta } from './scan.js';

/** Claude Code bridges a missing parent to an entry at most this much older, ms. */
export const PARENT_BRIDGE_MS = 5000;

export interface ClaudeChain {
  /**
   * File lines (1-based) Claude Code loads, in the order it sends them: file order, except that
   * preserved messages follow their anchor (§1.2.3). A repeated uuid is listed once, at the
   * position of its first occurrence, by the line of its last occurrence (whose content is used).
   */
  lines: number[];
  /** The leaf line the walk started from. */
  leafLine?: number;
  /** parentUuid links that name no loaded line: bridged by timestamp, or where the walk ended. */
  missingParents: { line: number; parentUuid: string; bridgedTo?: number }[];
  /** Lines dropped with the content before the last compaction boundary. */
  cutByBoundary: number;
}

function isMessage(m: LineMeta): boolean {
  return m.kind === 'user' || m.kind === 'assistant';
}

/** The preserved messages of a boundary, resolved to uuids in order (first → last), or undefined. */
export function resolvePreserved(boundary: LineMeta | undefined, byUuid: Map<string, LineMeta>): { anchor?: string; uuids: string[] } | undefined {
  const spec = boundary?.preserved;
  if (!spec) return undefined;
  let uuids = spec.uuids;
  if (!uuids && spec.segment) {
    const walked: string[] = [];
    const seen = new Set<string>();
    let cur = byUuid.get(spec.segment.tail);
    while (cur?.uuid && !seen.has(cur.uuid)) {
      seen.add(cur.uuid);
      walked.push(cur.uuid);
      if (cur.uuid === spec.segment.head) {
        uuids = walked.reverse();
        break;
      }
      cur = cur.parentUuid ? byUuid.get(cur.parentUuid) : undefined;
    }
  }
  if (!uuids || uuids.length === 0 || uuids.some((u) => !byUuid.has(u))) return undefined;
  return { ...(spec.anchor ? { anchor: spec.anchor } : {}), uuids };
}

export function selectClaudeChain(index: ClaudeIndex): ClaudeChain {
  // a repeated uuid keeps the position of its first occurrence and the content of its last (§1.1.2)
  const byUuidAll = new Map<string, LineMeta>();
  for (const m of index.lines) if (m.uuid) byUuidAll.set(m.uuid, m);
  const entries: LineMeta[] = [];
  const placed = new Set<string>();
  for (const m of index.lines) {
    if (!m.uuid) entries.push(m);
    else if (!placed.has(m.uuid)) {
      placed.add(m.uuid);
      entries.push(byUuidAll.get(m.uuid)!);
    }
  }

  let boundaryAt = -1;
  for (let i = entries.length - 1; i >= 0 && boundaryAt < 0; i--) if (entries[i]!.kind === 'system' && entries[i]!.subtype === 'compact_boundary') boundaryAt = i;
  const kept = boundaryAt >= 0 ? resolvePreserved(entries[boundaryAt], byUuidAll) : undefined;
  const keepUuids = new Set(kept?.uuids ?? []);
  const live = entries.filter((m, i) => i >= boundaryAt || (m.uuid !== undefined && keepUuids.has(m.uuid)));
  const parentOf = new Map<string, string | null | undefined>();
  for (const m of live) if (m.uuid) parentOf.set(m.uuid, m.parentUuid);
  if (kept) {
    const first = kept.uuids[0]!;
    const last = kept.uuids[kept.uuids.length - 1]!;
    kept.uuids.forEach((u, i) => parentOf.set(u, i === 0 ? (kept.anchor ?? null) : kept.uuids[i - 1]!));
    for (const m of live) if (m.uuid && !keepUuids.has(m.uuid) && m.parentUuid === kept.anchor && m.uuid !== first) parentOf.set(m.uuid, last);
  }
  const byUuid = new Map<string, LineMeta>();
  for (const m of live) if (m.uuid) byUuid.set(m.uuid, m);

  // leaf: last non-sidechain line with a uuid, walked up to its nearest message
  let leaf: LineMeta | undefined;
  for (let i = live.length - 1; i >= 0 && !leaf; i--) {
    const m = live[i]!;
    if (!m.uuid || m.isSidechain) continue;
    let cur: LineMeta | undefined = m;
    const seen = new Set<string>();
    while (cur && !isMessage(cur) && !seen.has(cur.uuid!)) {
      seen.add(cur.uuid!);
      const p = parentOf.get(cur.uuid!);
      cur = p ? byUuid.get(p) : undefined;
    }
    if (cur) leaf = cur;
  }
  const missingParents: ClaudeChain['missingParents'] = [];
  const cutByBoundary = entries.length - live.length;
  if (!leaf) return { lines: [], missingParents, cutByBoundary };

  const seen = new Set<string>();
  const chain: LineMeta[] = [];
  const bridge = (child: LineMeta): LineMeta | undefined => {
    const t = child.timestamp ? Date.parse(child.timestamp) : NaN;
    if (Number.isNaN(t)) return undefined;
    let best: LineMeta | undefined;
    let bestT = -Infinity;
    for (const m of live) {
      if (!m.uuid || seen.has(m.uuid) || m.isSidechain !== child.isSidechain) continue;
      if (m.kind === 'system' && m.subtype === 'file_snapshot') continue;
      const tt = m.timestamp ? Date.parse(m.timestamp) : NaN;
      if (Number.isNaN(tt) || tt > t) continue;
      if (tt > bestT) {
        best = m;
        bestT = tt;
      }
    }
    return best && t - bestT <= PARENT_BRIDGE_MS ? best : undefined;
  };
  for (let cur: LineMeta | undefined = leaf; cur && !seen.has(cur.uuid!); ) {
    seen.add(cur.uuid!);
    chain.push(cur);
    const p = parentOf.get(cur.uuid!);
    if (!p) break;
    let next = byUuid.get(p);
    if (!next || seen.has(next.uuid!)) {
      const bridged = bridge(cur);
      if (!byUuid.has(p)) missingParents.push({ line: cur.line, parentUuid: p, ...(bridged ? { bridgedTo: bridged.line } : {}) });
      next = bridged;
    }
    cur = next;
  }

  // parallel tool calls: off-path lines of on-chain replies, and results hanging under them
  const onChain = new Set(chain.map((m) => m.uuid!));
  const chainMessageIds = new Set(chain.filter((m) => m.kind === 'assistant' && m.messageId).map((m) => m.messageId!));
  const answered = new Set(chain.filter((m) => m.kind === 'user').flatMap((m) => m.toolResults.map((r) => r.toolUseId)));
  const extras: LineMeta[] = [];
  for (const m of live) {
    if ((m.uuid && onChain.has(m.uuid)) || m.isSidechain) continue;
    if (m.kind === 'assistant' && m.messageId && chainMessageIds.has(m.messageId)) extras.push(m);
    else if (m.kind === 'user' && m.toolResults.some((r) => !answered.has(r.toolUseId))) {
      const parent = m.parentUuid ? byUuid.get(m.parentUuid) : undefined;
      if (parent?.kind === 'assistant' && parent.messageId && chainMessageIds.has(parent.messageId)) extras.push(m);
    }
  }
  return { lines: sendOrder(chain.reverse(), extras, live), leafLine: leaf.line, missingParents, cutByBoundary };
}

/**
 * The chain in walk order (root → leaf; that is file order but for relinked preserved messages),
 * with each off-path line placed after the chain line that precedes it in the file, so parallel
 * results keep file order (§1.5.2).
 */
function sendOrder(chain: LineMeta[], extras: LineMeta[], live: LineMeta[]): number[] {
  if (extras.length === 0) return chain.map((m) => m.line);
  const pos = new Map<LineMeta, number>();
  live.forEach((m, i) => pos.set(m, i));
  const byPos = chain.map((m, i) => ({ at: pos.get(m)!, rank: i })).sort((a, b) => a.at - b.at);
  const keyed = chain.map((m, i) => ({ m, rank: i, at: -1 }));
  for (const m of extras) {
    const at = pos.get(m)!;
    // the chain line nearest before `at` in the file (binary search over chain positions)
    let lo = 0;
    let hi = byPos.length - 1;
    let rank = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (byPos[mid]!.at < at) {
        rank = byPos[mid]!.rank;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    keyed.push({ m, rank, at });
  }
  keyed.sort((a, b) => a.rank - b.rank || a.at - b.at);
  return keyed.map((k) => k.m.line);
}
