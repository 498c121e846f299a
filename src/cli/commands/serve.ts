/** `ctxvm serve`: the HTTP API on loopback by default, until SIGINT or SIGTERM. */
import { waitForStopSignal } from '../stop-signal.js';
import type { Command } from 'commander';
import { UsageError } from '../../errors.js';
import type { CommandContext } from '../io.js';
import { withJson } from '../program.js';
import { parseTimeZoneOption, positiveInt } from '../memory-options.js';
import { PACKAGE_VERSION } from '../version.js';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function portOption(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`--port must be 0..65535, got ${JSON.stringify(value)}`);
  return n;
}

export function registerServe(program: Command, ctx: CommandContext): void {
  withJson(program.command('serve'))
    .description('serve the HTTP API (memory per user with API keys, sessions for admin keys, /metrics, /openapi.json) until interrupted')
    .option('--port <port>', 'TCP port, 0 for any free one (default 8787)', portOption)
    .option('--host <host>', 'interface to bind (0.0.0.0 only behind a TLS proxy)', '127.0.0.1')
    .option('--log-content', 'put message text, queries and replies in the request log (off by default)')
    .option('--log-level <level>', `request log level: ${LEVELS.join(', ')}`, 'info')
    .option('--max-body <bytes>', 'largest request body, bytes (default 1048576)', positiveInt('--max-body'))
    .option('--public-metrics', 'serve /metrics without a key (default: admin keys only)')
    .option('--budget <tokens>', 'default context budget (default 2000)', positiveInt('--budget'))
    .option('--tz <zone>', 'time zone of users who have not stated one (default UTC)')
    .action(async (opts: { port?: number; host: string; logContent?: boolean; logLevel: string; maxBody?: number; publicMetrics?: boolean; budget?: number; tz?: string; json?: boolean }) => {
      if (!(LEVELS as readonly string[]).includes(opts.logLevel)) throw new UsageError(`--log-level must be one of ${LEVELS.join(', ')}`);
      const [{ openServerServices }, { createHttpApp }, { listen }, { createServerLogger }] = await Promise.all([
        import('../../server/open-services.js'),
        import('../../server/http.js'),
        import('../../server/serve.js'),
        import('../../server/logger.js'),
      ]);
      const logger = createServerLogger({ level: opts.logLevel as (typeof LEVELS)[number] });
      const services = await openServerServices({
        config: ctx.config(),
        ...(opts.tz !== undefined ? { timeZone: parseTimeZoneOption(opts.tz) } : {}),
        ...(opts.budget !== undefined ? { budgetTokens: opts.budget } : {}),
        hotLogger: { error: (m, d) => logger.error(d ?? {}, m), warn: (m, d) => logger.warn(d ?? {}, m), info: (m, d) => logger.info(d ?? {}, m) },
      });
      try {
        const { app } = createHttpApp(services, {
          logger,
          version: PACKAGE_VERSION,
          logContent: opts.logContent === true,
          publicMetrics: opts.publicMetrics === true,
          ...(opts.maxBody !== undefined ? { maxBodyBytes: opts.maxBody } : {}),
        });
        const server = await listen(app, { host: opts.host, ...(opts.port !== undefined ? { port: opts.port } : {}) });
        if (opts.json) ctx.printJson({ url: server.url, port: server.port, host: server.host });
        ctx.note(`ctxvm: listening on ${server.url} (Ctrl-C stops)`);
        const signal = await waitForStopSignal();
        ctx.note(`ctxvm: ${signal}: finishing in-flight requests`);
        await server.close();
      } finally {
        await services.close();
      }
    });
}
