/**
 * Layered layout of the snapshot DAG: a node's column is the longest path to it from a root
 * (snapshot → branch → later snapshot reads left to right); within a column nodes follow their
 * parents' rows, then age. Pure, so it can be reasoned about without a browser.
 */
import type { DagGraph, DagNode } from '../api-types.js';

export interface PlacedNode {
  node: DagNode;
  column: number;
  row: number;
}

export interface DagLayout {
  nodes: PlacedNode[];
  columns: number;
  rows: number;
}

export function layoutDag(graph: DagGraph): DagLayout {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const edges = graph.edges.filter((e) => byId.has(e.from) && byId.has(e.to) && e.from !== e.to);
  const parents = new Map<string, string[]>();
  const indegree = new Map(graph.nodes.map((n) => [n.id, 0]));
  const children = new Map<string, string[]>();
  for (const e of edges) {
    (parents.get(e.to) ?? parents.set(e.to, []).get(e.to)!).push(e.from);
    (children.get(e.from) ?? children.set(e.from, []).get(e.from)!).push(e.to);
    indegree.set(e.to, (indegree.get(e.to) ?? 0) + 1);
  }
  // Kahn's order, oldest first among the ready; nodes left over (a cycle) go last, as roots.
  const age = (id: string) => byId.get(id)!.createdAtMs;
  const ready = graph.nodes.filter((n) => indegree.get(n.id) === 0).map((n) => n.id);
  const order: string[] = [];
  const column = new Map<string, number>();
  while (ready.length) {
    ready.sort((a, b) => age(a) - age(b) || (a < b ? -1 : 1));
    const id = ready.shift()!;
    order.push(id);
    column.set(id, Math.max(0, ...(parents.get(id) ?? []).map((p) => (column.get(p) ?? -1) + 1)));
    for (const c of children.get(id) ?? []) {
      indegree.set(c, indegree.get(c)! - 1);
      if (indegree.get(c) === 0) ready.push(c);
    }
  }
  for (const n of graph.nodes) if (!column.has(n.id)) (column.set(n.id, 0), order.push(n.id));

  const columns = Math.max(0, ...column.values()) + 1;
  const rowOf = new Map<string, number>();
  let rows = 0;
  for (let col = 0; col < columns; col++) {
    const inCol = order.filter((id) => column.get(id) === col);
    const key = (id: string) => {
      const ps = (parents.get(id) ?? []).map((p) => rowOf.get(p)).filter((r): r is number => r !== undefined);
      return ps.length ? Math.min(...ps) : Number.POSITIVE_INFINITY;
    };
    inCol.sort((a, b) => key(a) - key(b) || age(a) - age(b));
    // a child sits on its parent's row when that row is still free in this column
    let next = 0;
    for (const id of inCol) {
      const want = key(id);
      const row = Number.isFinite(want) && want >= next ? want : next;
      rowOf.set(id, row);
      next = row + 1;
    }
    rows = Math.max(rows, next);
  }
  return { nodes: order.map((id) => ({ node: byId.get(id)!, column: column.get(id)!, row: rowOf.get(id)! })), columns, rows };
}
