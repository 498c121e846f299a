/**
 * Sessions view (admin): discovered sessions, the snapshot DAG, and for the selected session or
 * snapshot its token composition before/after trim and the cache-economics curve; actions to
 * snapshot, branch and page in.
 */
import { useState } from 'preact/hooks';
import type { Api } from '../api.js';
import type { DagNode, SessionSummary } from '../api-types.js';
import { DagGraphChart } from '../charts/dag-graph.js';
import { clip, fmtBytes, fmtDateTime, fmtInt } from '../format.js';
import { useI18n } from '../i18n.js';
import { Card, Empty, ErrorNote, Loading, useLoad } from '../ui.js';
import { AnalysisPanel } from './session-analysis.js';
import { SessionActions } from './session-actions.js';
import { EconomicsPanel } from './session-economics.js';

/** What the analysis and the actions apply to. */
export type Selection = { kind: 'session'; sessionId: string } | { kind: 'snapshot'; id: string; name: string; sessionId: string };

export function SessionsView({ api }: { api: Api }) {
  const { t, lang } = useI18n();
  const sessions = useLoad(() => api.sessions(), [api]);
  const tree = useLoad(() => api.tree(), [api]);
  const [picked, setPicked] = useState<Selection | null>(null);
  const first = sessions.data?.[0];
  const selection: Selection | null = picked ?? (first ? { kind: 'session', sessionId: first.id } : null);
  const analysisRef = selection ? (selection.kind === 'snapshot' ? `snapshot:${selection.name}` : selection.sessionId) : null;
  const selectedNodeId = selection?.kind === 'snapshot' ? selection.id : null;
  const snapshots = (tree.data?.nodes ?? []).filter((n) => n.kind === 'snapshot');

  const selectNode = (n: DagNode) => setPicked(n.kind === 'snapshot' ? { kind: 'snapshot', id: n.id, name: n.name, sessionId: n.sessionId } : { kind: 'session', sessionId: n.sessionId });
  const sessionLabel = (s: SessionSummary) => s.title ?? s.id;

  return (
    <div class="view sessions-view">
      <div class="grid grid-sessions">
        <Card title={t('sessions.title')} testid="sessions-card" actions={sessions.data && <span class="badge">{fmtInt(sessions.data.length, lang)}</span>}>
          {sessions.error !== undefined && <ErrorNote error={sessions.error} onRetry={sessions.reload} />}
          {sessions.loading && !sessions.data && <Loading />}
          {sessions.data?.length === 0 && <Empty>{t('sessions.none')}</Empty>}
          <ul class="session-list">
            {sessions.data?.map((s) => {
              const active = selection?.kind === 'session' && selection.sessionId === s.id;
              return (
                <li key={`${s.agent}:${s.id}`}>
                  <button type="button" class={`session-item${active ? ' active' : ''}`} aria-pressed={active} onClick={() => setPicked({ kind: 'session', sessionId: s.id })} data-testid="session-item" data-id={s.id}>
                    <span class="session-title">{clip(sessionLabel(s), 64)}</span>
                    <span class="session-meta">
                      <span class={`agent agent-${s.agent}`}>{s.agent}</span>
                      <span>{t('sessions.messages', { n: s.messages })}</span>
                      <span>{fmtBytes(s.bytes)}</span>
                      <span>{fmtDateTime(s.updatedAt, lang)}</span>
                    </span>
                    {s.project && <span class="session-project">{s.project}</span>}
                  </button>
                </li>
              );
            })}
          </ul>
        </Card>
        <Card title={t('dag.title')} testid="dag-card" actions={<DagLegend />}>
          {tree.error !== undefined && <ErrorNote error={tree.error} onRetry={tree.reload} />}
          {tree.loading && !tree.data && <Loading />}
          {tree.data && tree.data.nodes.length === 0 && <Empty>{t('dag.empty')}</Empty>}
          {tree.data && tree.data.nodes.length > 0 && <DagGraphChart graph={tree.data} selectedId={selectedNodeId} onSelect={selectNode} />}
        </Card>
      </div>
      {selection && (
        <SessionActions
          api={api}
          selection={selection}
          snapshots={snapshots}
          onChanged={(created) => {
            tree.reload();
            sessions.reload();
            // keep the selection put when a new (newer, so first) session appears
            setPicked(created ?? selection);
          }}
        />
      )}
      {analysisRef && <AnalysisPanel api={api} sessionRef={analysisRef} />}
      <EconomicsPanel
        api={api}
        name={(file) => {
          const s = sessions.data?.find((x) => x.path === file);
          return s ? sessionLabel(s) : (file.split('/').pop() ?? file);
        }}
        onSelect={(file) => {
          const s = sessions.data?.find((x) => x.path === file);
          if (s) setPicked({ kind: 'session', sessionId: s.id });
        }}
      />
    </div>
  );
}

function DagLegend() {
  const { t } = useI18n();
  return (
    <span class="dag-legend">
      <span class="key dag-key-snapshot">{t('dag.snapshot')}</span>
      <span class="key dag-key-branch-trimmed">{t('dag.branchTrimmed')}</span>
      <span class="key dag-key-branch-full">{t('dag.branchFull')}</span>
    </span>
  );
}
