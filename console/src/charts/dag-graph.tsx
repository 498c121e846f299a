/**
 * The snapshot DAG as a layered SVG graph: boxes labelled name / date / tokens, edges drawn as
 * curves with arrows (solid: branch made from a snapshot; dashed: later snapshot). Clicking a
 * node selects it. Wide graphs scroll inside their card, never the page.
 */
import type { DagGraph, DagNode } from '../api-types.js';
import { clip, fmtBytes, fmtDateTime, fmtInt } from '../format.js';
import { useI18n } from '../i18n.js';
import { layoutDag } from './dag-layout.js';

const NODE_W = 188;
const NODE_H = 66;
const COL_GAP = 64;
const ROW_GAP = 18;
const PAD = 12;

export interface DagGraphProps {
  graph: DagGraph;
  selectedId: string | null;
  onSelect(node: DagNode): void;
}

export function DagGraphChart({ graph, selectedId, onSelect }: DagGraphProps) {
  const { t, lang } = useI18n();
  const layout = layoutDag(graph);
  const pos = new Map(layout.nodes.map((p) => [p.node.id, { x: PAD + p.column * (NODE_W + COL_GAP), y: PAD + p.row * (NODE_H + ROW_GAP) }]));
  const width = PAD * 2 + layout.columns * NODE_W + (layout.columns - 1) * COL_GAP;
  const height = PAD * 2 + layout.rows * NODE_H + Math.max(0, layout.rows - 1) * ROW_GAP;
  const sizeLine = (n: DagNode) => {
    if (n.kind === 'branch') return t(n.trimmed ? 'dag.branchTrimmed' : 'dag.branchFull');
    if (typeof n.tokens === 'number') return t('dag.tokens', { n: n.tokens });
    return n.bytes !== undefined ? fmtBytes(n.bytes) : '';
  };
  return (
    <div class="dag-scroll">
      <svg width={width} height={height} viewBox={`0 0 ${width} ${height}`} class="chart dag-chart" role="group" aria-label={t('dag.title')} data-testid="dag">
        <defs>
          <marker id="dag-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z" class="dag-arrow" />
          </marker>
        </defs>
        {graph.edges.map((e) => {
          const a = pos.get(e.from);
          const b = pos.get(e.to);
          if (!a || !b) return null;
          const x1 = a.x + NODE_W;
          const y1 = a.y + NODE_H / 2;
          const x2 = b.x - 2;
          const y2 = b.y + NODE_H / 2;
          const mid = (x1 + x2) / 2;
          return (
            <path
              key={`${e.from}-${e.to}`}
              d={`M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`}
              class={`dag-edge dag-edge-${e.kind}`}
              marker-end="url(#dag-arrow)"
              data-testid="dag-edge"
              data-from={e.from}
              data-to={e.to}
              data-kind={e.kind}
            />
          );
        })}
        {layout.nodes.map(({ node }) => {
          const p = pos.get(node.id)!;
          const kindClass = node.kind === 'snapshot' ? 'snapshot' : node.trimmed ? 'branch-trimmed' : 'branch-full';
          const select = () => onSelect(node);
          return (
            <g
              key={node.id}
              transform={`translate(${p.x},${p.y})`}
              class={`dag-node dag-${kindClass}${selectedId === node.id ? ' selected' : ''}`}
              tabIndex={0}
              role="button"
              aria-label={`${t(node.kind === 'snapshot' ? 'dag.snapshot' : 'dag.branch')} ${node.name}`}
              onClick={select}
              onKeyDown={(ev) => (ev.key === 'Enter' || ev.key === ' ') && (ev.preventDefault(), select())}
              data-testid="dag-node"
              data-id={node.id}
              data-name={node.name}
              data-kind={node.kind}
              data-tokens={typeof node.tokens === 'number' ? node.tokens : undefined}
            >
              <rect width={NODE_W} height={NODE_H} rx={8} />
              <text x={12} y={20} class="dag-name">
                <tspan class="dag-kind">{t(node.kind === 'snapshot' ? 'dag.snapshotShort' : 'dag.branchShort')}</tspan> {clip(node.name, 20)}
                <title>{node.name}</title>
              </text>
              <text x={12} y={38} class="dag-meta">
                {fmtDateTime(node.createdAtMs, lang)}
              </text>
              <text x={12} y={55} class="dag-meta dag-size">
                {sizeLine(node)}
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
