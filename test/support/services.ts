/**
 * Real services in tests (Redis, PostgreSQL) without making them a prerequisite on a laptop.
 * A suite declares the service it needs; the service is probed once per URL and test file:
 * - reachable: the suite runs;
 * - unreachable and `CI=true`: the suite fails, because CI promised the service;
 * - unreachable elsewhere: the suite is skipped and the reason is printed once.
 */
import { Socket, connect } from 'node:net';
import { describe, it } from 'vitest';

/** The services test suites can ask for. */
export type ServiceName = 'redis' | 'postgres';

/** Outcome of a probe; `reason` says why the service is unavailable. */
export interface ServiceStatus {
  available: boolean;
  reason?: string;
}

/** Options of a probe. */
export interface ServiceProbeOptions {
  /** Give up on connecting (and on the PING reply) after this many ms (default 1500). */
  timeoutMs?: number;
  /** An extra check once TCP connects, e.g. `SELECT 1` for PostgreSQL; a rejection makes the service unavailable. */
  check?: (url: string) => Promise<void>;
}

interface ServiceFacts {
  defaultPort: number;
  envVariable: string;
  defaultUrl: string;
  howToStart: string;
}

const SERVICES: Record<ServiceName, ServiceFacts> = {
  redis: { defaultPort: 6379, envVariable: 'REDIS_URL', defaultUrl: 'redis://127.0.0.1:6379', howToStart: 'start redis-server' },
  postgres: {
    defaultPort: 5432,
    envVariable: 'DATABASE_URL',
    defaultUrl: 'postgres://postgres:postgres@127.0.0.1:5432/ctxvm_test',
    howToStart: 'start postgresql',
  },
};

/** The URL a suite should use: `$REDIS_URL` / `$DATABASE_URL`, or the local default. */
export function serviceUrl(name: ServiceName, env: Readonly<Record<string, string | undefined>> = process.env): string {
  const facts = SERVICES[name];
  return env[facts.envVariable]?.trim() || facts.defaultUrl;
}

/** Host and port of a service URL, for messages that must not show a password. */
export function serviceAddress(name: ServiceName, url: string): { host: string; port: number } {
  const parsed = new URL(url);
  // URL keeps IPv6 literals in brackets; net.connect wants them bare.
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1';
  return { host, port: parsed.port ? Number(parsed.port) : SERVICES[name].defaultPort };
}

function openSocket(host: string, port: number, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    socket.once('connect', () => resolve(socket));
    socket.once('error', (error: NodeJS.ErrnoException) => reject(new Error(error.code ?? error.message)));
  });
}

// A raw RESP PING rather than the client library: the probe must not depend on the code under test.
function redisPing(socket: Socket, url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let reply = '';
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('utf8');
      if (!reply.includes('\r\n')) return;
      // NOAUTH: a server that wants the password the URL carries is there all the same.
      if (reply.startsWith('+PONG') || (reply.startsWith('-NOAUTH') && new URL(url).password !== '')) resolve();
      else reject(new Error(`PING answered ${JSON.stringify(reply.trim())}`));
    });
    socket.once('close', () => reject(new Error('connection closed before PING was answered')));
    socket.write('*1\r\n$4\r\nPING\r\n');
  });
}

/** Probes a service once (TCP connect, then PING for Redis, then `options.check`); never throws. */
export async function probeService(name: ServiceName, url: string, options: ServiceProbeOptions = {}): Promise<ServiceStatus> {
  const timeoutMs = options.timeoutMs ?? 1500;
  let address: { host: string; port: number };
  try {
    address = serviceAddress(name, url);
  } catch {
    return { available: false, reason: `${SERVICES[name].envVariable} is not a valid URL` };
  }
  const where = `${address.host}:${address.port}`;
  let socket: Socket | undefined;
  try {
    socket = await openSocket(address.host, address.port, timeoutMs);
    if (name === 'redis') await redisPing(socket, url);
  } catch (error) {
    return { available: false, reason: `cannot reach ${where} (${(error as Error).message})` };
  } finally {
    socket?.destroy();
  }
  if (options.check) {
    try {
      await options.check(url);
    } catch (error) {
      return { available: false, reason: `${where} answered but the check failed (${(error as Error).message})` };
    }
  }
  return { available: true };
}

const probes = new Map<string, Promise<ServiceStatus>>();
const warned = new Set<string>();

/**
 * Probes a service (once per name and URL in this test file). When it is unavailable: throws
 * if `CI=true` (the service was required), otherwise warns once and returns the reason.
 */
export async function serviceOrSkip(name: ServiceName, url: string | undefined, options: ServiceProbeOptions = {}): Promise<ServiceStatus> {
  const target = url ?? serviceUrl(name);
  const id = `${name} ${target}`;
  let probe = probes.get(id);
  if (!probe) {
    probe = probeService(name, target, options);
    probes.set(id, probe);
  }
  const status = await probe;
  if (status.available) return status;
  const { envVariable, howToStart } = SERVICES[name];
  if (process.env.CI === 'true') {
    throw new Error(`${name} is required when CI=true but is unavailable: ${status.reason}; set ${envVariable} or ${howToStart}`);
  }
  if (!warned.has(id)) {
    warned.add(id);
    console.warn(`skipping ${name} tests: ${status.reason}; set ${envVariable} or ${howToStart}`);
  }
  return status;
}

/**
 * `describe` for a suite that needs a real service: `body(url)` declares the tests when the
 * service answers. Otherwise the suite holds one test that fails (CI) or is skipped (elsewhere),
 * named after the reason so reports say why.
 */
export function describeWithService(
  name: ServiceName,
  url: string | undefined,
  body: (url: string) => void,
  options: ServiceProbeOptions = {},
): void {
  const target = url ?? serviceUrl(name);
  describe(`with ${name}`, async () => {
    let status: ServiceStatus;
    try {
      status = await serviceOrSkip(name, target, options);
    } catch (error) {
      const message = (error as Error).message;
      it(`${name} is reachable`, () => {
        throw new Error(message);
      });
      return;
    }
    if (!status.available) {
      it.skip(`${name} unavailable: ${status.reason}`, () => {});
      return;
    }
    body(target);
  });
}

/** Deletes every Redis key under `<prefix>:` (SCAN + DEL), so test runs can share one Redis; returns the count. */
export async function deleteRedisKeys(url: string, prefix: string): Promise<number> {
  // Loaded on demand so suites that only need PostgreSQL never load the Redis client.
  const { createClient } = await import('redis');
  const client = createClient({ url });
  await client.connect();
  try {
    let deleted = 0;
    for await (const keys of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 500 })) {
      if (keys.length > 0) deleted += await client.del(keys);
    }
    return deleted;
  } finally {
    client.destroy();
  }
}
