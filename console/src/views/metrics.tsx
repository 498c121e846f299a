/**
 * Metrics view (admin): processMessage stage latencies (p50/p95/p99), token savings, hot-tier
 * and rebuild-cache hit rates, extractions by intent and requests by route — the numbers
 * `/metrics` exports, read as JSON from `/v1/metrics`.
 */
import type { Api } from '../api.js';
import { STAGES, type MetricsSnapshot } from '../api-types.js';
import { BarList } from '../charts/bars.js';
import { Gauge } from '../charts/gauge.js';
import { GOOD_COLOR, TRIMMED_COLOR, UNTRIMMED_COLOR } from '../charts/palette.js';
import { fmtInt, fmtMs, fmtPercent } from '../format.js';
import { useI18n } from '../i18n.js';
import { Card, Empty, ErrorNote, Loading, useLoad } from '../ui.js';

const PERCENTILES = [
  ['p50Ms', 'p50', '#8fb3e8'],
  ['p95Ms', 'p95', '#4a86d9'],
  ['p99Ms', 'p99', '#1f4f99'],
] as const;

export function MetricsView({ api }: { api: Api }) {
  const { t } = useI18n();
  const metrics = useLoad(() => api.metrics(), [api]);
  return (
    <div class="view metrics-view">
      <div class="view-bar">
        <span class="subtle">{t('metrics.about')}</span>
        <button type="button" class="btn small" onClick={metrics.reload} data-testid="metrics-refresh">
          {t('common.refresh')}
        </button>
      </div>
      {metrics.error !== undefined && <ErrorNote error={metrics.error} onRetry={metrics.reload} />}
      {metrics.loading && !metrics.data && <Loading />}
      {metrics.data && <MetricsBody m={metrics.data} />}
    </div>
  );
}

