/**
 * Tokens and size for every node of the DAG, as `ctxvm tree` shows them: a snapshot's tokens are
 * computed once and cached in the catalog (as `info` does); a branch's are read from its session
 * file as it is now, since the agent keeps appending to it when it is resumed.
 */
import type { ObjectStore } from '../../store/object-store.js';
import type { SessionCatalog } from './catalog.js';
import { branchStats, computeSnapshotStats } from './info.js';
import { loadManifest } from './manifest.js';
import { buildDag, type DagEdge, type DagNode } from './tree.js';

/** A node with its tokens (null when they cannot be computed) and size (`bytes`; absent when a branch's file is gone). */
export type DagNodeWithStats = DagNode & { tokens: number | null };

export interface DagWithStats {
  nodes: DagNodeWithStats[];
  edges: DagEdge[];
}

export async function dagWithStats(options: { catalog: SessionCatalog; store: ObjectStore; scratchDir: string }): Promise<DagWithStats> {
  const { catalog, store } = options;
  const snapshots = await catalog.listSnapshots();
  const branches = await catalog.listBranches();
  const graph = buildDag(snapshots, branches);
  const snapshotById = new Map(snapshots.map((s) => [s.id, s]));
  const branchById = new Map(branches.map((b) => [b.id, b]));
  const nodes: DagNodeWithStats[] = [];
  for (const node of graph.nodes) {
    if (node.kind === 'snapshot') {
      const s = snapshotById.get(node.id)!;
      let tokens = s.stats?.tokens ?? null;
      if (tokens === null) {
        try {
          const stats = await computeSnapshotStats({ store, manifest: await loadManifest(store, s.manifestHash), scratchDir: options.scratchDir });
          await catalog.setSnapshotStats(s.id, stats);
          tokens = stats.tokens;
        } catch {
          // a snapshot the drivers cannot read is still drawn, without tokens
        }
      }
      nodes.push({ ...node, tokens, bytes: s.bytes });
    } else {
      const b = await branchStats(branchById.get(node.id)!);
      nodes.push({ ...node, tokens: b.stats?.tokens ?? null, ...(b.bytes !== null ? { bytes: b.bytes } : {}) });
    }
  }
  return { nodes, edges: graph.edges };
}
