/**
 * Context preview: a question and a budget → the six layers with their tokens against their
 * quotas, what was dropped and why, and the rendered prompt with its cache-stable prefix marked.
 */
import { useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { LAYER_NAMES, type ContextPreview as Preview } from '../api-types.js';
import { BarList, Meter } from '../charts/bars.js';
import { fmtInt, fmtPercent } from '../format.js';
import { useI18n } from '../i18n.js';
import { Card, ErrorNote } from '../ui.js';

const DEFAULT_BUDGET = 2000;

export function ContextPreviewPanel({ api, user }: { api: Api; user: string }) {
  const { t, tOr, lang } = useI18n();
  const [query, setQuery] = useState('');
  const [budget, setBudget] = useState(String(DEFAULT_BUDGET));
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ preview?: Preview; error?: unknown } | null>(null);

  const submit = async (ev: Event) => {
    ev.preventDefault();
    setBusy(true);
    try {
      const b = Number.parseInt(budget, 10);
      setResult({ preview: await api.context(user, query.trim(), Number.isFinite(b) && b > 0 ? b : undefined) });
    } catch (error) {
      setResult({ error });
    } finally {
      setBusy(false);
    }
  };

  const p = result?.preview;
  const layers = p ? [...p.layers].sort((a, b) => LAYER_NAMES.indexOf(a.name as never) - LAYER_NAMES.indexOf(b.name as never)) : [];
  return (
    <Card title={t('context.title')} testid="context-preview" class="context-card">
      <form class="context-form" onSubmit={submit}>
        <label class="grow">
          {t('context.question')}
          <input value={query} onInput={(e) => setQuery(e.currentTarget.value)} placeholder={t('context.placeholder')} required data-testid="context-query" />
        </label>
        <label class="budget">
          {t('context.budget')}
          <input type="number" min={1} step={1} value={budget} onInput={(e) => setBudget(e.currentTarget.value)} data-testid="context-budget" />
        </label>
        <button type="submit" class="btn primary" disabled={busy || !query.trim()} data-testid="context-button">
          {busy ? t('common.working') : t('context.build')}
        </button>
      </form>
      {result?.error !== undefined && <ErrorNote error={result.error} />}
      {p && (
        <div class="context-result" data-testid="context-result" data-tokens={p.tokens} data-budget={p.budgetTokens} data-stable-chars={p.stablePrefixChars}>
          <div class="context-total">
            <span>
              {t('context.total')}{' '}
              <b data-testid="context-total">
                {fmtInt(p.tokens, lang)} / {fmtInt(p.budgetTokens, lang)}
              </b>{' '}
              <span class="subtle">({fmtPercent(p.budgetTokens ? p.tokens / p.budgetTokens : 0, lang)})</span>
            </span>
            <Meter value={p.tokens} scale={p.budgetTokens} height={18} />
          </div>
          <h3>{t('context.layers')}</h3>
          <BarList
            testid="context-layers"
            rows={layers.map((l) => ({
              key: l.name,
              label: (
                <>
                  {tOr(`layer.${l.name}`, l.name)} <span class="subtle">· {t('context.items', { n: l.items.length })}</span>
                </>
              ),
              value: l.tokens,
              limit: l.budgetTokens,
              display: `${fmtInt(l.tokens, lang)} / ${fmtInt(l.budgetTokens, lang)}`,
              attrs: { 'data-testid': `layer-${l.name}`, 'data-tokens': l.tokens, 'data-budget': l.budgetTokens },
            }))}
          />
          <h3>
            {t('context.dropped')} <span class="badge">{fmtInt(p.dropped.length, lang)}</span>
          </h3>
          {p.dropped.length === 0 ? (
            <p class="note empty" data-testid="dropped-none">
              {t('context.noneDropped')}
            </p>
          ) : (
            <div class="table-scroll">
              <table class="data-table" data-testid="dropped">
                <thead>
                  <tr>
                    <th>{t('context.layer')}</th>
                    <th>{t('context.kind')}</th>
                    <th>{t('context.reason')}</th>
                    <th class="num">{t('context.tokens')}</th>
                  </tr>
                </thead>
                <tbody>
                  {p.dropped.map((d) => (
                    <tr key={`${d.layer}:${d.id}`} title={d.id} data-testid="dropped-item" data-reason={d.reason}>
                      <td>{tOr(`layer.${d.layer}`, d.layer)}</td>
                      <td>{tOr(`kind.${d.kind}`, d.kind)}</td>
                      <td>{tOr(`reason.${d.reason}`, d.reason)}</td>
                      <td class="num">{fmtInt(d.tokens, lang)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <h3>{t('context.prompt')}</h3>
          <p class="subtle" data-testid="stable-prefix" data-value={p.stablePrefixChars}>
            <span class="stable-key" /> {t('context.stable', { n: p.stablePrefixChars, total: p.text.length })}
            {p.clock && (
              <span data-testid="context-zone" data-value={p.clock.timeZone}>
                {' · '}
                {t('memory.zone', { zone: p.clock.timeZone })}
              </span>
            )}
          </p>
          <pre class="prompt" data-testid="context-text">
            <mark class="stable" data-testid="stable-text">
              {p.text.slice(0, p.stablePrefixChars)}
            </mark>
            {p.text.slice(p.stablePrefixChars)}
          </pre>
        </div>
      )}
    </Card>
  );
}
