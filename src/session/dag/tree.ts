/**
 * The snapshot DAG as a graph (for `--json`) and as text drawn like `git log --graph`: newest
 * first, one lane per line of descent, lanes joining where a snapshot has several branches or
 * later snapshots. Every node has at most one parent — a branch comes from one snapshot, and a
 * snapshot follows the previous snapshot of its session, or else the branch that created the
 * session — so the graph is a forest and the drawing never needs merge commits.
 */
import type { AgentKind } from '../context-model.js';
import type { BranchRecord, SnapshotRecord } from './catalog.js';

/** A node of the DAG. */
export interface DagNode {
  id: string;
  kind: 'snapshot' | 'branch';
  name: string;
  agent: AgentKind;
  /** The session captured (snapshot) or created (branch). */
  sessionId: string;
  /** Unix ms. */
  createdAtMs: number;
  /** Snapshot: logical size, bytes. */
  bytes?: number;
  tags?: string[];
  description?: string | null;
  /** Branch: whether it was trimmed. */
  trimmed?: boolean;
  /** Branch: the new session file. */
  path?: string;
}

/**
 * An edge: `branch` snapshot → branch made from it; `snapshot` branch → first snapshot taken of
 * its session; `next` snapshot → later snapshot of the same session.
 */
export interface DagEdge {
  from: string;
  to: string;
  kind: 'branch' | 'snapshot' | 'next';
}

/** Nodes (oldest first) and edges. */
export interface DagGraph {
  nodes: DagNode[];
  edges: DagEdge[];
}

/** Builds the graph from catalog records. */
export function buildDag(snapshots: readonly SnapshotRecord[], branches: readonly BranchRecord[]): DagGraph {
  const ids = new Set<string>([...snapshots.map((s) => s.id), ...branches.map((b) => b.id)]);
  const nodes: DagNode[] = [
    ...snapshots.map(
      (s): DagNode => ({ id: s.id, kind: 'snapshot', name: s.name, agent: s.agent, sessionId: s.sessionId, createdAtMs: s.createdAtMs, bytes: s.bytes, tags: s.tags, description: s.description }),
    ),
    ...branches.map((b): DagNode => ({ id: b.id, kind: 'branch', name: b.name, agent: b.agent, sessionId: b.sessionId, createdAtMs: b.createdAtMs, trimmed: b.trimmed, path: b.path })),
  ].sort((a, b) => a.createdAtMs - b.createdAtMs || (a.id < b.id ? -1 : 1));
  const edges: DagEdge[] = [];
  for (const b of branches) if (ids.has(b.snapshotId)) edges.push({ from: b.snapshotId, to: b.id, kind: 'branch' });
  for (const s of snapshots) {
    if (s.parentSnapshotId && ids.has(s.parentSnapshotId)) edges.push({ from: s.parentSnapshotId, to: s.id, kind: 'next' });
    else if (s.sourceBranchId && ids.has(s.sourceBranchId)) edges.push({ from: s.sourceBranchId, to: s.id, kind: 'snapshot' });
  }
  return { nodes, edges };
}

/** Parent of each node (the graph is a forest). */
export function parentsOf(graph: DagGraph): Map<string, string> {
  const parent = new Map<string, string>();
  for (const e of graph.edges) if (!parent.has(e.to)) parent.set(e.to, e.from);
  return parent;
}

/** Nodes newest first, every node before its parent. */
function drawOrder<N extends DagNode>(graph: { nodes: N[]; edges: DagEdge[] }, parent: Map<string, string>): N[] {
  const pendingChildren = new Map<string, number>();
  for (const p of parent.values()) pendingChildren.set(p, (pendingChildren.get(p) ?? 0) + 1);
  const newestFirst = [...graph.nodes].sort((a, b) => b.createdAtMs - a.createdAtMs || (a.id < b.id ? 1 : -1));
  const done = new Set<string>();
  const order: N[] = [];
  while (order.length < newestFirst.length) {
    // The newest node whose children are all drawn (a clock step backwards cannot break the order).
    const next = newestFirst.find((n) => !done.has(n.id) && !pendingChildren.get(n.id));
    if (!next) break; // unreachable for a forest
    done.add(next.id);
    order.push(next);
    const p = parent.get(next.id);
    if (p) pendingChildren.set(p, pendingChildren.get(p)! - 1);
  }
  return order;
}

