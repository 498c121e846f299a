/**
 * The ONE place where errors become HTTP responses (and MCP tool errors): every error the
 * library throws is a `CtxvmError` with a stable code; the server adds a few codes of its own
 * (authentication, authorisation, body size, unknown route). The body is always
 * `{ error: { code, message, hint?, details? } }`.
 */
import { CtxvmError, type ErrorCode } from '../errors.js';

/** Codes only the HTTP edge produces. */
export type HttpOnlyErrorCode = 'E_UNAUTHORIZED' | 'E_FORBIDDEN' | 'E_TOO_LARGE' | 'E_MEDIA_TYPE' | 'E_ROUTE' | 'E_METHOD';

/** Every code an error response can carry. */
export type ApiErrorCode = ErrorCode | HttpOnlyErrorCode;

/** An error raised by the HTTP edge itself (auth, limits, routing). */
export class HttpError extends Error {
  constructor(
    readonly code: HttpOnlyErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** HTTP status of every code. Input problems are 4xx, failed operations 5xx. */
export const STATUS_OF: Readonly<Record<ApiErrorCode, number>> = {
  E_USAGE: 400,
  E_PARSE: 400,
  E_UNSUPPORTED: 400,
  E_INVALID: 422,
  E_NOT_FOUND: 404,
  E_EXISTS: 409,
  E_CONFLICT: 409,
  E_INTEGRITY: 500,
  E_IO: 500,
  E_INTERNAL: 500,
  E_LLM: 502,
  E_UNAVAILABLE: 503,
  E_UNAUTHORIZED: 401,
  E_FORBIDDEN: 403,
  E_TOO_LARGE: 413,
  E_MEDIA_TYPE: 415,
  E_ROUTE: 404,
  E_METHOD: 405,
};

/** The JSON body of an error response. */
export interface ApiErrorBody {
  error: { code: ApiErrorCode; message: string; hint?: string; details?: Record<string, unknown> };
}

/** An error mapped for the wire: status, body, and whether it is the server's fault (5xx). */
export interface MappedError {
  status: number;
  body: ApiErrorBody;
  /** True for 5xx: log the cause; the client sees only a generic message for unknown errors. */
  serverFault: boolean;
}

/** Maps anything thrown by a handler to a response. Unknown errors never leak their message. */
export function mapError(error: unknown): MappedError {
  if (error instanceof HttpError) {
    return { status: STATUS_OF[error.code], body: { error: { code: error.code, message: error.message } }, serverFault: false };
  }
  if (CtxvmError.is(error)) {
    const status = STATUS_OF[error.code] ?? 500;
    const body: ApiErrorBody = { error: { code: error.code, message: error.message, ...(error.hint ? { hint: error.hint } : {}), ...(error.details ? { details: error.details } : {}) } };
    return { status, body, serverFault: status >= 500 };
  }
  return { status: 500, body: { error: { code: 'E_INTERNAL', message: 'internal server error' } }, serverFault: true };
}