function MetricsBody({ m }: { m: MetricsSnapshot }) {
  const { t, tOr, lang } = useI18n();
  const stages = [...STAGES.filter((s) => m.stages[s]), ...Object.keys(m.stages).filter((s) => !(STAGES as readonly string[]).includes(s))];
  const scale = Math.max(0, ...stages.map((s) => m.stages[s]!.p99Ms ?? 0));
  const intents = Object.entries(m.extractions).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const routes = Object.entries(m.requests.byRoute).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const rebuildReads = m.rebuildCache.hit + m.rebuildCache.miss;
  return (
    <div class="grid grid-metrics" data-testid="metrics">
      <Card title={t('metrics.latency')} testid="latency-card" class="span-2">
        {stages.length === 0 || stages.every((s) => m.stages[s]!.count === 0) ? (
          <Empty>{t('metrics.noMessages')}</Empty>
        ) : (
          <>
            <div class="chart-legend">
              {PERCENTILES.map(([, label, color]) => (
                <span key={label}>
                  <span class="line-key" style={{ background: color }} />
                  {label}
                </span>
              ))}
            </div>
            <div class="latency">
              {stages.map((s) => {
                const st = m.stages[s]!;
                return (
                  <div class="latency-stage" key={s} data-testid={`stage-${s}`} data-count={st.count}>
                    <h4>
                      {tOr(`stage.${s}`, s)} <span class="subtle">{t('metrics.calls', { n: st.count })}</span>
                    </h4>
                    <BarList
                      scale={scale}
                      rows={PERCENTILES.map(([field, label, color]) => ({
                        key: label,
                        label,
                        value: st[field] ?? 0,
                        color,
                        display: st[field] === null ? '—' : fmtMs(st[field]),
                        attrs: { 'data-testid': `latency-${s}-${label}`, 'data-value': st[field] ?? 'null' },
                      }))}
                    />
                  </div>
                );
              })}
            </div>
          </>
        )}
      </Card>
      <Card title={t('metrics.tokens')} testid="tokens-card">
        <p class={m.tokens.savingsRatio < 0 ? 'big-number negative' : 'big-number'} data-testid="savings-ratio" data-value={m.tokens.savingsRatio}>
          {fmtPercent(m.tokens.savingsRatio, lang)}
        </p>
        <p class="subtle para">{t('metrics.savingsExplained')}</p>
        <BarList
          rows={[
            { key: 'context', label: t('metrics.contextTokens'), value: m.tokens.context, color: TRIMMED_COLOR, display: fmtInt(m.tokens.context, lang), attrs: { 'data-testid': 'tokens-context', 'data-value': m.tokens.context } },
            { key: 'full', label: t('metrics.fullHistoryTokens'), value: m.tokens.fullHistory, color: UNTRIMMED_COLOR, display: fmtInt(m.tokens.fullHistory, lang), attrs: { 'data-testid': 'tokens-full', 'data-value': m.tokens.fullHistory } },
          ]}
        />
      </Card>
      <Card title={t('metrics.hotCache')} testid="hot-cache-card">
        {m.hotCache ? (
          <>
            <Gauge ratio={m.hotCache.hitRatio} label={t('metrics.hitRate')} testid="hot-hit-rate" />
            <p class="center subtle" data-testid="hot-counts" data-hits={m.hotCache.hits} data-misses={m.hotCache.misses}>
              {t('metrics.hitsMisses', { hits: fmtInt(m.hotCache.hits, lang), misses: fmtInt(m.hotCache.misses, lang) })}
            </p>
            {m.memoryReads ? (
              <p class="subtle para" data-testid="memory-reads" data-hits={m.memoryReads.hits} data-misses={m.memoryReads.misses}>
                {t('metrics.memoryReads', {
                  rate: fmtPercent(m.memoryReads.hitRatio, lang),
                  hits: fmtInt(m.memoryReads.hits, lang),
                  reads: fmtInt(m.memoryReads.hits + m.memoryReads.misses, lang),
                })}
              </p>
            ) : null}
          </>
        ) : (
          <Empty>{t('metrics.noHotCache')}</Empty>
        )}
        <h4 class="section-gap">{t('metrics.rebuildCache')}</h4>
        <BarList
          testid="rebuild-cache"
          rows={[
            { key: 'hit', label: t('metrics.hit'), value: m.rebuildCache.hit, color: GOOD_COLOR, display: fmtInt(m.rebuildCache.hit, lang), attrs: { 'data-testid': 'rebuild-hit', 'data-value': m.rebuildCache.hit } },
            { key: 'miss', label: t('metrics.miss'), value: m.rebuildCache.miss, color: UNTRIMMED_COLOR, display: fmtInt(m.rebuildCache.miss, lang), attrs: { 'data-testid': 'rebuild-miss', 'data-value': m.rebuildCache.miss } },
          ]}
        />
        {rebuildReads > 0 && <p class="subtle">{t('metrics.rebuildRate', { rate: fmtPercent(m.rebuildCache.hit / rebuildReads, lang) })}</p>}
        {m.refreshAhead && (
          <p class="subtle" data-testid="refresh-ahead" data-value={m.refreshAhead.rebuilds}>
            {t('metrics.refreshAhead', { rebuilds: fmtInt(m.refreshAhead.rebuilds, lang) })}
          </p>
        )}
      </Card>
      <Card title={t('metrics.extractions')} testid="extractions-card">
        {intents.length === 0 ? (
          <Empty>{t('metrics.noMessages')}</Empty>
        ) : (
          <BarList
            testid="extractions"
            rows={intents.map(([intent, n]) => ({ key: intent, label: tOr(`intent.${intent}`, intent), value: n, display: fmtInt(n, lang), attrs: { 'data-testid': `intent-${intent}`, 'data-value': n } }))}
          />
        )}
      </Card>
      <Card title={t('metrics.requests')} testid="requests-card" actions={<span class="badge" data-testid="requests-total" data-value={m.requests.total}>{fmtInt(m.requests.total, lang)}</span>}>
        <div class="table-scroll">
          <table class="data-table">
            <tbody>
              {routes.map(([route, n]) => (
                <tr key={route}>
                  <td class="mono">{route}</td>
                  <td class="num">{fmtInt(n, lang)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Card>
    </div>
  );
}