/**
 * Draws the graph like `git log --graph`: `*` snapshots, `o` branches; `label` writes the text
 * after the lanes. Each tree (a root and what descends from it) is drawn on its own, the tree with
 * the newest node first, separated by an empty line: drawn interleaved, a tree starting in the
 * column another just left would look like that tree's parent.
 */
export function renderDag<N extends DagNode>(graph: { nodes: N[]; edges: DagEdge[] }, label: (node: N) => string): string[] {
  const parent = parentsOf(graph);
  const rootOf = (id: string): string => {
    let cur = id;
    for (let steps = 0, p = parent.get(cur); p !== undefined && steps <= graph.nodes.length; steps++, p = parent.get(cur)) cur = p;
    return cur;
  };
  const trees = new Map<string, N[]>();
  for (const n of graph.nodes) {
    const r = rootOf(n.id);
    trees.set(r, [...(trees.get(r) ?? []), n]);
  }
  const newest = (nodes: N[]) => Math.max(...nodes.map((n) => n.createdAtMs));
  const ordered = [...trees.values()].sort((a, b) => newest(b) - newest(a));
  const out: string[] = [];
  for (const nodes of ordered) {
    const ids = new Set(nodes.map((n) => n.id));
    if (out.length > 0) out.push('');
    out.push(...renderTree({ nodes, edges: graph.edges.filter((e) => ids.has(e.to)) }, label));
  }
  return out;
}

/** Draws one tree of the forest (see renderDag). */
function renderTree<N extends DagNode>(graph: { nodes: N[]; edges: DagEdge[] }, label: (node: N) => string): string[] {
  const parent = parentsOf(graph);
  const lines: string[] = [];
  let lanes: string[] = []; // lane i waits for node lanes[i]
  const row = (cells: string[]) => lines.push(cells.join('').trimEnd());
  for (const node of drawOrder(graph, parent)) {
    let col = lanes.indexOf(node.id);
    if (col === -1) {
      lanes.push(node.id);
      col = lanes.length - 1;
    }
    // Join the other lanes waiting for this node into its lane, rightmost first: "|/", "|_|/".
    for (let j = lanes.lastIndexOf(node.id); j > col; j = lanes.lastIndexOf(node.id)) {
      const cells = Array.from({ length: lanes.length * 2 }, () => ' ');
      for (let i = 0; i < j; i++) cells[2 * i] = '|';
      for (let k = 2 * col + 1; k < 2 * j - 1; k++) if (cells[k] === ' ') cells[k] = '_';
      cells[2 * j - 1] = '/';
      for (let k = j + 1; k < lanes.length; k++) cells[2 * k - 1] = '/';
      row(cells);
      lanes.splice(j, 1);
    }
    const cells = lanes.map((_, i) => (i === col ? (node.kind === 'snapshot' ? '*' : 'o') : '|') + ' ');
    lines.push(`${cells.join('')}${label(node)}`.trimEnd());
    const p = parent.get(node.id);
    if (p) lanes[col] = p;
    else {
      lanes.splice(col, 1);
      if (col < lanes.length) {
        const shift = Array.from({ length: (lanes.length + 1) * 2 }, () => ' ');
        for (let i = 0; i < col; i++) shift[2 * i] = '|';
        for (let k = col + 1; k <= lanes.length; k++) shift[2 * k - 1] = '/';
        row(shift);
      }
    }
  }
  return lines;
}

/** The chain from a node up to its root: the node first. */
export function lineageOf(graph: DagGraph, id: string): DagNode[] {
  const parent = parentsOf(graph);
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const chain: DagNode[] = [];
  for (let cur: string | undefined = id; cur && byId.has(cur) && chain.length <= graph.nodes.length; cur = parent.get(cur)) chain.push(byId.get(cur)!);
  return chain;
}

/** Direct children of a node, oldest first. */
export function childrenOf(graph: DagGraph, id: string): DagNode[] {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  return graph.edges.filter((e) => e.from === id).map((e) => byId.get(e.to)!).filter(Boolean).sort((a, b) => a.createdAtMs - b.createdAtMs);
}
