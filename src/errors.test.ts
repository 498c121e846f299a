import { describe, it, expect } from 'vitest';
import { CtxvmError, ParseError, UsageError, NotFoundError, ioError } from './errors.js';

describe('errors', () => {
  it('carries a code, a cause and a hint', () => {
    const cause = new Error('low level');
    const e = new CtxvmError('E_IO', 'disk full', { cause, hint: 'free some space' });
    expect(e.code).toBe('E_IO');
    expect(e.cause).toBe(cause);
    expect(e.hint).toBe('free some space');
    expect(e).toBeInstanceOf(Error);
    expect(e.isInputError).toBe(false);
  });

  it('is() recognises errors from another copy of the package by marker', () => {
    const foreign = Object.assign(new Error('x'), { code: 'E_USAGE', [Symbol.for('ctxvm.error')]: true });
    expect(CtxvmError.is(foreign)).toBe(true);
    expect(CtxvmError.is(new Error('plain'))).toBe(false);
    expect(CtxvmError.is(null)).toBe(false);
    expect(CtxvmError.is('E_USAGE')).toBe(false);
  });

  it('ParseError names the file and line and keeps the byte offset', () => {
    const e = new ParseError({ file: 'a.jsonl', line: 7, byteOffset: 123 }, 'not valid JSON');
    expect(e.message).toBe('a.jsonl:7: not valid JSON');
    expect([e.file, e.line, e.byteOffset]).toEqual(['a.jsonl', 7, 123]);
    expect(ParseError.is(e)).toBe(true);
    expect(ParseError.is(new UsageError('x'))).toBe(false);
    expect(e.isInputError).toBe(true);
  });

  it('ioError maps errno codes to messages that name the path', () => {
    const missing = ioError('read', '/nope', Object.assign(new Error('x'), { code: 'ENOENT' }));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.message).toContain('/nope');
    const dir = ioError('read', '/tmp', Object.assign(new Error('x'), { code: 'EISDIR' }));
    expect(dir.code).toBe('E_USAGE');
    const perm = ioError('write', '/root/x', Object.assign(new Error('x'), { code: 'EACCES' }));
    expect(perm.code).toBe('E_IO');
    expect(perm.message).toContain('permission denied');
  });
});
