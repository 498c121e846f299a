/** Projects, decisions, facts and preferences, each record with its history. */
import type { ComponentChildren } from 'preact';
import type { HistoryView, UserMemory } from '../api-types.js';
import { fmtDateTime, fmtInt } from '../format.js';
import { useI18n, type MessageKey } from '../i18n.js';
import { Card } from '../ui.js';
import { useUserZone } from '../zone.js';
import { History } from './history.js';

interface Row {
  id: string;
  main: ComponentChildren;
  sub?: ComponentChildren;
  at: string;
  history: HistoryView[];
}

function RecordList({ title, rows, kind }: { title: MessageKey; rows: Row[]; kind: string }) {
  const { t, lang } = useI18n();
  const zone = useUserZone();
  return (
    <Card title={t(title)} testid={`records-${kind}`} actions={<span class="badge">{fmtInt(rows.length, lang)}</span>}>
      {rows.length === 0 ? (
        <p class="note empty">{t('records.none')}</p>
      ) : (
        <ul class="records">
          {rows.map((r) => (
            <li key={r.id} data-testid="record" data-id={r.id}>
              <p class="record-main">{r.main}</p>
              {r.sub && <p class="subtle">{r.sub}</p>}
              <p class="subtle">
                <time>{fmtDateTime(r.at, lang, zone)}</time>
              </p>
              <History entries={r.history} />
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}

export function Records({ memory }: { memory: UserMemory }) {
  const factRows = (facts: UserMemory['facts']): Row[] =>
    facts.map((f) => {
      const text = f.text ?? f.value ?? '';
      return { id: f.id, main: f.key ? <><b>{f.key}</b>: {text}</> : text, at: f.updatedAt, history: f.history };
    });
  return (
    <div class="grid grid-records">
      <RecordList title="records.projects" kind="projects" rows={memory.projects.map((p) => ({ id: p.id, main: p.name, ...(p.status ? { sub: p.status } : {}), at: p.updatedAt, history: p.history }))} />
      <RecordList title="records.decisions" kind="decisions" rows={memory.decisions.map((d) => ({ id: d.id, main: d.text, ...(d.rationale ? { sub: d.rationale } : {}), at: d.createdAt, history: d.history }))} />
      <RecordList title="records.facts" kind="facts" rows={factRows(memory.facts)} />
      <RecordList title="records.preferences" kind="preferences" rows={factRows(memory.preferences)} />
    </div>
  );
}
