/** A half-circle gauge for a ratio (hit rates), the percentage written in its middle. */
import { fmtPercent } from '../format.js';
import { useI18n } from '../i18n.js';
import { BAD_COLOR, GOOD_COLOR, WARN_COLOR } from './palette.js';

const R = 70;
const CX = 90;
const CY = 86;

function arc(fraction: number): string {
  const angle = Math.PI * (1 - Math.min(1, Math.max(0, fraction)));
  const x = CX + R * Math.cos(angle);
  const y = CY - R * Math.sin(angle);
  return `M${CX - R},${CY} A${R},${R} 0 0 1 ${x.toFixed(2)},${y.toFixed(2)}`;
}

export function Gauge({ ratio, label, testid }: { ratio: number; label: string; testid: string }) {
  const { lang } = useI18n();
  const color = ratio >= 0.8 ? GOOD_COLOR : ratio >= 0.5 ? WARN_COLOR : BAD_COLOR;
  return (
    <svg viewBox="0 0 180 104" class="chart gauge" role="img" aria-label={`${label} ${fmtPercent(ratio, lang)}`} data-testid={testid} data-value={ratio}>
      <path d={arc(1)} class="gauge-track" />
      {ratio > 0 && <path d={arc(ratio)} class="gauge-fill" style={{ stroke: color }} />}
      <text x={CX} y={CY - 8} text-anchor="middle" class="gauge-value">
        {fmtPercent(ratio, lang)}
      </text>
      <text x={CX} y={CY + 14} text-anchor="middle" class="chart-label">
        {label}
      </text>
    </svg>
  );
}
