import { type AddressInfo, type Server, createServer } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { describeWithService, probeService, serviceOrSkip, serviceUrl } from './services.js';

async function listening(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as AddressInfo).port;
}

const servers: Server[] = [];
async function tcpServer(onData?: (reply: (text: string) => void) => void): Promise<number> {
  const server = createServer((socket) => socket.on('data', () => onData?.((text) => socket.end(text))));
  servers.push(server);
  return listening(server);
}

async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await listening(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

describe('serviceUrl', () => {
  it('reads REDIS_URL and DATABASE_URL, with local defaults', () => {
    expect(serviceUrl('redis', {})).toBe('redis://127.0.0.1:6379');
    expect(serviceUrl('redis', { REDIS_URL: 'redis://cache:6380' })).toBe('redis://cache:6380');
    expect(serviceUrl('postgres', { DATABASE_URL: 'postgres://db/x' })).toBe('postgres://db/x');
    expect(serviceUrl('postgres', {})).toMatch(/^postgres:\/\/.*127\.0\.0\.1:5432\//);
  });
});

describe('probeService', () => {
  it('names the address and the reason when nothing listens', async () => {
    const port = await closedPort();
    expect(await probeService('redis', `redis://127.0.0.1:${port}`)).toEqual({
      available: false,
      reason: `cannot reach 127.0.0.1:${port} (ECONNREFUSED)`,
    });
  });

  it('rejects a redis port that does not answer PING like Redis', async () => {
    const port = await tcpServer((reply) => reply('HTTP/1.1 400 Bad Request\r\n\r\n'));
    const status = await probeService('redis', `redis://127.0.0.1:${port}`);
    expect(status.available).toBe(false);
    expect(status.reason).toMatch(/PING answered "HTTP\/1.1 400/);
  });

  it('accepts PONG, and NOAUTH when the URL carries a password', async () => {
    const pong = await tcpServer((reply) => reply('+PONG\r\n'));
    expect(await probeService('redis', `redis://127.0.0.1:${pong}`)).toEqual({ available: true });
    const noauth = await tcpServer((reply) => reply('-NOAUTH Authentication required.\r\n'));
    expect((await probeService('redis', `redis://127.0.0.1:${noauth}`)).available).toBe(false);
    expect(await probeService('redis', `redis://:pw@127.0.0.1:${noauth}`)).toEqual({ available: true });
  });

  it('for postgres, connects over TCP and then runs the optional check', async () => {
    const port = await tcpServer();
    const url = `postgres://u:p@127.0.0.1:${port}/db`;
    expect(await probeService('postgres', url)).toEqual({ available: true });
    const check = vi.fn(async () => {
      throw new Error('password authentication failed');
    });
    const status = await probeService('postgres', url, { check });
    expect(check).toHaveBeenCalledWith(url);
    expect(status).toEqual({ available: false, reason: `127.0.0.1:${port} answered but the check failed (password authentication failed)` });
  });
});

describe('serviceOrSkip', () => {
  it('fails when CI=true, because CI promised the service', async () => {
    vi.stubEnv('CI', 'true');
    const port = await closedPort();
    await expect(serviceOrSkip('redis', `redis://127.0.0.1:${port}`)).rejects.toThrow(
      `redis is required when CI=true but is unavailable: cannot reach 127.0.0.1:${port} (ECONNREFUSED); set REDIS_URL or start redis-server`,
    );
  });

  it('elsewhere, skips with the reason printed once', async () => {
    vi.stubEnv('CI', '');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const port = await closedPort();
    const url = `postgres://127.0.0.1:${port}/db`;
    const status = await serviceOrSkip('postgres', url);
    await serviceOrSkip('postgres', url);
    expect(status).toEqual({ available: false, reason: `cannot reach 127.0.0.1:${port} (ECONNREFUSED)` });
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith(`skipping postgres tests: cannot reach 127.0.0.1:${port} (ECONNREFUSED); set DATABASE_URL or start postgresql`);
  });
});

describeWithService('redis', process.env.REDIS_URL, (url) => {
  it('hands the suite the URL of a Redis that answers PING', async () => {
    expect(await probeService('redis', url)).toEqual({ available: true });
  });
});
