/**
 * Where the console keeps the API key: `#key=<key>` in the address (a fragment never reaches the
 * server or its logs) is moved into sessionStorage and removed from the address bar; the sign-in
 * form stores a pasted key the same way. Closing the tab forgets it.
 */

const STORAGE_KEY = 'ctxvm.console.key';

/** Takes `#key=` out of the address (keeping any route after it) and stores it; returns the key in use, if any. */
export function initialKey(): string | null {
  const hash = location.hash;
  const m = /^#key=([^&/]+)(.*)$/.exec(hash);
  if (m) {
    const key = decodeURIComponent(m[1]!);
    saveKey(key);
    const rest = m[2]!.replace(/^&/, '');
    history.replaceState(null, '', location.pathname + location.search + (rest.startsWith('/') ? `#${rest}` : ''));
    return key;
  }
  return storedKey();
}

export function storedKey(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

export function saveKey(key: string): void {
  try {
    sessionStorage.setItem(STORAGE_KEY, key);
  } catch {
    // storage disabled: the key lives in memory for this page only
  }
}

export function forgetKey(): void {
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // nothing stored
  }
}
