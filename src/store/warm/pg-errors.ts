/**
 * PostgreSQL and connection errors → `CtxvmError`, in one place. Messages start with the
 * database's redacted URL and never carry a password; the original error stays the `cause`
 * (so `isUniqueViolation` still sees SQLSTATE 23505 on it).
 */
import { redactUrl } from '../../core/config.js';
import { CtxvmError, type ErrorCode } from '../../errors.js';

/** SQLSTATEs after which a transaction is retried from the start: serialization failure, deadlock. */
const RETRYABLE = new Set(['40001', '40P01']);

/** Node.js socket error codes that mean "the server is not there". */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);

/** The URL with its password hidden, in the userinfo and in a `password=` query parameter. */
export function redactPostgresUrl(url: string): string {
  return redactUrl(url).replace(/([?&]password=)[^&#]*/gi, '$1***');
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The SQLSTATE or errno code of a pg error, or of the `cause` of a wrapped one. */
export function sqlStateOf(error: unknown): string | undefined {
  if (CtxvmError.is(error)) return codeOf(error.cause);
  return codeOf(error);
}

/** True when the transaction that hit `error` should run again (serialization failure, deadlock). */
export function isRetryableTransactionError(error: unknown): boolean {
  const state = sqlStateOf(error);
  return state !== undefined && RETRYABLE.has(state);
}

/** True when the connection itself failed (server gone, network), not the statement. */
export function isConnectionError(error: unknown): boolean {
  const state = sqlStateOf(error);
  if (state) return UNREACHABLE.has(state) || state.startsWith('08') || state.startsWith('57P') || state === '53300';
  const message = (CtxvmError.is(error) ? (error.cause as Error | undefined)?.message : (error as Error | undefined)?.message) ?? '';
  return /Connection terminated|is not queryable|timeout exceeded when trying to connect|timeout expired|connection timeout/i.test(message);
}

function messageOf(error: unknown): string {
  if (error instanceof AggregateError && !error.message) {
    // Node's happy-eyeballs connect reports one error per address with an empty message.
    return [...new Set(error.errors.map((e) => messageOf(e)))].join('; ') || codeOf(error) || 'connection failed';
  }
  if (error instanceof Error) return error.message || codeOf(error) || error.name;
  return String(error);
}

function hostOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname || 'the local socket'}${u.port ? `:${u.port}` : ''}`;
  } catch {
    return 'the server';
  }
}

/** Maps an error raised while connecting (or checking out a pooled connection) to a CtxvmError. */
export function connectError(url: string, cause: unknown): CtxvmError {
  if (CtxvmError.is(cause)) return cause;
  const location = redactPostgresUrl(url);
  const state = codeOf(cause);
  const detail = messageOf(cause);
  if (state === '28P01' || state === '28000') {
    return new CtxvmError('E_USAGE', `${location}: PostgreSQL refused the login: ${detail}`, { cause, hint: 'check the user name and password in the URL (CTXVM_DB)' });
  }
  if (state === '3D000') {
    let db = '';
    try {
      db = decodeURIComponent(new URL(url).pathname.slice(1));
    } catch {
      // the message names it anyway
    }
    return new CtxvmError('E_NOT_FOUND', `${location}: ${detail}`, { cause, hint: `create the database${db ? ` (createdb ${db})` : ''} or fix its name in the URL (CTXVM_DB)` });
  }
  return new CtxvmError('E_UNAVAILABLE', `${location}: cannot connect to PostgreSQL: ${detail}`, {
    cause,
    hint: `check that PostgreSQL is running and reachable at ${hostOf(url)}, or fix CTXVM_DB`,
  });
}

function statementCode(state: string | undefined): ErrorCode {
  if (!state) return 'E_IO';
  if (state.startsWith('23')) return 'E_CONFLICT';
  if (state.startsWith('22')) return 'E_INVALID';
  if (RETRYABLE.has(state) || state === '55P03' || state === '57014') return 'E_UNAVAILABLE';
  if (state === 'XX001' || state === 'XX002') return 'E_INTEGRITY';
  return 'E_IO';
}

/** Maps an error raised by a statement to a CtxvmError (CtxvmErrors pass through). */
export function statementError(url: string, cause: unknown): CtxvmError {
  if (CtxvmError.is(cause)) return cause;
  if (isConnectionError(cause)) return connectError(url, cause);
  const state = codeOf(cause);
  const code = statementCode(state);
  const message = messageOf(cause);
  // 22021 "invalid byte sequence … 0x00": PostgreSQL text cannot hold U+0000, SQLite's can.
  const nul = state === '22021' && /0x00/.test(message);
  return new CtxvmError(code, `${redactPostgresUrl(url)}: ${message}`, {
    cause,
    ...(code === 'E_UNAVAILABLE' ? { hint: 'another ctxvm process was changing the same rows; retry' } : {}),
    ...(nul ? { hint: 'PostgreSQL text cannot contain the NUL character (U+0000); remove it from the value' } : {}),
  });
}
