/**
 * PostgreSQL fixtures for tests: a readiness check for `describeWithService` (the database in
 * the URL must accept a login, not just the port a TCP connection), and throwaway schemas so
 * every test starts empty and runs, developers and CI jobs can share one database. Both talk
 * to the server through `pg` directly, never through the driver under test.
 */
import { randomBytes } from 'node:crypto';
import type { Client } from 'pg';

async function withClient<T>(url: string, body: (client: Client) => Promise<T>): Promise<T> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** `check` for `describeWithService('postgres', …)`: logs in and runs `SELECT 1`. */
export async function postgresReady(url: string): Promise<void> {
  await withClient(url, (c) => c.query('SELECT 1'));
}

/** A schema that exists until `drop()`; pass `name` as the driver's `searchPath`. */
export interface TempSchema {
  name: string;
  drop(): Promise<void>;
}

/** Creates an empty schema with a unique name (`ctxvm_test_<label>_<random>`). */
export async function createTempSchema(url: string, label = 't'): Promise<TempSchema> {
  const name = `ctxvm_test_${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${randomBytes(5).toString('hex')}`;
  await withClient(url, (c) => c.query(`CREATE SCHEMA ${name}`));
  return {
    name,
    drop: () => withClient(url, (c) => c.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`)).then(() => {}),
  };
}
