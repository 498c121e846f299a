/**
 * Horizontal bars drawn in SVG inside an HTML grid (label | bar | number), so labels wrap and the
 * bar stretches on any width. `Meter` is one track with a fill and an optional quota mark.
 */
import type { ComponentChildren } from 'preact';

export interface MeterProps {
  /** The filled length, in the same unit as `scale`. */
  value: number;
  /** The length of the whole drawing area. */
  scale: number;
  /** Draws a track up to here (a quota); the fill turns red past it. */
  limit?: number;
  color?: string;
  height?: number;
}

export function Meter({ value, scale, limit, color, height = 14 }: MeterProps) {
  const pct = (v: number) => (scale > 0 ? Math.min(100, Math.max(0, (v / scale) * 100)) : 0);
  const over = limit !== undefined && value > limit;
  return (
    <svg class="meter" viewBox="0 0 100 10" preserveAspectRatio="none" style={{ height: `${height}px` }} aria-hidden="true">
      <rect x={0} y={0} width={limit !== undefined ? pct(limit) : 100} height={10} class="meter-track" />
      <rect x={0} y={0} width={pct(value)} height={10} class={over ? 'meter-fill over' : 'meter-fill'} style={color ? { fill: color } : undefined} />
      {limit !== undefined && <line x1={pct(limit)} x2={pct(limit)} y1={0} y2={10} class="meter-limit" vector-effect="non-scaling-stroke" />}
    </svg>
  );
}

export interface BarRow {
  key: string;
  label: ComponentChildren;
  value: number;
  /** The number shown at the end of the row. */
  display: ComponentChildren;
  limit?: number;
  color?: string;
  /** Extra attributes for tests (`data-testid`, `data-value`, …). */
  attrs?: Record<string, string | number>;
}

/** Rows of meters on one shared scale: `scale`, or the largest value or limit. */
export function BarList({ rows, testid, scale: given }: { rows: BarRow[]; testid?: string; scale?: number }) {
  const scale = Math.max(1e-9, given ?? 0, ...rows.map((r) => Math.max(r.value, r.limit ?? 0)));
  return (
    <div class="bar-list" data-testid={testid}>
      {rows.map((r) => (
        <div class="bar-row" key={r.key} {...r.attrs}>
          <span class="bar-label">{r.label}</span>
          <Meter value={r.value} scale={scale} {...(r.limit !== undefined ? { limit: r.limit } : {})} {...(r.color ? { color: r.color } : {})} />
          <span class="bar-value">{r.display}</span>
        </div>
      ))}
    </div>
  );
}
