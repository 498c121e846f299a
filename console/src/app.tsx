/**
 * The console shell: language, the API key (fragment → sessionStorage, else the sign-in form),
 * `GET /v1/whoami` to decide which views show, the header and the routed view. Any 401 from any
 * call signs out with the server's message.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, createApi } from './api.js';
import type { WhoAmI } from './api-types.js';
import { forgetKey, initialKey, saveKey } from './auth.js';
import { createI18n, detectLang, I18nContext, LANGS, rememberLang, useI18n, type Lang } from './i18n.js';
import { routeHref, useRoute, type Route } from './route.js';
import { ErrorNote, Loading, useLoad } from './ui.js';
import { MemoryView } from './views/memory.js';
import { MetricsView } from './views/metrics.js';
import { SessionsView } from './views/sessions.js';
import { SignIn } from './views/sign-in.js';

type Notice = { kind: 'rejected'; detail: string } | { kind: 'signedOut' } | null;

export function App() {
  const [lang, setLangState] = useState<Lang>(detectLang);
  const i18n = useMemo(
    () =>
      createI18n(lang, (l) => {
        rememberLang(l);
        setLangState(l);
      }),
    [lang],
  );
  useEffect(() => {
    document.documentElement.lang = lang;
    document.title = i18n.t('app.title');
  }, [lang]);

  const [key, setKey] = useState<string | null>(initialKey);
  const [notice, setNotice] = useState<Notice>(null);
  const signOut = (why: Notice) => {
    forgetKey();
    setKey(null);
    setNotice(why);
  };
  const api = useMemo(() => (key ? createApi(key, { onUnauthorized: (detail) => signOut({ kind: 'rejected', detail }) }) : null), [key]);

  return (
    <I18nContext.Provider value={i18n}>
      {api ? (
        <Signed api={api} onSignOut={() => signOut({ kind: 'signedOut' })} />
      ) : (
        <>
          <Header />
          <SignIn
            message={notice?.kind === 'rejected' ? i18n.t('signin.rejected', { message: notice.detail }) : notice?.kind === 'signedOut' ? i18n.t('signin.signedOut') : null}
            onKey={(k) => {
              saveKey(k);
              setNotice(null);
              setKey(k);
            }}
          />
        </>
      )}
    </I18nContext.Provider>
  );
}

/** The views a key may open, in menu order. */
function allowedViews(who: WhoAmI): Route['view'][] {
  return who.admin ? ['sessions', 'memory', 'metrics'] : ['memory'];
}

function Signed({ api, onSignOut }: { api: ReturnType<typeof createApi>; onSignOut(): void }) {
  const { t } = useI18n();
  const who = useLoad(() => api.whoami(), [api]);
  const route = useRoute();
  const w = who.data;
  const allowed = w ? allowedViews(w) : [];
  const ok = w && route.view !== 'home' && allowed.includes(route.view);
  useEffect(() => {
    if (w && !ok) location.replace(routeHref(w.admin ? { view: 'sessions' } : { view: 'memory', user: w.user }));
  }, [w, ok]);

  return (
    <>
      <Header who={w} route={route} onSignOut={onSignOut} />
      <main class="main">
        {!w && who.loading && <Loading />}
        {who.error !== undefined && !(who.error instanceof ApiError && who.error.status === 401) && <ErrorNote error={who.error} onRetry={who.reload} />}
        {w && ok && route.view === 'sessions' && <SessionsView api={api} />}
        {w && ok && route.view === 'memory' && <MemoryView api={api} who={w} user={w.admin ? route.user : w.user} />}
        {w && ok && route.view === 'metrics' && <MetricsView api={api} />}
      </main>
      {!w && who.error !== undefined && (
        <p class="center">
          <button type="button" class="btn" onClick={onSignOut}>
            {t('app.signOut')}
          </button>
        </p>
      )}
    </>
  );
}

function Header({ who, route, onSignOut }: { who?: WhoAmI | undefined; route?: Route; onSignOut?: () => void }) {
  const { t, lang, setLang } = useI18n();
  const views = who ? allowedViews(who) : [];
  return (
    <header class="topbar">
      <a class="brand" href="#/">
        <svg class="logo" viewBox="0 0 24 24" aria-hidden="true">
          <rect x="3" y="3" width="12" height="12" rx="2.5" />
          <rect x="9" y="9" width="12" height="12" rx="2.5" />
        </svg>
        {t('app.title')}
      </a>
      {views.length > 0 && (
        <nav class="tabs" aria-label="views">
          {views.map((v) => (
            <a key={v} href={routeHref(v === 'memory' ? { view: 'memory', user: null } : ({ view: v } as Route))} class={route?.view === v ? 'active' : ''} aria-current={route?.view === v ? 'page' : undefined} data-testid={`nav-${v}`}>
              {t(`nav.${v as 'sessions' | 'memory' | 'metrics'}`)}
            </a>
          ))}
        </nav>
      )}
      <div class="topbar-right">
        {who && (
          <span class="badge who" data-testid="who" data-admin={String(who.admin)}>
            {who.admin ? t('app.admin') : t('app.userKey', { user: who.user ?? '?' })}
          </span>
        )}
        <div class="segmented lang" role="group" aria-label={t('app.language')}>
          {LANGS.map((l) => (
            <button key={l} type="button" class={l === lang ? 'on' : ''} aria-pressed={l === lang} onClick={() => setLang(l)} data-testid={`lang-${l}`}>
              {l === 'en' ? 'EN' : '中文'}
            </button>
          ))}
        </div>
        {onSignOut && (
          <button type="button" class="btn small ghost" onClick={onSignOut} data-testid="sign-out">
            {t('app.signOut')}
          </button>
        )}
      </div>
    </header>
  );
}
