import { describe, expect, it } from 'vitest';
import { snapshotRecord } from '../../../test/contract/session-catalog.contract.js';
import type { BranchRecord } from './catalog.js';
import { buildDag, childrenOf, lineageOf, renderDag } from './tree.js';

const branch = (id: string, name: string, snapshotId: string, createdAtMs: number): BranchRecord => ({
  id,
  name,
  snapshotId,
  agent: 'claude',
  sessionId: `s-${id}`,
  path: `/p/${id}.jsonl`,
  trimmed: true,
  cutAt: null,
  createdAtMs,
});

describe('DAG drawing', () => {
  // s1 -> s2 (same session); s1 -> b1 -> b1s1 -> b1s2; s2 -> b2; unrelated root u1
  const snapshots = [
    snapshotRecord('s1', 's1', { createdAtMs: 1 }),
    snapshotRecord('s2', 's2', { createdAtMs: 2, parentSnapshotId: 's1' }),
    snapshotRecord('b1s1', 'b1s1', { createdAtMs: 5, sessionId: 's-b1', sourceBranchId: 'b1' }),
    snapshotRecord('b1s2', 'b1s2', { createdAtMs: 7, sessionId: 's-b1', sourceBranchId: 'b1', parentSnapshotId: 'b1s1' }),
    snapshotRecord('u1', 'u1', { createdAtMs: 6, sessionId: 'other' }),
  ];
  const branches = [branch('b1', 'b1', 's1', 3), branch('b2', 'b2', 's2', 4)];
  const graph = buildDag(snapshots, branches);

  it('has one edge per parent link, of the right kind', () => {
    expect(graph.edges).toEqual(
      expect.arrayContaining([
        { from: 's1', to: 'b1', kind: 'branch' },
        { from: 's2', to: 'b2', kind: 'branch' },
        { from: 's1', to: 's2', kind: 'next' },
        { from: 'b1', to: 'b1s1', kind: 'snapshot' },
        { from: 'b1s1', to: 'b1s2', kind: 'next' },
      ]),
    );
    expect(graph.edges).toHaveLength(5);
    expect(lineageOf(graph, 'b1s2').map((n) => n.id)).toEqual(['b1s2', 'b1s1', 'b1', 's1']);
    expect(childrenOf(graph, 's1').map((n) => n.id)).toEqual(['s2', 'b1']);
  });

  it('draws newest first with lanes joining at the fork, like git log --graph', () => {
    expect(renderDag(graph, (n) => n.name)).toEqual([
      '* b1s2',
      '* b1s1',
      '| o b2',
      'o | b1',
      '| * s2',
      '|/',
      '* s1',
      '',
      '* u1',
    ]);
  });

  it('draws each tree on its own, newest tree first: a root never sits on top of another tree', () => {
    const g = buildDag(
      [snapshotRecord('r', 'r', { createdAtMs: 1 }), snapshotRecord('x', 'x', { createdAtMs: 0, sessionId: 'x' }), snapshotRecord('y', 'y', { createdAtMs: 4, sessionId: 'x', parentSnapshotId: 'x' })],
      [branch('a', 'a', 'r', 5), branch('c', 'c', 'r', 3)],
    );
    expect(renderDag(g, (n) => n.name)).toEqual(['o a', '| o c', '|/', '* r', '', '* y', '* x']);
  });

  it('joins a lane across another lane with "_"', () => {
    // r -> r2 (next) -> b; r -> a, r -> c
    const g = buildDag(
      [snapshotRecord('r', 'r', { createdAtMs: 1 }), snapshotRecord('r2', 'r2', { createdAtMs: 2, parentSnapshotId: 'r' })],
      [branch('a', 'a', 'r', 6), branch('b', 'b', 'r2', 5), branch('c', 'c', 'r', 4)],
    );
    expect(renderDag(g, (n) => n.name)).toEqual(['o a', '| o b', '| | o c', '| * | r2', '|_|/', '|/', '* r']);
  });

  it('draws an empty graph as nothing', () => {
    expect(renderDag(buildDag([], []), (n) => n.name)).toEqual([]);
  });
});
