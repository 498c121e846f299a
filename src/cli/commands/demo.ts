/**
 * `ctxvm demo`: an offline tour in a temporary home, on generated data. The sections live in
 * src/demo (sections.ts); this file only makes the folder, runs them in order, and prints each
 * one as it finishes — or, with --json, one document with every section's result under its name.
 * With --serve it then serves the API and the web console over the demo's state until
 * interrupted (src/demo/serve-demo.ts), and removes the folder afterwards.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../../errors.js';
import type { CommandContext } from '../io.js';
import { ExitCode, withJson } from '../command-kit.js';
import { waitForStopSignal } from '../stop-signal.js';
import { PACKAGE_VERSION } from '../version.js';
import { portOption } from './serve.js';
import { MEMORY_DEMO_QUESTION, type MemoryDemoResult } from '../../demo/memory-demo.js';

export function registerDemo(program: Command, ctx: CommandContext): void {
  withJson(program.command('demo'))
    .description('run an offline tour of ctxvm on generated data, in a temporary folder (no network)')
    .option('--keep', 'keep the temporary folder and print its path')
    .option('--tz <zone>', 'time zone for the date examples', 'Asia/Shanghai')
    .option('--serve', "then serve the API and the web console over the demo's state on 127.0.0.1 until Ctrl-C")
    .option('--port <port>', 'with --serve: TCP port, 0 for any free one (default 0)', portOption)
    .action(async (opts: { json?: boolean; keep?: boolean; tz: string; serve?: boolean; port?: number }) => {
      if (opts.port !== undefined && !opts.serve) throw new UsageError('--port only applies with --serve', { hint: 'run `ctxvm demo --serve --port 8787`' });
      const { DEMO_SECTIONS } = await import('../../demo/sections.js');
      const home = await mkdtemp(join(tmpdir(), 'ctxvm-demo-'));
      const say = (lines: string[]) => {
        if (!opts.json) ctx.print(lines.join('\n'));
      };
      const doc: Record<string, unknown> = {};
      const ms: Record<string, number> = {};
      const problems: string[] = [];
      // with --serve the folder outlives the tour: it is what the server serves
      let removeHome = !opts.keep;
      try {
        say([`ctxvm demo — offline, in ${home}`]);
        const nowMs = Date.now();
        for (const [i, section] of DEMO_SECTIONS.entries()) {
          const started = performance.now();
          const result = await section.run({ home, timeZone: opts.tz, nowMs });
          ms[section.name] = Math.round(performance.now() - started);
          doc[section.name] = result;
          problems.push(...(section.problems?.(result) ?? []).map((p) => `${section.name}: ${p}`));
          say(['', `${i + 1}. ${section.title}`, ...section.render(result).map((l) => `   ${l}`)]);
        }
        if (opts.json) ctx.printJson({ ok: problems.length === 0, problems, home, kept: opts.keep === true, ms, ...doc });
        else {
          say(['', problems.length ? `problems:\n${problems.map((p) => `  ${p}`).join('\n')}` : `all checks held (${Object.values(ms).reduce((a, b) => a + b, 0)} ms)`]);
          if (opts.keep) say([`kept ${home}`]);
        }
        if (problems.length) throw new ExitCode(1);
        if (opts.serve) {
          removeHome = false; // serve() removes it once the server is down
          const memory = doc.memory as MemoryDemoResult | undefined;
          // the demo's question once more, a minute after the tour's last message, through the server
          const firstMessage = memory
            ? { userId: memory.userId, text: MEMORY_DEMO_QUESTION, now: Date.parse(memory.startedAt) + memory.turns.length * 60_000 }
            : undefined;
          await serve(ctx, home, { json: opts.json === true, keep: opts.keep === true, tz: opts.tz, port: opts.port ?? 0, ...(firstMessage ? { firstMessage } : {}) });
        }
      } finally {
        if (removeHome) await rm(home, { recursive: true, force: true });
      }
    });
}

/** Serves the demo's state until SIGINT/SIGTERM, then stops and removes `home` (unless kept). */
async function serve(
  ctx: CommandContext,
  home: string,
  opts: { json: boolean; keep: boolean; tz: string; port: number; firstMessage?: { userId: string; text: string; now: number } },
): Promise<void> {
  try {
    const { serveDemo } = await import('../../demo/serve-demo.js');
    const server = await serveDemo({ home, port: opts.port, timeZone: opts.tz, version: PACKAGE_VERSION, ...(opts.firstMessage ? { firstMessage: opts.firstMessage } : {}) });
    try {
      // the key appears only here: in the fragment, which browsers never send to the server
      if (opts.json) ctx.print(JSON.stringify({ url: server.url, console: server.console, key: server.key }));
      else ctx.print(['', `serving the demo on ${server.url} (Ctrl-C stops)`, `console: ${server.console}`].join('\n'));
      ctx.note('ctxvm: demo server running; Ctrl-C or SIGTERM stops it');
      const signal = await waitForStopSignal();
      ctx.note(`ctxvm: ${signal}: stopping the demo server`);
    } finally {
      await server.close();
    }
  } finally {
    if (!opts.keep) await rm(home, { recursive: true, force: true });
  }
}
