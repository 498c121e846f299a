import { describe, expect, it } from 'vitest';
import { createRegistry } from './prometheus.js';

describe('Prometheus registry', () => {
  it('renders counters, collected gauges and cumulative histograms in the text format', () => {
    const r = createRegistry();
    const c = r.counter('jobs_total', 'Jobs.');
    c.inc({ kind: 'a"b' });
    c.inc({ kind: 'a"b' }, 2);
    r.collected('ratio', 'A ratio.', 'gauge', () => [{ value: 0.5 }]);
    const h = r.histogram('latency_seconds', 'Latency.', [0.1, 1]);
    h.observe(0.05, { stage: 'x' });
    h.observe(0.5, { stage: 'x' });
    h.observe(5, { stage: 'x' });
    expect(r.render()).toBe(
      [
        '# HELP jobs_total Jobs.',
        '# TYPE jobs_total counter',
        'jobs_total{kind="a\\"b"} 3',
        '# HELP ratio A ratio.',
        '# TYPE ratio gauge',
        'ratio 0.5',
        '# HELP latency_seconds Latency.',
        '# TYPE latency_seconds histogram',
        'latency_seconds_bucket{stage="x",le="0.1"} 1',
        'latency_seconds_bucket{stage="x",le="1"} 2',
        'latency_seconds_bucket{stage="x",le="+Inf"} 3',
        'latency_seconds_sum{stage="x"} 5.55',
        'latency_seconds_count{stage="x"} 3',
        '',
      ].join('\n'),
    );
  });
});
