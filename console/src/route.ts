/** Hash routes: `#/sessions`, `#/memory/<user>`, `#/metrics`. */
import { useEffect, useState } from 'preact/hooks';

export type Route = { view: 'sessions' } | { view: 'memory'; user: string | null } | { view: 'metrics' } | { view: 'home' };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  switch (parts[0]) {
    case 'sessions':
      return { view: 'sessions' };
    case 'metrics':
      return { view: 'metrics' };
    case 'memory':
      return { view: 'memory', user: parts[1] ? decodeURIComponent(parts[1]) : null };
    default:
      return { view: 'home' };
  }
}

export function routeHref(route: Route): string {
  if (route.view === 'memory') return route.user ? `#/memory/${encodeURIComponent(route.user)}` : '#/memory';
  return route.view === 'home' ? '#/' : `#/${route.view}`;
}

/** The current route, following `hashchange`. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

export function navigate(route: Route): void {
  location.hash = routeHref(route);
}
