/**
 * The web console's static files (docs/console.md): `dist/console/` as built by `npm run build`,
 * served under `/console/`. The files hold no data, so no key is needed; every data call the page
 * makes goes to the API with its own key. Paths are checked before they touch the file system:
 * no `..` or `.` segments (raw or percent-encoded), no backslashes, NUL or absolute paths, and the
 * resolved file must lie inside the folder.
 */
import { readFile, stat } from 'node:fs/promises';
import { extname, isAbsolute, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CtxvmError, NotFoundError, UsageError } from '../errors.js';

/** Mount point of the console. */
export const CONSOLE_PATH = '/console/';

/** Content-Security-Policy of console responses: nothing from other origins, no inline scripts. */
export const CONSOLE_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'";

/**
 * The built console folder of this installation: `<package>/dist/console/`. Resolved from this
 * module's own location, which is `src/server/` in a checkout and `dist/server/` when installed.
 */
export function defaultConsoleDir(): string {
  const here = import.meta.url; // kept out of the URL call so bundlers leave it alone
  return fileURLToPath(new URL('../../dist/console/', here));
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};

/** Content type of a file name (application/octet-stream when unknown). */
export function contentTypeOf(name: string): string {
  return CONTENT_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * The file a request path under `/console/` names, relative to the console folder (`index.html`
 * for the folder itself); a UsageError for anything that could leave the folder.
 */
export function consoleRelativePath(pathname: string): string {
  if (!pathname.startsWith(CONSOLE_PATH)) throw new UsageError(`${pathname}: not a console path`);
  const raw = pathname.slice(CONSOLE_PATH.length);
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    throw new UsageError(`${pathname}: malformed percent-encoding`);
  }
  const bad = () => new UsageError(`${pathname}: not a file of the console`, { hint: 'console paths are plain relative names, e.g. /console/app.js' });
  if (decoded.includes('\0') || decoded.includes('\\') || decoded.startsWith('/') || isAbsolute(decoded) || /^[a-z]:/i.test(decoded)) throw bad();
  const segments = decoded.split('/');
  if (segments.some((s, i) => s === '..' || s === '.' || (s === '' && i < segments.length - 1))) throw bad();
  if (decoded === '' || decoded.endsWith('/')) return `${decoded}index.html`;
  return decoded;
}

/** A response for one console file. */
export interface ConsoleFile {
  body: Uint8Array;
  headers: Record<string, string>;
  /** 200, or 304 when the client's copy is current (body empty). */
  status: 200 | 304;
}

/** Reads console files from `dir`. */
export interface ConsoleFiles {
  /** The file for `pathname` (which starts with `/console/`); `ifNoneMatch` is the request's If-None-Match. */
  read(pathname: string, ifNoneMatch?: string): Promise<ConsoleFile>;
}

/** Serves the folder `dir` (default: `defaultConsoleDir()`). */
export function createConsoleFiles(dir: string = defaultConsoleDir()): ConsoleFiles {
  const root = resolve(dir);
  return {
    async read(pathname, ifNoneMatch) {
      const relative = consoleRelativePath(pathname);
      const rootStat = await stat(root).catch(() => undefined);
      if (!rootStat?.isDirectory()) {
        throw new CtxvmError('E_UNAVAILABLE', `the web console is not built: ${root} does not exist`, { hint: 'run `npm run build` (it builds dist/console/), then restart the server' });
      }
      const file = resolve(join(root, ...relative.split('/')));
      if (!file.startsWith(root + sep)) throw new UsageError(`${pathname}: not a file of the console`);
      const st = await stat(file).catch(() => undefined);
      if (!st?.isFile()) throw new NotFoundError(`no console file ${CONSOLE_PATH}${relative}`, { hint: `open ${CONSOLE_PATH} for the console` });
      const etag = `W/"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`;
      const headers: Record<string, string> = {
        'content-type': contentTypeOf(file),
        // the bundle's names carry no hash: always revalidate (cheap with the ETag)
        'cache-control': 'no-cache',
        etag,
        'content-security-policy': CONSOLE_CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
      };
      if (ifNoneMatch && ifNoneMatch.split(',').some((t) => t.trim() === etag)) return { body: new Uint8Array(), headers, status: 304 };
      return { body: await readFile(file), headers, status: 200 };
    },
  };
}
