/**
 * Break-even call against reduction, one dot per session (circles Claude Code, squares Codex,
 * coloured by class); the call axis is logarithmic, sessions that never break even sit in a band
 * above it. Crosses mark the CMV paper's class means. Exact values ride on data attributes.
 */
import type { SessionEconomicsRow } from '../api-types.js';
import { fmtPercent } from '../format.js';
import { useI18n, type MessageKey } from '../i18n.js';
import { useNarrow } from '../ui.js';
import { TRIMMED_COLOR, WARN_COLOR } from './palette.js';

const M = { left: 52, right: 16, top: 30, bottom: 42 };
export const CLASS_COLORS = { mixed: TRIMMED_COLOR, conversational: WARN_COLOR } as const;
/** The paper's published class means (reduction, break-even call). */
const PAPER = [
  { key: 'mixed', reduction: 0.39, breakEven: 10 },
  { key: 'conversational', reduction: 0.17, breakEven: 40 },
  { key: 'all', reduction: 0.2, breakEven: 35 },
] as const;

/** Log-axis ticks 1, 2, 5, 10, … up to the first one at or above `max`. */
function callTicks(max: number): number[] {
  const ticks: number[] = [];
  for (let p = 1; ; p *= 10) {
    for (const m of [1, 2, 5]) {
      ticks.push(m * p);
      if (m * p >= max) return ticks;
    }
  }
}

export function BreakEvenScatter({ sessions, name, onSelect }: { sessions: SessionEconomicsRow[]; name: (file: string) => string; onSelect?: (file: string) => void }) {
  const { t, lang } = useI18n();
  const W = useNarrow() ? 360 : 640;
  const H = 300;
  const w = W - M.left - M.right;
  const never = 22; // the band above the axis for "never"
  const h = H - M.top - M.bottom - never;
  const finite = sessions.flatMap((s) => (s.breakEvenTurn === null ? [] : [s.breakEvenTurn]));
  const ticks = callTicks(Math.max(50, ...finite));
  const top = ticks[ticks.length - 1]!;
  const x = (reduction: number) => M.left + Math.min(1, Math.max(0, reduction)) * w;
  const y = (call: number | null) => (call === null ? M.top + never / 2 : M.top + never + h - (Math.log10(call) / Math.log10(top)) * h);
  const cross = (cx: number, cy: number, r = 5) => `M${cx - r},${cy - r}L${cx + r},${cy + r}M${cx - r},${cy + r}L${cx + r},${cy - r}`;
  return (
    <svg viewBox={`0 0 ${W} ${H}`} class="chart economics-chart" role="img" aria-label={t('economics.chart')} data-testid="economics-chart" data-dots={sessions.length}>
      {ticks.map((v) => (
        <g key={v}>
          <line x1={M.left} x2={W - M.right} y1={y(v)} y2={y(v)} class="grid" />
          <text x={M.left - 8} y={y(v) + 4} class="tick" text-anchor="end">
            {v}
          </text>
        </g>
      ))}
      <text x={M.left - 8} y={y(null) + 4} class="tick" text-anchor="end">
        {t('economics.never')}
      </text>
      <line x1={M.left} x2={W - M.right} y1={M.top + never} y2={M.top + never} class="axis" />
      {[0, 0.25, 0.5, 0.75, 1].map((r) => (
        <text key={r} x={x(r)} y={H - M.bottom + 16} class="tick" text-anchor="middle">
          {fmtPercent(r, lang, 0)}
        </text>
      ))}
      <line x1={M.left} x2={W - M.right} y1={M.top + never + h} y2={M.top + never + h} class="axis" />
      <text x={M.left + w / 2} y={H - 6} class="chart-label" text-anchor="middle">
        {t('economics.reductionAxis')}
      </text>
      <text x={M.left} y={14} class="chart-label">
        {t('economics.breakEvenAxis')}
      </text>
      {PAPER.map((p) => (
        <path key={p.key} d={cross(x(p.reduction), y(p.breakEven))} class="paper-mark" data-testid="paper-mark" data-class={p.key}>
          <title>{t('economics.paperMark', { cls: t(`economics.class.${p.key}` as MessageKey), reduction: fmtPercent(p.reduction, lang, 0), turn: p.breakEven })}</title>
        </path>
      ))}
      {sessions.map((s) => {
        const cx = x(s.reduction);
        const cy = y(s.breakEvenTurn);
        const label = t('economics.dot', { name: name(s.file), reduction: fmtPercent(s.reduction, lang), turn: s.breakEvenTurn ?? t('economics.never') });
        const common = {
          fill: CLASS_COLORS[s.class],
          class: 'economics-dot',
          'data-testid': 'economics-dot',
          'data-file': s.file,
          'data-reduction': s.reduction,
          'data-break-even': s.breakEvenTurn ?? 'never',
          'data-class': s.class,
          onClick: onSelect ? () => onSelect(s.file) : undefined,
        };
        return s.agent === 'codex' ? (
          <rect key={s.file} x={cx - 4.5} y={cy - 4.5} width={9} height={9} {...common}>
            <title>{label}</title>
          </rect>
        ) : (
          <circle key={s.file} cx={cx} cy={cy} r={5} {...common}>
            <title>{label}</title>
          </circle>
        );
      })}
    </svg>
  );
}
