import { describe, expect, it } from 'vitest';
import { CtxvmError, NotFoundError, UsageError } from '../errors.js';
import { HttpError, mapError } from './errors.js';

describe('mapError', () => {
  it('maps ctxvm codes and the edge codes to statuses with one body shape', () => {
    expect(mapError(new UsageError('body.text: expected string', { hint: 'see /openapi.json' }))).toEqual({
      status: 400,
      body: { error: { code: 'E_USAGE', message: 'body.text: expected string', hint: 'see /openapi.json' } },
      serverFault: false,
    });
    expect(mapError(new NotFoundError('no task')).status).toBe(404);
    expect(mapError(new CtxvmError('E_EXISTS', 'taken')).status).toBe(409);
    expect(mapError(new CtxvmError('E_UNAVAILABLE', 'redis down')).status).toBe(503);
    expect(mapError(new CtxvmError('E_LLM', 'timeout')).status).toBe(502);
    expect(mapError(new HttpError('E_FORBIDDEN', 'not yours')).status).toBe(403);
    expect(mapError(new HttpError('E_TOO_LARGE', 'big')).status).toBe(413);
  });

  it('carries the details of an error that has them', () => {
    const details = { id: 'm1', turnIds: { user: 'm1', assistant: 'm1:reply' }, response: 'noted' };
    expect(mapError(new CtxvmError('E_CONFLICT', 'already received', { details })).body).toEqual({ error: { code: 'E_CONFLICT', message: 'already received', details } });
    expect(mapError(new CtxvmError('E_CONFLICT', 'taken')).body.error).not.toHaveProperty('details');
  });

  it('never leaks the message of an unknown error', () => {
    const m = mapError(new Error('SQLITE_CORRUPT at /secret/path'));
    expect(m).toEqual({ status: 500, body: { error: { code: 'E_INTERNAL', message: 'internal server error' } }, serverFault: true });
  });
});
