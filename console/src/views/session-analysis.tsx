/** Token composition before/after trim and the cache-economics curve of one session or snapshot. */
import { useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { CompositionChart } from '../charts/composition.js';
import { CostCurve } from '../charts/cost-curve.js';
import { TRIMMED_COLOR, UNTRIMMED_COLOR } from '../charts/palette.js';
import { fmtInt, fmtPercent, fmtUsd } from '../format.js';
import { useI18n } from '../i18n.js';
import { Card, ErrorNote, Loading, useLoad } from '../ui.js';

export function AnalysisPanel({ api, sessionRef }: { api: Api; sessionRef: string }) {
  const { t, lang } = useI18n();
  const analysis = useLoad(() => api.analysis(sessionRef), [api, sessionRef]);
  // four scenarios: cache lifetime × whether the untrimmed session's cache is still warm
  const [ttl, setTtl] = useState<'5m' | '1h'>('5m');
  const [warm, setWarm] = useState(true);
  const a = analysis.data;
  const scenarios = a?.cache.scenarios ?? [];
  const scenario = scenarios.find((s) => s.ttl === ttl && s.untrimmedCacheWarm === warm) ?? scenarios.find((s) => s.ttl === ttl) ?? scenarios[0];
  const ttls = [...new Set(scenarios.map((s) => s.ttl))];
  return (
    <div class="grid grid-analysis" data-testid="analysis" data-ref={sessionRef} data-ready={a ? 'true' : 'false'} data-scenario={scenario ? `${scenario.ttl}-${scenario.untrimmedCacheWarm ? 'warm' : 'cold'}` : ''}>
      <Card title={t('composition.title')} testid="composition-card">
        <p class="subtle mono" title={sessionRef}>
          {sessionRef}
        </p>
        {analysis.error !== undefined && <ErrorNote error={analysis.error} onRetry={analysis.reload} />}
        {analysis.loading && !a && <Loading />}
        {a && (
          <>
            <CompositionChart before={{ tokens: a.tokens, breakdown: a.breakdown }} after={a.trimmed} reduction={a.trimmed.reduction} />
            <p class="subtle">
              {t('composition.summary', { messages: fmtInt(a.messages, lang), tokenizer: a.tokenizer })}
            </p>
          </>
        )}
      </Card>
      <Card
        title={t('cost.title')}
        testid="cost-card"
        actions={
          scenario && (
            <>
              <div class="segmented" role="group" aria-label={t('cost.ttl')}>
                {ttls.map((v) => (
                  <button key={v} type="button" class={v === scenario.ttl ? 'on' : ''} aria-pressed={v === scenario.ttl} onClick={() => setTtl(v)} data-testid={`ttl-${v}`}>
                    {t('cost.ttlOption', { ttl: v })}
                  </button>
                ))}
              </div>
              <div class="segmented" role="group" aria-label={t('cost.untrimmedCache')}>
                {[true, false].map((v) => (
                  <button key={String(v)} type="button" class={v === scenario.untrimmedCacheWarm ? 'on' : ''} aria-pressed={v === scenario.untrimmedCacheWarm} onClick={() => setWarm(v)} data-testid={v ? 'cache-warm' : 'cache-cold'}>
                    {t(v ? 'cost.warmOption' : 'cost.coldOption')}
                  </button>
                ))}
              </div>
            </>
          )
        }
      >
        {analysis.loading && !a && <Loading />}
        {a && scenario && (
          <>
            <div class="chart-legend">
              <span>
                <span class="line-key" style={{ background: UNTRIMMED_COLOR }} />
                {t('cost.untrimmed')} <b>{fmtUsd(scenario.cumulativeUsd.untrimmed.at(-1) ?? 0)}</b>
              </span>
              <span>
                <span class="line-key" style={{ background: TRIMMED_COLOR }} />
                {t('cost.trimmed')} <b>{fmtUsd(scenario.cumulativeUsd.trimmed.at(-1) ?? 0)}</b>
              </span>
            </div>
            <CostCurve scenario={scenario} />
            <dl class="facts">
              <div>
                <dt>{t('cost.model')}</dt>
                <dd>
                  {a.cache.model}
                  {!a.cache.priced && <span class="badge warn">{t('cost.unpriced')}</span>}
                </dd>
              </div>
              <div>
                <dt>{t('cost.coldStart')}</dt>
                <dd data-testid="cold-start" data-value={scenario.coldStartCostUsd}>
                  {scenario.coldStartCostUsd >= 0 ? fmtUsd(scenario.coldStartCostUsd) : t('cost.coldStartNone', { usd: fmtUsd(-scenario.coldStartCostUsd) })}
                </dd>
              </div>
              <div>
                <dt>{t('cost.perTurn')}</dt>
                <dd data-testid="per-turn-saving" data-value={scenario.perTurnSavingUsd}>
                  {fmtUsd(scenario.perTurnSavingUsd)}
                </dd>
              </div>
              <div>
                <dt>{t('cost.hitRate')}</dt>
                <dd>
                  {fmtPercent(scenario.hitRate.untrimmed, lang)} → {fmtPercent(scenario.hitRate.trimmed, lang)}
                </dd>
              </div>
            </dl>
            <p class="subtle">{t(scenario.untrimmedCacheWarm ? 'cost.warm' : 'cost.cold')}</p>
          </>
        )}
      </Card>
    </div>
  );
}
