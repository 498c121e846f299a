/**
 * Real `redis-server` processes a fault test controls completely: each on its own free port, with
 * its own data folder and persistence (RDB snapshots, AOF), optionally a replica of another; it
 * can be killed with SIGKILL and started again from what it left on disk, paused with SIGSTOP and
 * resumed with SIGCONT. A switchable TCP relay stands for a failover's virtual address: clients
 * keep one URL while the relay cuts their connections and sends new ones to the promoted replica.
 *
 * Admin commands go through `redis-cli`, not the client library under test.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'vitest';

/** Why the lab cannot run here, or undefined when `redis-server` and `redis-cli` are installed. */
export function redisLabSkipReason(): string | undefined {
  for (const binary of ['redis-server', 'redis-cli']) {
    if (spawnSync(binary, ['--version'], { stdio: 'ignore' }).status !== 0) return `${binary} is not installed (apt-get install redis-server)`;
  }
  return undefined;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Persistence and role of one server. */
export interface RedisNodeOptions {
  /** Data folder (RDB file, AOF folder); created when missing. */
  dir: string;
  /** Append-only file on, with this fsync policy (default: off). */
  appendfsync?: 'always' | 'everysec';
  /** Port of the master this server replicates (default: none, a master). */
  replicaOf?: number;
}

/** One `redis-server` process (restartable on the same port and folder). */
export interface RedisNode {
  readonly port: number;
  readonly url: string;
  readonly pid: number | undefined;
  /** Runs `redis-cli -p <port> …args` and returns its output (trimmed); throws when it fails. */
  cli(...args: string[]): string;
  /** A field of `INFO` (e.g. `run_id`, `master_repl_offset`). */
  info(field: string): string;
  /** SIGKILL: no shutdown save, the data is what the last SAVE / AOF write left on disk. */
  kill(): Promise<void>;
  /** Starts the process again on the same port and folder (loading what is on disk); resolves once it answers PING. */
  start(): Promise<void>;
  /** SIGSTOP: the socket stays open and connections are accepted by the kernel, but nothing is answered. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  close(): Promise<void>;
}

/** Starts a `redis-server` on a free port. */
export async function startRedisNode(options: RedisNodeOptions): Promise<RedisNode> {
  mkdirSync(options.dir, { recursive: true });
  const port = await freePort();
  let child: ChildProcess | undefined;
  const args = [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--dir', options.dir,
    '--dbfilename', 'dump.rdb',
    '--save', '',
    '--appendonly', options.appendfsync ? 'yes' : 'no',
    ...(options.appendfsync ? ['--appendfsync', options.appendfsync] : []),
    ...(options.replicaOf !== undefined ? ['--replicaof', '127.0.0.1', String(options.replicaOf)] : []),
    '--loglevel', 'warning',
    '--protected-mode', 'no',
  ];
  const cli = (...cmd: string[]): string => {
    const run = spawnSync('redis-cli', ['-p', String(port), ...cmd], { encoding: 'utf8', timeout: 10_000 });
    if (run.status !== 0 || run.stdout.startsWith('ERR') || run.stdout.startsWith('(error)')) {
      throw new Error(`redis-cli -p ${port} ${cmd.join(' ')}: ${run.stdout}${run.stderr}`);
    }
    return run.stdout.trim();
  };
  const node: RedisNode = {
    port,
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      return child?.pid;
    },
    cli,
    info(field) {
      const line = cli('INFO', 'everything').split(/\r?\n/).find((l) => l.startsWith(`${field}:`));
      if (line === undefined) throw new Error(`INFO has no ${field} on port ${port}`);
      return line.slice(field.length + 1).trim();
    },
    async kill() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGCONT'); // a paused process must be able to die
      running.kill('SIGKILL');
      await exited;
    },
    async start() {
      child = spawn('redis-server', args, { stdio: 'ignore' });
      await waitForPong(port);
    },
    pause() {
      child?.kill('SIGSTOP');
    },
    resume() {
      child?.kill('SIGCONT');
    },
    close: () => node.kill(),
  };
  await node.start();
  return node;
}

/** Resolves once `port` answers PING (a replica still loading answers LOADING: not yet), or rejects after `timeoutMs`. */
export async function waitForPong(port: number, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.setTimeout(500, () => socket.destroy());
      socket.once('connect', () => socket.write('*1\r\n$4\r\nPING\r\n'));
      socket.once('data', (chunk) => {
        socket.destroy();
        resolve(chunk.toString('utf8').startsWith('+PONG'));
      });
      socket.once('error', () => resolve(false));
      socket.once('close', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`redis on port ${port} did not answer PING within ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** Waits until `check()` is true (polling), or throws `what` after `timeoutMs`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** A TCP address in front of one server at a time, like a failover's virtual IP. */
export interface SwitchableRelay {
  readonly url: string;
  /** Cuts every connection and sends new ones to `port`. */
  switchTo(port: number): void;
  close(): Promise<void>;
}

/** Starts a relay on a free port forwarding to `targetPort`. */
export async function startSwitchableRelay(targetPort: number): Promise<SwitchableRelay> {
  let target = targetPort;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect({ host: '127.0.0.1', port: target });
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    switchTo(next) {
      target = next;
      for (const socket of sockets) socket.destroy();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * `describe` for a suite that needs the lab: without `redis-server`/`redis-cli` the suite holds
 * one test that fails when CI=true (CI promised them) and is skipped elsewhere, naming the reason.
 */
export function describeWithRedisLab(name: string, body: () => void): void {
  const reason = redisLabSkipReason();
  describe(name, () => {
    if (reason === undefined) return body();
    if (process.env.CI === 'true') {
      it('redis-server is installed', () => {
        throw new Error(`${reason}; CI=true requires it for the hot-tier fault tests`);
      });
      return;
    }
    console.warn(`skipping ${name}: ${reason}`);
    it.skip(`redis lab unavailable: ${reason}`, () => {});
  });
}
