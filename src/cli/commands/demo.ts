import type { Command } from 'commander';
import type { CommandContext } from '../io.js';
import { withJson } from '../program.js';

export function registerDemo(program: Command, ctx: CommandContext): void {
  withJson(program.command('demo'))
    .description('run an offline tour of ctxvm on generated data (no network, temp folders)')
    .action(async (opts: { json?: boolean }) => {
      const result = { ok: true };
      if (opts.json) ctx.printJson(result);
      else ctx.print('ctxvm demo');
    });
}
