/**
 * Cumulative cost over turns, untrimmed vs trimmed, for one cache scenario; the break-even turn is
 * a labelled vertical line. Exact values ride on `data-value` attributes.
 */
import type { CacheScenario } from '../api-types.js';
import { useI18n } from '../i18n.js';
import { useNarrow } from '../ui.js';
import { TRIMMED_COLOR, UNTRIMMED_COLOR } from './palette.js';

const M = { left: 58, right: 16, top: 20, bottom: 42 };

/** Y axis ticks: a round step (1, 2 or 5 × 10^k) giving at most five intervals. */
function yAxis(max: number): { ticks: number[]; top: number; decimals: number } {
  const raw = max > 0 ? max / 5 : 0.01;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw)!;
  const top = Math.max(step, Math.ceil(max / step - 1e-9) * step);
  const ticks: number[] = [];
  for (let v = 0; v <= top + step / 2; v += step) ticks.push(v);
  return { ticks, top, decimals: Math.max(2, -Math.floor(Math.log10(step))) };
}

export function CostCurve({ scenario }: { scenario: CacheScenario }) {
  const { t } = useI18n();
  // phones get a narrower drawing, so its text stays legible once scaled to the screen
  const W = useNarrow() ? 360 : 600;
  const H = 280;
  const { untrimmed, trimmed } = scenario.cumulativeUsd;
  const n = Math.max(untrimmed.length, trimmed.length);
  const axis = yAxis(Math.max(...untrimmed, ...trimmed, 0));
  const w = W - M.left - M.right;
  const h = H - M.top - M.bottom;
  const x = (turn: number) => M.left + (n > 1 ? ((turn - 1) / (n - 1)) * w : w / 2);
  const y = (usd: number) => M.top + h - (usd / axis.top) * h;
  const path = (values: number[]) => values.map((v, i) => `${i === 0 ? 'M' : 'L'}${x(i + 1).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  const yTicks = axis.ticks;
  const xStep = n > 20 ? (W < 500 ? 10 : 5) : n > 10 ? 2 : 1;
  const xTicks = Array.from({ length: n }, (_, i) => i + 1).filter((turn) => turn === 1 || turn % xStep === 0);
  const be = scenario.breakEvenTurn;
  const beRight = be !== null && be > n * 0.6;
  return (
    <svg viewBox={`0 0 ${W} ${H}`} class="chart cost-chart" role="img" aria-label={t('cost.title')} data-testid="cost-curve" data-turns={n}>
      {yTicks.map((v) => (
        <g key={v}>
          <line x1={M.left} x2={W - M.right} y1={y(v)} y2={y(v)} class="grid" />
          <text x={M.left - 8} y={y(v) + 4} class="tick" text-anchor="end">
            ${v.toFixed(axis.decimals)}
          </text>
        </g>
      ))}
      {xTicks.map((turn) => (
        <text key={turn} x={x(turn)} y={H - M.bottom + 16} class="tick" text-anchor="middle">
          {turn}
        </text>
      ))}
      <text x={M.left + w / 2} y={H - 6} class="chart-label" text-anchor="middle">
        {t('cost.turn')}
      </text>
      <line x1={M.left} x2={W - M.right} y1={M.top + h} y2={M.top + h} class="axis" />
      <path d={path(untrimmed)} fill="none" stroke={UNTRIMMED_COLOR} stroke-width={2.5} data-testid="cost-line-untrimmed" data-value={untrimmed[untrimmed.length - 1] ?? 0} />
      <path d={path(trimmed)} fill="none" stroke={TRIMMED_COLOR} stroke-width={2.5} data-testid="cost-line-trimmed" data-value={trimmed[trimmed.length - 1] ?? 0} />
      {be !== null && (
        <g data-testid="break-even" data-value={be}>
          <line x1={x(be)} x2={x(be)} y1={M.top} y2={M.top + h} class="break-even" />
          <circle cx={x(be)} cy={y(trimmed[be - 1] ?? 0)} r={4} fill={TRIMMED_COLOR} />
          <text x={x(be) + (beRight ? -6 : 6)} y={M.top + 12} class="break-even-label" text-anchor={beRight ? 'end' : 'start'}>
            {t('cost.breakEvenAt', { turn: be })}
          </text>
        </g>
      )}
      {be === null && (
        <text x={M.left + w / 2} y={M.top + 14} class="break-even-label" text-anchor="middle" data-testid="break-even" data-value="none">
          {t('cost.noBreakEven', { turns: n })}
        </text>
      )}
    </svg>
  );
}
