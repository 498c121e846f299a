/** `ctxvm chat --user U`: talk to the memory engine (offline responder unless an LLM is configured). */
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import type { ProcessResult } from '../../memory/manager.js';
import { processResultJson } from '../../memory/result-json.js';
import type { CommandContext } from '../io.js';
import { withJson } from '../command-kit.js';
import { openMemoryServices } from '../memory-services.js';
import { parseInstant, parseTimeZoneOption, positiveInt, requireUser } from '../memory-options.js';
import { formatInt } from '../format.js';

export function registerChat(program: Command, ctx: CommandContext): void {
  withJson(program.command('chat'))
    .description('chat with memory: every message is extracted into tasks and facts, and each reply is built from a rebuilt context (offline responder, no network)')
    .requiredOption('--user <id>', 'user id')
    .option('-m, --message <text...>', 'send these messages and exit instead of starting a prompt')
    .option('--budget <tokens>', 'context budget (default 2000)', positiveInt('--budget'))
    .option('--tz <zone>', "your time zone (IANA name, +08:00, or minutes east of UTC), stored as the user's and used by every later output; default: the one stored, else this machine's")
    .option('--now <iso>', 'pretend it is this time (for scripted runs)')
    .action(async (opts: { user: string; message?: string[]; budget?: number; tz?: string; now?: string; json?: boolean }) => {
      const userId = requireUser(opts.user);
      const timeZone = opts.tz !== undefined ? parseTimeZoneOption(opts.tz) : undefined;
      const services = await openMemoryServices(ctx, opts.budget !== undefined ? { budgetTokens: opts.budget } : {});
      const now = opts.now !== undefined ? parseInstant(opts.now, '--now') : undefined;
      const { createLlmFromEnv } = await import('../../llm/from-env.js');
      const configured = createLlmFromEnv(ctx.io.env);
      if (!opts.json && configured.name !== 'offline') ctx.note(`replies from ${configured.name} (${configured.model})`);
      const results: ProcessResult[] = [];
      const send = async (text: string) => {
        const result = await services.manager.processMessage({ userId, text, ...(now !== undefined ? { now } : {}), ...(timeZone !== undefined ? { timeZone } : {}) }, configured.llm);
        if (opts.json) results.push(result);
        else {
          ctx.print(result.response);
          const m = result.metrics;
          ctx.note(`  [${result.extraction.intent} ${result.extraction.confidence.toFixed(2)} · context ${formatInt(m.contextTokens)} tokens vs full history ${formatInt(m.fullHistoryTokens)} · ${m.latencyMs.total.toFixed(1)} ms]`);
        }
      };
      try {
        if (opts.message) {
          for (const text of opts.message) await send(text);
          if (opts.json) ctx.printJson(results.map(processResultJson));
          return;
        }
        if (process.stdin.isTTY) {
          const rl = createInterface({ input: process.stdin, output: ctx.io.stderr, terminal: true });
          ctx.note(`chatting as ${userId} — an empty line or Ctrl-D ends`);
          try {
            for (;;) {
              let line: string;
              try {
                line = await rl.question('> ');
              } catch {
                break; // closed (Ctrl-D)
              }
              if (line.trim() === '') break;
              await send(line);
            }
          } finally {
            rl.close();
          }
        } else {
          // piped input: the line iterator buffers what arrives while a reply is being made, so
          // every line is sent (question() would drop lines read while it was not waiting)
          const rl = createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
          try {
            for await (const line of rl) if (line.trim() !== '') await send(line);
          } finally {
            rl.close();
          }
        }
        if (opts.json) ctx.printJson(results.map(processResultJson));
      } finally {
        await services.close();
      }
    });
}
