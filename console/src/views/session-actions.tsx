/**
 * The session actions, each one API call: snapshot the selected session, branch a snapshot
 * (trimmed or not), page in a stub by its reference. The last result stays on screen.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { Api } from '../api.js';
import type { DagNode, PageInResult } from '../api-types.js';
import { fmtBytes, fmtInt, fmtPercent } from '../format.js';
import { useI18n } from '../i18n.js';
import { Card, ErrorNote } from '../ui.js';
import type { Selection } from './sessions.js';

type Outcome = { action: 'snapshot' | 'branch' | 'page-in'; body: ComponentChildren } | { action: 'snapshot' | 'branch' | 'page-in'; error: unknown };

/** A name nobody has used yet, e.g. `c64cc478-20260310-150405`. */
function stamp(prefix: string): string {
  const d = new Date();
  const p = (n: number) => String(n).padStart(2, '0');
  return `${prefix}-${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

export interface SessionActionsProps {
  api: Api;
  selection: Selection;
  snapshots: DagNode[];
  /** After a change: reload; `created` selects the new snapshot. */
  onChanged(created?: Selection): void;
}

export function SessionActions({ api, selection, snapshots, onChanged }: SessionActionsProps) {
  const { t, lang } = useI18n();
  const [busy, setBusy] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [snapName, setSnapName] = useState('');
  const [branchFrom, setBranchFrom] = useState('');
  const [branchName, setBranchName] = useState('');
  const [trim, setTrim] = useState(true);
  const [ref, setRef] = useState('');
  const source = branchFrom || (selection.kind === 'snapshot' ? selection.name : (snapshots.at(-1)?.name ?? ''));

  async function act(action: Outcome['action'], run: () => Promise<ComponentChildren>) {
    setBusy(action);
    try {
      setOutcome({ action, body: await run() });
    } catch (error) {
      setOutcome({ action, error });
    } finally {
      setBusy(null);
    }
  }

  const snapshot = (ev: Event) => {
    ev.preventDefault();
    void act('snapshot', async () => {
      const name = snapName.trim() || stamp(selection.sessionId.slice(0, 8));
      const r = await api.snapshot(selection.sessionId, name);
      setSnapName('');
      setBranchFrom(r.name);
      onChanged({ kind: 'snapshot', id: r.id, name: r.name, sessionId: r.session.id });
      return t('actions.snapshotDone', { name: r.name, files: fmtInt(r.files, lang), size: fmtBytes(r.bytes) });
    });
  };

  const branch = (ev: Event) => {
    ev.preventDefault();
    void act('branch', async () => {
      const name = branchName.trim() || stamp(`${source}-${trim ? 'trimmed' : 'full'}`);
      const r = await api.branch(source, name, trim);
      setBranchName('');
      onChanged();
      const tok = r.trimmed && r.trimmed.inputTokens !== null && r.trimmed.outputTokens !== null ? r.trimmed : null;
      return (
        <>
          <p>{t('actions.branchDone', { name: r.name, snapshot: r.snapshot.name, session: r.sessionId })}</p>
          {tok && (
            <p data-testid="branch-tokens" data-before={tok.inputTokens ?? ''} data-after={tok.outputTokens ?? ''}>
              {t('actions.branchTokens', { before: fmtInt(tok.inputTokens!, lang), after: fmtInt(tok.outputTokens!, lang), reduction: fmtPercent(tok.reduction ?? 0, lang) })}
            </p>
          )}
          <p>
            {t('actions.resume')} <code data-testid="resume-command">{r.resume}</code>
          </p>
          {r.warnings.map((w) => (
            <p class="warn" key={w}>
              {w}
            </p>
          ))}
        </>
      );
    });
  };

  const pageIn = (ev: Event) => {
    ev.preventDefault();
    void act('page-in', async () => {
      const r = await api.pageIn(ref.trim());
      return <PageInBody result={r} />;
    });
  };

  return (
    <Card title={t('actions.title')} testid="actions-card" class="actions-card">
      <div class="action-forms">
        <form class="action-form" onSubmit={snapshot} data-testid="snapshot-form">
          <h3>{t('actions.snapshot')}</h3>
          <p class="subtle mono">{selection.sessionId}</p>
          <label>
            {t('actions.name')}
            <input value={snapName} onInput={(e) => setSnapName(e.currentTarget.value)} placeholder={t('actions.autoName')} maxLength={128} data-testid="snapshot-name" />
          </label>
          <button type="submit" class="btn primary" disabled={busy !== null} data-testid="snapshot-button">
            {busy === 'snapshot' ? t('common.working') : t('actions.snapshotButton')}
          </button>
        </form>
        <form class="action-form" onSubmit={branch} data-testid="branch-form">
          <h3>{t('actions.branch')}</h3>
          <label>
            {t('actions.fromSnapshot')}
            <select value={source} onChange={(e) => setBranchFrom(e.currentTarget.value)} disabled={snapshots.length === 0} data-testid="branch-snapshot">
              {snapshots.length === 0 && <option value="">{t('actions.noSnapshots')}</option>}
              {snapshots.map((s) => (
                <option key={s.id} value={s.name}>
                  {s.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            {t('actions.name')}
            <input value={branchName} onInput={(e) => setBranchName(e.currentTarget.value)} placeholder={t('actions.autoName')} maxLength={128} data-testid="branch-name" />
          </label>
          <label class="check">
            <input type="checkbox" checked={trim} onChange={(e) => setTrim(e.currentTarget.checked)} data-testid="branch-trim" />
            {t('actions.trim')}
          </label>
          <button type="submit" class="btn primary" disabled={busy !== null || !source} data-testid="branch-button">
            {busy === 'branch' ? t('common.working') : t('actions.branchButton')}
          </button>
        </form>
        <form class="action-form" onSubmit={pageIn} data-testid="page-in-form">
          <h3>{t('actions.pageIn')}</h3>
          <label>
            {t('actions.ref')}
            <input value={ref} onInput={(e) => setRef(e.currentTarget.value)} placeholder="toolu_… / call_… / ctxvm:…" class="mono" data-testid="page-in-ref" />
          </label>
          <p class="subtle">{t('actions.refHint')}</p>
          <button type="submit" class="btn primary" disabled={busy !== null || !ref.trim()} data-testid="page-in-button">
            {busy === 'page-in' ? t('common.working') : t('actions.pageInButton')}
          </button>
        </form>
      </div>
      {outcome && (
        <div class={`action-result ${'error' in outcome ? 'failed' : 'ok'}`} data-testid="action-result" data-action={outcome.action} data-ok={'error' in outcome ? 'false' : 'true'} aria-live="polite">
          {'error' in outcome ? <ErrorNote error={outcome.error} /> : outcome.body}
        </div>
      )}
    </Card>
  );
}

function PageInBody({ result }: { result: PageInResult }) {
  const { t } = useI18n();
  const text = typeof result.content === 'string' ? result.content : JSON.stringify(result.content, null, 2);
  return (
    <>
      <p>{t('actions.pageInDone', { pointer: result.pointer, hash: result.hash.slice(0, 12), kind: result.kind })}</p>
      <pre class="payload" data-testid="page-in-content">
        {text}
      </pre>
    </>
  );
}
