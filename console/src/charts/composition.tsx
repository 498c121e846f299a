/**
 * A session's token composition before and after trim: two stacked columns on one scale, and a
 * legend table with every category's exact numbers (`data-before` / `data-after`).
 */
import { TOKEN_CATEGORIES, type TokenCategory } from '../api-types.js';
import { fmtInt, fmtPercent } from '../format.js';
import { useI18n } from '../i18n.js';
import { CATEGORY_COLORS } from './palette.js';

export interface CompositionProps {
  before: { tokens: number; breakdown: Record<TokenCategory, number> };
  after: { tokens: number; breakdown: Record<TokenCategory, number> };
  /** 0..1, share removed by trimming. */
  reduction: number;
}

const W = 260;
const H = 250;
const TOP = 28;
const BOTTOM = 36;
const BAR_W = 72;

export function CompositionChart({ before, after, reduction }: CompositionProps) {
  const { t, lang } = useI18n();
  const max = Math.max(before.tokens, after.tokens, 1);
  const scale = (H - TOP - BOTTOM) / max;
  const column = (which: 'before' | 'after', x: number) => {
    const data = which === 'before' ? before : after;
    let y = H - BOTTOM;
    const segments = TOKEN_CATEGORIES.filter((c) => data.breakdown[c] > 0).map((c) => {
      const h = data.breakdown[c] * scale;
      y -= h;
      return (
        <rect key={c} x={x} y={y} width={BAR_W} height={Math.max(h, 0.5)} fill={CATEGORY_COLORS[c]} data-testid={`segment-${which}-${c}`} data-value={data.breakdown[c]}>
          <title>{`${t(`cat.${c}`)}: ${fmtInt(data.breakdown[c], lang)}`}</title>
        </rect>
      );
    });
    const topY = H - BOTTOM - data.tokens * scale;
    return (
      <g>
        {segments}
        <text x={x + BAR_W / 2} y={topY - 8} class="chart-value" text-anchor="middle" data-testid={`total-${which}`} data-value={data.tokens}>
          {fmtInt(data.tokens, lang)}
        </text>
        <text x={x + BAR_W / 2} y={H - BOTTOM + 20} class="chart-label" text-anchor="middle">
          {t(which === 'before' ? 'composition.before' : 'composition.after')}
        </text>
      </g>
    );
  };
  return (
    <div class="composition" data-testid="composition">
      <svg viewBox={`0 0 ${W} ${H}`} class="chart composition-chart" role="img" aria-label={t('composition.title')}>
        <line x1={16} x2={W - 16} y1={H - BOTTOM} y2={H - BOTTOM} class="axis" />
        {column('before', 24)}
        {column('after', W - 24 - BAR_W)}
        <path d={`M${24 + BAR_W + 12},${H - BOTTOM - 40} L${W - 24 - BAR_W - 12},${H - BOTTOM - 40}`} class="composition-arrow" marker-end="url(#composition-arrow)" />
        <defs>
          <marker id="composition-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto">
            <path d="M0,0 L10,5 L0,10 z" fill="#8795a8" />
          </marker>
        </defs>
        <text x={W / 2} y={H - BOTTOM - 50} class={reduction >= 0 ? 'chart-note' : 'chart-note worse'} text-anchor="middle" data-testid="reduction" data-value={reduction}>
          {reduction > 0 ? '−' : reduction < 0 ? '+' : '±'}
          {fmtPercent(Math.abs(reduction), lang)}
        </text>
      </svg>
      <table class="legend-table">
        <thead>
          <tr>
            <th>{t('composition.category')}</th>
            <th class="num">{t('composition.before')}</th>
            <th class="num">{t('composition.after')}</th>
          </tr>
        </thead>
        <tbody>
          {TOKEN_CATEGORIES.map((c) => (
            <tr key={c} data-testid={`legend-${c}`} data-before={before.breakdown[c]} data-after={after.breakdown[c]}>
              <td>
                <span class="swatch" style={{ background: CATEGORY_COLORS[c] }} />
                {t(`cat.${c}`)}
              </td>
              <td class="num">{fmtInt(before.breakdown[c], lang)}</td>
              <td class="num">{fmtInt(after.breakdown[c], lang)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <td>{t('composition.total')}</td>
            <td class="num">{fmtInt(before.tokens, lang)}</td>
            <td class="num">{fmtInt(after.tokens, lang)}</td>
          </tr>
        </tfoot>
      </table>
    </div>
  );
}
