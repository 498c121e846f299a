/**
 * A Redis that a test may stop and start again, to stage an outage of the hot tier.
 *
 * - With `redis-server` on the PATH: a private server process on a free port (no persistence),
 *   killed by `stop()` and started again, empty, on the same port by `start()`.
 * - Without it (e.g. a CI runner whose Redis is a service container): a TCP relay on a free port
 *   in front of the shared Redis (`REDIS_URL`); `stop()` cuts and refuses connections, like a
 *   server that went down, and `start()` listens again (the data is still there, as after a
 *   restart from a snapshot). Callers then need `describeWithService('redis', …)`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { type Server, type Socket, connect, createServer } from 'node:net';
import { freePort, waitForPong } from './redis-lab.js';
import { serviceAddress } from './services.js';

/** A Redis under the test's control. */
export interface StoppableRedis {
  /** `redis://127.0.0.1:<port>`; stays the same across stop and start. */
  readonly url: string;
  /** What it is: `redis-server process` or `relay to <host:port>`. */
  readonly kind: string;
  /** Makes Redis unreachable (connections cut, new ones refused). */
  stop(): Promise<void>;
  /** Makes it reachable again on the same port; resolves once it answers PING. */
  start(): Promise<void>;
  /** Stops it for good. */
  close(): Promise<void>;
}

/** True when a `redis-server` binary can be run. */
export function hasRedisServerBinary(): boolean {
  const probe = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  return probe.status === 0;
}

/** A private `redis-server` process on a free port. */
export async function startRedisServerProcess(): Promise<StoppableRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const launch = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'], { stdio: 'ignore' });
    await waitForPong(port);
  };
  const kill = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };
  await launch();
  return { url: `redis://127.0.0.1:${port}`, kind: 'redis-server process', stop: kill, start: launch, close: kill };
}

/** A relay on a free port in front of the Redis at `targetUrl`. */
export async function startRedisRelay(targetUrl: string): Promise<StoppableRedis> {
  const target = serviceAddress('redis', targetUrl);
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const listen = async () => {
    server = createServer((client) => {
      const upstream = connect(target);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(port, '127.0.0.1', resolve);
    });
    await waitForPong(port);
  };
  const cut = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    server = undefined;
  };
  await listen();
  return { url: `redis://127.0.0.1:${port}`, kind: `relay to ${target.host}:${target.port}`, stop: cut, start: listen, close: cut };
}

/** A private server when the binary is there, else a relay in front of `sharedUrl`. */
export function startStoppableRedis(sharedUrl: string): Promise<StoppableRedis> {
  return hasRedisServerBinary() ? startRedisServerProcess() : startRedisRelay(sharedUrl);
}
