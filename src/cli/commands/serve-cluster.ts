/**
 * `ctxvm serve --workers N`: the primary process of node:cluster. It opens the database first
 * (migrations), forks N workers that share the port (connections are handed out round-robin),
 * prints the address once all listen, runs the reminder scheduler (the only one; reminders go to
 * the SSE streams of every worker, see server/cluster-reminders.ts), replaces a worker that dies,
 * and on SIGINT/SIGTERM stops the workers gracefully. The workers run serve.ts's `serveProcess`.
 */
import type { Worker } from 'node:cluster';
import type { Level } from 'pino';
import type { CommandContext } from '../io.js';
import { defaultZoneOption } from '../memory-options.js';
import { waitForStopSignal } from '../stop-signal.js';
import type { ServeOptions } from './serve.js';
import { reminderSettings } from '../serve-reminders.js';

/** Marks a process forked by `serve --workers` (the primary sets it). */
export const WORKER_ENV = 'CTXVM_SERVE_WORKER';
/** The worker's number, 1..N (a replacement takes the number of the worker it replaces). */
export const WORKER_NO_ENV = 'CTXVM_SERVE_WORKER_NO';

/** In a worker: resolves when the primary says stop, the IPC channel closes, or a stop signal arrives. */
export function waitForWorkerStop(): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (m: unknown) => {
      if ((m as { type?: unknown } | null)?.type === 'ctxvm:stop') done();
    };
    const done = () => {
      process.off('message', onMessage);
      process.off('disconnect', done);
      resolve();
    };
    process.on('message', onMessage);
    process.on('disconnect', done);
    void waitForStopSignal().then(done);
  });
}

/** Runs the primary of `serve --workers count` until SIGINT/SIGTERM. */
export async function servePrimary(opts: ServeOptions, ctx: CommandContext, count: number): Promise<void> {
  const { default: cluster } = await import('node:cluster');
  const [{ openServerServices, openKeyStore }, { createServerLogger }, { createLlmFromEnv }, { startServerReminders }, { createClusterReminderSink }] = await Promise.all([
    import('../../server/open-services.js'),
    import('../../server/logger.js'),
    import('../../llm/from-env.js'),
    import('../../server/server-reminders.js'),
    import('../../server/cluster-reminders.js'),
  ]);
  const logger = createServerLogger({ level: opts.logLevel as Level | 'silent' });
  const live = () => Object.values(cluster.workers ?? {}).filter((w): w is NonNullable<typeof w> => w !== undefined && w.isConnected());
  let stopping = false;
  const numbers = new Map<number, number>(); // cluster worker id → worker number
  const fork = (no: number) => numbers.set(cluster.fork({ [WORKER_ENV]: '1', [WORKER_NO_ENV]: String(no) }).id, no);
  const listening = new Map<number, { url: string; port: number; host: string }>();
  let firstUp: (() => void) | undefined;
  let firstFailed: ((error: Error) => void) | undefined;
  const allUp = new Promise<void>((resolve, reject) => {
    firstUp = resolve;
    firstFailed = reject;
  });
  cluster.on('message', (w, m: { type?: string; url?: string; port?: number; host?: string }) => {
    if (m?.type !== 'ctxvm:listening') return;
    listening.set(w.id, { url: m.url!, port: m.port!, host: m.host! });
    if (listening.size >= count) firstUp?.();
  });
  cluster.on('exit', (w, code, signal) => {
    const wasUp = listening.delete(w.id);
    if (stopping) return;
    if (!wasUp && firstUp) return firstFailed?.(new Error(`a worker exited with ${signal ?? code} before listening`));
    logger.error({ worker: w.process.pid, code, signal }, 'worker died; starting another');
    const no = numbers.get(w.id) ?? 1;
    numbers.delete(w.id);
    fork(no);
  });
  const configured = createLlmFromEnv(ctx.io.env);
  // The database is opened (migrations applied) before any worker starts; the primary keeps a
  // connection only for the reminder scheduler.
  let services: Awaited<ReturnType<typeof openServerServices>> | undefined;
  if (opts.reminders !== false) {
    services = await openServerServices({
      config: ctx.config(),
      timeZone: defaultZoneOption(opts.tz),
      ...(opts.budget !== undefined ? { budgetTokens: opts.budget } : {}),
      ...(configured.name !== 'offline' ? { llm: configured.llm } : {}),
      multiProcess: true,
    });
  } else {
    await (await openKeyStore(ctx.config())).close();
  }
  let reminders: ReturnType<typeof startServerReminders> | undefined;
  try {
    for (let i = 1; i <= count; i++) fork(i);
    await allUp;
    firstUp = undefined;
    if (services) {
      reminders = startServerReminders({
        store: services.store,
        manager: services.manager,
        db: services.db,
        ...reminderSettings(opts, ctx.io.env, configured, logger),
        ...(opts.reminderWebhook ? {} : { sink: createClusterReminderSink({ peers: live }) }),
      });
    }
    const first = [...listening.values()][0]!;
    const consoleUrl = `${first.url}/console/`;
    if (opts.json) ctx.printJson({ url: first.url, port: first.port, host: first.host, console: consoleUrl, workers: count });
    ctx.note(`ctxvm: listening on ${first.url} with ${count} workers (Ctrl-C stops)`);
    if (configured.name !== 'offline') ctx.note(`ctxvm: replies from ${configured.name} (${configured.model})`);
    if (reminders) ctx.note(`ctxvm: reminders: ${opts.reminderWebhook ? reminders.target : `${first.url}/v1/users/{user}/reminders/stream (server-sent events)`}`);
    ctx.note(`ctxvm: console: ${consoleUrl}`);
    const signal = await waitForStopSignal();
    ctx.note(`ctxvm: ${signal}: finishing in-flight requests`);
  } finally {
    stopping = true;
    await reminders?.stop();
    await stopWorkers(live());
    await services?.close();
  }
}

/** Asks each worker to finish its in-flight requests and exit; kills those still running after `graceMs`. */
async function stopWorkers(workers: readonly Worker[], graceMs = 10_000): Promise<void> {
  await Promise.all(
    workers.map(
      (w) =>
        new Promise<void>((resolve) => {
          if (w.isDead()) return resolve();
          const timer = setTimeout(() => w.process.kill('SIGKILL'), graceMs);
          w.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          try {
            w.send({ type: 'ctxvm:stop' });
          } catch {
            w.process.kill('SIGTERM');
          }
        }),
    ),
  );
}
