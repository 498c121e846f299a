/** Small building blocks every view uses: cards, loading and error notes, a data loader hook. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';
import { useI18n } from './i18n.js';

export function Card({ title, actions, children, class: cls, testid }: { title?: ComponentChildren; actions?: ComponentChildren; children: ComponentChildren; class?: string; testid?: string }) {
  return (
    <section class={`card${cls ? ` ${cls}` : ''}`} data-testid={testid}>
      {(title || actions) && (
        <header class="card-head">
          {title && <h2>{title}</h2>}
          {actions && <div class="card-actions">{actions}</div>}
        </header>
      )}
      {children}
    </section>
  );
}

export function Loading() {
  const { t } = useI18n();
  return (
    <p class="note loading" role="status">
      <span class="spinner" aria-hidden="true" />
      {t('common.loading')}
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="note empty">{children}</p>;
}

export function ErrorNote({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const { t } = useI18n();
  const e = error instanceof ApiError ? error : null;
  const text = e?.status === 403 ? t('error.forbidden') : e?.status === 0 ? t('error.network') : error instanceof Error ? error.message : String(error);
  return (
    <div class="note error" role="alert" data-testid="error">
      <span>
        {e && e.status > 0 ? `${e.status} ${e.code}: ` : ''}
        {text}
      </span>
      {onRetry && (
        <button type="button" class="btn small" onClick={onRetry}>
          {t('common.retry')}
        </button>
      )}
    </div>
  );
}

/** Whether the window is phone-narrow (≤ 600 px); charts draw fewer, larger marks then. */
export function useNarrow(): boolean {
  const query = '(max-width: 600px)';
  const [narrow, setNarrow] = useState(() => matchMedia(query).matches);
  useEffect(() => {
    const list = matchMedia(query);
    const onChange = () => setNarrow(list.matches);
    list.addEventListener('change', onChange);
    return () => list.removeEventListener('change', onChange);
  }, []);
  return narrow;
}

/** Loads `load()` when `deps` change; `reload()` runs it again. Answers to superseded calls are dropped. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: unknown; loading: boolean; reload: () => void } {
  // a new object whenever the deps change, during render: data loaded for other deps is never
  // shown, not even in the render before the effect below starts the new load
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const key = useMemo(() => ({}), deps);
  const [state, setState] = useState<{ key: object | undefined; data: T | undefined; error: unknown; loading: boolean }>({ key: undefined, data: undefined, error: undefined, loading: true });
  const generation = useRef(0);
  // new deps clear the old data; reload() keeps it on screen until the new answer arrives
  const run = useCallback((keep: boolean) => {
    const mine = ++generation.current;
    setState((s) => ({ key, data: keep ? s.data : undefined, loading: true, error: undefined }));
    load().then(
      (data) => mine === generation.current && setState({ key, data, error: undefined, loading: false }),
      (error: unknown) => mine === generation.current && setState((s) => ({ key, data: s.data, error, loading: false })),
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  useEffect(() => run(false), [run]);
  const current = state.key === key;
  return { data: current ? state.data : undefined, error: current ? state.error : undefined, loading: current ? state.loading : true, reload: () => run(true) };
}
