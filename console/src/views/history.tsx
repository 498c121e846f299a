/** A record's change history (newest first), folded away under a count. */
import type { HistoryView } from '../api-types.js';
import { fmtDateTime, fmtValue } from '../format.js';
import { useI18n } from '../i18n.js';
import { useUserZone } from '../zone.js';

export function History({ entries }: { entries: HistoryView[] }) {
  const { t, tOr, lang } = useI18n();
  const zone = useUserZone();
  if (entries.length === 0) return null;
  // statuses and priorities read in the UI language; other values as stored
  const valueOf = (field: string, v: unknown) => {
    const text = fmtValue(field, v, lang, zone);
    return field === 'status' || field === 'priority' ? tOr(`${field}.${text}`, text) : text;
  };
  return (
    <details class="history" data-testid="history" data-count={entries.length}>
      <summary>{t('history.summary', { n: entries.length })}</summary>
      <ol>
        {entries.map((h) => (
          <li key={h.seq}>
            <time>{fmtDateTime(h.at, lang, zone)}</time>{' '}
            {h.field === '*' ? (
              <span>{h.newValue === null ? t('history.deleted') : t('history.created')}</span>
            ) : (
              <span>
                <b>{tOr(`field.${h.field}`, h.field)}</b> {valueOf(h.field, h.oldValue)} → {valueOf(h.field, h.newValue)}
              </span>
            )}
          </li>
        ))}
      </ol>
    </details>
  );
}
