/**
 * The CMV paper's economics table for the sessions listed (`GET /v1/sessions/economics`, the same
 * numbers as `ctxvm session economics --json`): per class and overall, and a chart of break-even
 * call against reduction with one dot per session; a dot selects its session.
 */
import { useState } from 'preact/hooks';
import type { Api } from '../api.js';
import type { EconomicsGroup } from '../api-types.js';
import { BreakEvenScatter, CLASS_COLORS } from '../charts/break-even-scatter.js';
import { fmtInt, fmtPercent } from '../format.js';
import { useI18n, type MessageKey } from '../i18n.js';
import { Card, Empty, ErrorNote, Loading, useLoad } from '../ui.js';

const GROUPS = ['all', 'mixed', 'conversational'] as const;

export function EconomicsPanel({ api, name, onSelect }: { api: Api; name: (file: string) => string; onSelect?: (file: string) => void }) {
  const { t, lang } = useI18n();
  const [ttl, setTtl] = useState<'5m' | '1h'>('5m');
  const eco = useLoad(() => api.economics(ttl), [api, ttl]);
  const e = eco.data;
  const mean = (v: number | null) => (v === null ? '—' : v.toLocaleString(lang, { maximumFractionDigits: 1 }));
  const row = (key: (typeof GROUPS)[number], g: EconomicsGroup) => (
    <tr key={key} data-testid={`economics-row-${key}`} data-n={g.n} data-reduction-mean={g.reductionMean} data-reduction-peak={g.reductionPeak} data-break-even-mean={g.breakEvenMean ?? 'none'} data-context-mean={g.contextMean}>
      <th scope="row">
        {key !== 'all' && <span class="swatch" style={{ background: CLASS_COLORS[key] }} />}
        {t(`economics.class.${key}` as MessageKey)}
      </th>
      <td class="num">{fmtInt(g.n, lang)}</td>
      <td class="num">{g.n ? fmtPercent(g.reductionMean, lang) : '—'}</td>
      <td class="num">{g.n ? fmtPercent(g.reductionPeak, lang) : '—'}</td>
      <td class="num">
        {mean(g.breakEvenMean)}
        {g.neverBreakEven > 0 && <span class="subtle"> {t('economics.neverCount', { n: g.neverBreakEven })}</span>}
      </td>
      <td class="num">{g.n ? fmtInt(g.contextMean, lang) : '—'}</td>
      <td class="num">{g.n ? `${fmtPercent(g.over30.share, lang, 0)} (${fmtInt(g.over30.n, lang)})` : '—'}</td>
      <td class="num">{mean(g.over30.breakEvenMean)}</td>
    </tr>
  );
  return (
    <Card
      title={t('economics.title')}
      testid="economics-card"
      actions={
        <div class="segmented" role="group" aria-label={t('cost.ttl')}>
          {(['5m', '1h'] as const).map((v) => (
            <button key={v} type="button" class={v === ttl ? 'on' : ''} aria-pressed={v === ttl} onClick={() => setTtl(v)} data-testid={`economics-ttl-${v}`}>
              {t('cost.ttlOption', { ttl: v })}
            </button>
          ))}
        </div>
      }
    >
      <div data-testid="economics" data-ready={e && !eco.loading ? 'true' : 'false'} data-ttl={e?.ttl ?? ''}>
        {eco.error !== undefined && <ErrorNote error={eco.error} onRetry={eco.reload} />}
        {eco.loading && !e && (
          <>
            <Loading />
            <p class="subtle">{t('economics.computing')}</p>
          </>
        )}
        {e && e.sessions.length === 0 && <Empty>{t('economics.none')}</Empty>}
        {e && e.sessions.length > 0 && (
          <>
            <div class="table-scroll">
              <table class="data-table economics-table">
                <thead>
                  <tr>
                    <th>{t('economics.sessions')}</th>
                    <th class="num">n</th>
                    <th class="num">{t('economics.reductionMean')}</th>
                    <th class="num">{t('economics.reductionPeak')}</th>
                    <th class="num">{t('economics.breakEvenMean')}</th>
                    <th class="num">{t('economics.contextMean')}</th>
                    <th class="num">{t('economics.over30')}</th>
                    <th class="num">{t('economics.over30BreakEven')}</th>
                  </tr>
                </thead>
                <tbody>{GROUPS.map((k) => row(k, e.groups[k]))}</tbody>
              </table>
            </div>
            <div class="grid grid-economics">
              <div>
                <p class="subtle">{t('economics.definitions', { ttl: e.ttl })}</p>
                <p class="subtle">{t('economics.paper')}</p>
                {e.skipped.length > 0 && (
                  <details class="subtle" data-testid="economics-skipped" data-n={e.skipped.length}>
                    <summary>{t('economics.skipped', { n: e.skipped.length })}</summary>
                    <ul>
                      {e.skipped.map((s) => (
                        <li key={s.file}>
                          <span class="mono">{name(s.file)}</span>: {s.reason}
                        </li>
                      ))}
                    </ul>
                  </details>
                )}
              </div>
              <div>
                <div class="chart-legend">
                  <span>
                    <span class="swatch" style={{ background: CLASS_COLORS.mixed }} />
                    {t('economics.class.mixed')}
                  </span>
                  <span>
                    <span class="swatch" style={{ background: CLASS_COLORS.conversational }} />
                    {t('economics.class.conversational')}
                  </span>
                  <span>{t('economics.shapes')}</span>
                  <span>✕ {t('economics.paperKey')}</span>
                </div>
                <BreakEvenScatter sessions={e.sessions} name={name} {...(onSelect ? { onSelect } : {})} />
              </div>
            </div>
          </>
        )}
      </div>
    </Card>
  );
}
