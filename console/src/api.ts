/**
 * The console's HTTP client: every call carries `Authorization: Bearer <key>` and goes to the
 * same API any client uses. Errors arrive as `{ error: { code, message } }` and become ApiError;
 * a 401 also calls `onUnauthorized` so the app can send the user back to sign-in.
 */
import type {
  BranchResult,
  ContextPreview,
  DagGraph,
  ErrorBody,
  MetricsSnapshot,
  PageInResult,
  SessionAnalysis,
  SessionsEconomics,
  SessionSummary,
  SnapshotResult,
  UserMemory,
  UserSummary,
  WhoAmI,
} from './api-types.js';

/** An API call that failed: HTTP status (0 = no answer), stable code, server message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The API as the console uses it. */
export interface Api {
  whoami(): Promise<WhoAmI>;
  users(): Promise<UserSummary[]>;
  memory(user: string): Promise<UserMemory>;
  context(user: string, query: string, budget?: number): Promise<ContextPreview>;
  sessions(): Promise<SessionSummary[]>;
  tree(): Promise<DagGraph>;
  /** `ref`: session id, id prefix, path or `snapshot:<name>`. */
  analysis(ref: string): Promise<SessionAnalysis>;
  /** The paper's economics table for the sessions listed (each trimmed once on the server). */
  economics(ttl: '5m' | '1h'): Promise<SessionsEconomics>;
  snapshot(session: string, name: string): Promise<SnapshotResult>;
  branch(snapshot: string, name: string, trim: boolean): Promise<BranchResult>;
  pageIn(ref: string): Promise<PageInResult>;
  metrics(): Promise<MetricsSnapshot>;
}

/** Options of `createApi`. */
export interface ApiOptions {
  /** Origin and path prefix of the API (default: this page's origin). */
  baseUrl?: string;
  /** Called once per 401 answer, with the server's message. */
  onUnauthorized?: (message: string) => void;
  fetch?: typeof fetch;
}

const enc = encodeURIComponent;

/** A client for `key`. */
export function createApi(key: string, options: ApiOptions = {}): Api {
  const base = options.baseUrl ?? location.origin;
  const doFetch = options.fetch ?? fetch.bind(globalThis);

  async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await doFetch(base + path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}), cache: 'no-store' });
    } catch (error) {
      throw new ApiError(0, 'E_NETWORK', (error as Error).message);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      throw new ApiError(res.status, 'E_BAD_RESPONSE', `${method} ${path}: answer is not JSON (status ${res.status})`);
    }
    if (!res.ok) {
      const err = (json as Partial<ErrorBody> | undefined)?.error;
      const error = new ApiError(res.status, err?.code ?? `HTTP_${res.status}`, err?.message ?? res.statusText);
      if (res.status === 401) options.onUnauthorized?.(error.message);
      throw error;
    }
    return json as T;
  }

  return {
    whoami: () => call('GET', '/v1/whoami'),
    users: async () => (await call<{ users: UserSummary[] }>('GET', '/v1/users')).users,
    memory: (user) => call('GET', `/v1/users/${enc(user)}/memory`),
    context: (user, query, budget) => call('POST', `/v1/users/${enc(user)}/context`, { query, ...(budget ? { budget } : {}) }),
    sessions: async () => (await call<{ sessions: SessionSummary[] }>('GET', '/v1/sessions')).sessions,
    tree: () => call('GET', '/v1/sessions/tree'),
    analysis: (ref) => call('GET', `/v1/sessions/analysis?session=${enc(ref)}`),
    economics: (ttl) => call('GET', `/v1/sessions/economics?ttl=${enc(ttl)}`),
    snapshot: (session, name) => call('POST', '/v1/sessions/snapshot', { session, name }),
    branch: (snapshot, name, trim) => call('POST', '/v1/sessions/branch', { snapshot, name, trim }),
    pageIn: (ref) => call('GET', `/v1/sessions/page-in/${enc(ref)}`),
    metrics: () => call('GET', '/v1/metrics'),
  };
}
