/**
 * One error family for the whole library. Every error ctxvm throws is a `CtxvmError` with a
 * stable machine-readable `code`; the edges (CLI, HTTP, MCP) map codes to exit codes, statuses
 * and messages in one place. Recognised across duplicate installs through a `Symbol.for` marker.
 */
const MARKER = Symbol.for('ctxvm.error');

/** Stable error codes. `kind` says whether the caller gave bad input or the operation failed. */
export type ErrorCode =
  | 'E_USAGE'
  | 'E_PARSE'
  | 'E_NOT_FOUND'
  | 'E_EXISTS'
  | 'E_INVALID'
  | 'E_INTEGRITY'
  | 'E_IO'
  | 'E_UNSUPPORTED'
  | 'E_UNAVAILABLE'
  | 'E_CONFLICT'
  | 'E_LLM'
  | 'E_INTERNAL';

/** Codes that mean "the input was bad" (exit 2 at the CLI); all others mean "it failed" (exit 1). */
export const INPUT_ERROR_CODES: ReadonlySet<ErrorCode> = new Set([
  'E_USAGE',
  'E_PARSE',
  'E_NOT_FOUND',
  'E_EXISTS',
  'E_UNSUPPORTED',
]);

export interface CtxvmErrorOptions {
  cause?: unknown;
  /** A short instruction that tells the user how to fix it, shown after the message. */
  hint?: string;
  /** Machine-readable facts about the failure (JSON values), returned with it by the HTTP API and `--json`. */
  details?: Record<string, unknown>;
}

export class CtxvmError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly [MARKER] = true;

  constructor(code: ErrorCode, message: string, options: CtxvmErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CtxvmError';
    this.code = code;
    this.hint = options.hint;
    this.details = options.details;
  }

  /** True for any ctxvm error, even one thrown by another copy of the package. */
  static is(value: unknown): value is CtxvmError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MARKER] === true;
  }

  /** True when the error means bad input or usage rather than a failed operation. */
  get isInputError(): boolean {
    return INPUT_ERROR_CODES.has(this.code);
  }
}

/** Position of a problem inside a file: 1-based line, 0-based byte offset of the line start. */
export interface FilePosition {
  file: string;
  line: number;
  byteOffset: number;
}

/** A file that could not be parsed. The message always names the file and the line. */
export class ParseError extends CtxvmError {
  readonly file: string;
  readonly line: number;
  readonly byteOffset: number;

  constructor(position: FilePosition, detail: string, options: CtxvmErrorOptions = {}) {
    super('E_PARSE', `${position.file}:${position.line}: ${detail}`, options);
    this.name = 'ParseError';
    this.file = position.file;
    this.line = position.line;
    this.byteOffset = position.byteOffset;
  }

  static override is(value: unknown): value is ParseError {
    return CtxvmError.is(value) && value.code === 'E_PARSE';
  }
}

export class UsageError extends CtxvmError {
  constructor(message: string, options: CtxvmErrorOptions = {}) {
    super('E_USAGE', message, options);
    this.name = 'UsageError';
  }
}

export class NotFoundError extends CtxvmError {
  constructor(message: string, options: CtxvmErrorOptions = {}) {
    super('E_NOT_FOUND', message, options);
    this.name = 'NotFoundError';
  }
}

/** Data failed a check (a checksum, a hash, a validator): nothing was written. */
export class IntegrityError extends CtxvmError {
  constructor(message: string, options: CtxvmErrorOptions = {}) {
    super('E_INTEGRITY', message, options);
    this.name = 'IntegrityError';
  }
}

/** Wraps a Node.js file-system error so the message names the path and what was tried. */
export function ioError(action: string, path: string, cause: unknown): CtxvmError {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return new NotFoundError(`${path}: no such file or directory (while trying to ${action})`, { cause });
  if (code === 'EISDIR') return new CtxvmError('E_USAGE', `${path}: is a directory, expected a file (while trying to ${action})`, { cause });
  if (code === 'EACCES' || code === 'EPERM') {
    return new CtxvmError('E_IO', `${path}: permission denied (while trying to ${action})`, { cause, hint: 'check the file permissions' });
  }
  return new CtxvmError('E_IO', `${path}: ${code ?? 'I/O error'} while trying to ${action}`, { cause });
}
