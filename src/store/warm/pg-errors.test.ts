import { describe, expect, it } from 'vitest';
import { CtxvmError } from '../../errors.js';
import { isUniqueViolation } from './sql.js';
import { connectError, isConnectionError, isRetryableTransactionError, redactPostgresUrl, statementError } from './pg-errors.js';

const URL = 'postgres://bob:hunter2@db.example:5433/app?password=hunter2&sslmode=require';
const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('PostgreSQL error mapping', () => {
  it('redacts the password in the userinfo and in the query string', () => {
    expect(redactPostgresUrl(URL)).toBe('postgres://bob:***@db.example:5433/app?password=***&sslmode=require');
  });

  it('maps statement errors by SQLSTATE, keeping the cause', () => {
    const dup = statementError(URL, pgError('23505', 'duplicate key value violates unique constraint "t_pkey"'));
    expect(dup).toMatchObject({ code: 'E_CONFLICT', message: `${redactPostgresUrl(URL)}: duplicate key value violates unique constraint "t_pkey"` });
    expect(isUniqueViolation(dup)).toBe(true);
    expect(statementError(URL, pgError('40001', 'could not serialize access'))).toMatchObject({ code: 'E_UNAVAILABLE' });
    expect(isRetryableTransactionError(statementError(URL, pgError('40P01', 'deadlock detected')))).toBe(true);
    expect(statementError(URL, pgError('42P01', 'relation "x" does not exist'))).toMatchObject({ code: 'E_IO' });
    const own = new CtxvmError('E_EXISTS', 'taken');
    expect(statementError(URL, own)).toBe(own);
  });

  it('maps connection failures to errors that say what to fix', () => {
    const refused = connectError(URL, pgError('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.1:5433'));
    expect(refused).toMatchObject({ code: 'E_UNAVAILABLE', hint: expect.stringContaining('db.example:5433') });
    expect(refused.message).not.toContain('hunter2');
    const happyEyeballs = Object.assign(new AggregateError([pgError('ECONNREFUSED', 'connect ECONNREFUSED ::1:5432'), pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')], ''), { code: 'ECONNREFUSED' });
    expect(connectError(URL, happyEyeballs).message).toContain('connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432');
    expect(connectError(URL, pgError('28P01', 'password authentication failed for user "bob"'))).toMatchObject({ code: 'E_USAGE', hint: expect.stringContaining('password') });
    expect(connectError(URL, pgError('3D000', 'database "app" does not exist'))).toMatchObject({ code: 'E_NOT_FOUND', hint: expect.stringContaining('createdb app') });
    expect(isConnectionError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isConnectionError(pgError('57P01', 'terminating connection due to administrator command'))).toBe(true);
    expect(statementError(URL, new Error('Client has encountered a connection error and is not queryable'))).toMatchObject({ code: 'E_UNAVAILABLE' });
  });
});
