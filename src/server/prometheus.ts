/**
 * A minimal Prometheus text-format (0.0.4) registry: counters, gauges computed at scrape time,
 * and histograms with fixed buckets. Just what `/metrics` needs, without a dependency.
 */

/** Label names and values of one series. */
export type Labels = Readonly<Record<string, string>>;

interface Metric {
  render(): string;
}

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

function labelText(labels: Labels, extra?: [string, string]): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  if (extra) parts.push(`${extra[0]}="${escapeLabel(extra[1])}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

function formatValue(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(n);
}

// A stable key for a label set (insertion order of the caller's object does not matter).
function seriesKey(labels: Labels): string {
  return JSON.stringify(Object.keys(labels).sort().map((k) => [k, labels[k]]));
}

/** A monotonically increasing count per label set. */
export interface Counter {
  inc(labels?: Labels, by?: number): void;
  /** Current value of one series (0 when never incremented). */
  get(labels?: Labels): number;
  /** Every series and its value. */
  series(): { labels: Labels; value: number }[];
}

/** One series of a histogram as read back: per-bucket (not cumulative) counts. */
export interface HistogramSeries {
  labels: Labels;
  /** Upper bounds, ascending (without +Inf). */
  bounds: readonly number[];
  /** Observations per bucket: `counts[i]` fell in (bounds[i-1], bounds[i]]; the last entry is the +Inf bucket. */
  counts: number[];
  sum: number;
  count: number;
}

/** A distribution of observations per label set, in cumulative buckets. */
export interface Histogram {
  observe(value: number, labels?: Labels): void;
  /** Every series, read back. */
  series(): HistogramSeries[];
}

/** Holds metrics and renders them for a scrape. */
export interface Registry {
  counter(name: string, help: string): Counter;
  /** A gauge, or a counter kept elsewhere (e.g. cache stats), whose series are read at scrape time. */
  collected(name: string, help: string, type: 'gauge' | 'counter', collect: () => ReadonlyArray<{ labels?: Labels; value: number }>): void;
  /** `buckets` are upper bounds, ascending (+Inf is added). */
  histogram(name: string, help: string, buckets: readonly number[]): Histogram;
  /** The whole exposition, `text/plain; version=0.0.4`. */
  render(): string;
}

/** Content type of the exposition format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Creates an empty registry. */
export function createRegistry(): Registry {
  const metrics: Metric[] = [];
  const header = (name: string, help: string, type: string) => `# HELP ${name} ${help.replace(/\n/g, ' ')}\n# TYPE ${name} ${type}\n`;

  return {
    counter(name, help) {
      const series = new Map<string, { labels: Labels; value: number }>();
      metrics.push({
        render: () => header(name, help, 'counter') + [...series.values()].map((s) => `${name}${labelText(s.labels)} ${formatValue(s.value)}\n`).join(''),
      });
      return {
        inc(labels = {}, by = 1) {
          const key = seriesKey(labels);
          const s = series.get(key);
          if (s) s.value += by;
          else series.set(key, { labels: { ...labels }, value: by });
        },
        get: (labels = {}) => series.get(seriesKey(labels))?.value ?? 0,
        series: () => [...series.values()].map((s) => ({ labels: { ...s.labels }, value: s.value })),
      };
    },

    collected(name, help, type, collect) {
      metrics.push({
        render: () => header(name, help, type) + collect().map((s) => `${name}${labelText(s.labels ?? {})} ${formatValue(s.value)}\n`).join(''),
      });
    },

    histogram(name, help, buckets) {
      const bounds = [...buckets].sort((a, b) => a - b);
      const series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
      metrics.push({
        render: () => {
          let out = header(name, help, 'histogram');
          for (const s of series.values()) {
            let cumulative = 0;
            bounds.forEach((b, i) => {
              cumulative += s.counts[i]!;
              out += `${name}_bucket${labelText(s.labels, ['le', formatValue(b)])} ${cumulative}\n`;
            });
            out += `${name}_bucket${labelText(s.labels, ['le', '+Inf'])} ${s.count}\n`;
            out += `${name}_sum${labelText(s.labels)} ${formatValue(s.sum)}\n${name}_count${labelText(s.labels)} ${s.count}\n`;
          }
          return out;
        },
      });
      return {
        observe(value, labels = {}) {
          const key = seriesKey(labels);
          let s = series.get(key);
          if (!s) series.set(key, (s = { labels: { ...labels }, counts: bounds.map(() => 0), sum: 0, count: 0 }));
          const i = bounds.findIndex((b) => value <= b);
          if (i !== -1) s.counts[i]!++;
          s.sum += value;
          s.count++;
        },
        series: () =>
          [...series.values()].map((s) => {
            const inBounds = s.counts.reduce((a, b) => a + b, 0);
            return { labels: { ...s.labels }, bounds, counts: [...s.counts, s.count - inBounds], sum: s.sum, count: s.count };
          }),
      };
    },

    render: () => metrics.map((m) => m.render()).join(''),
  };
}
