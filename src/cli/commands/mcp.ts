/** `ctxvm mcp`: the MCP server over stdio (memory tools for one user, session tools). */
import type { Command } from 'commander';
import type { CommandContext } from '../io.js';
import { defaultZoneOption, requireUser } from '../memory-options.js';
import { PACKAGE_VERSION } from '../version.js';

export function registerMcp(program: Command, ctx: CommandContext): void {
  program
    .command('mcp')
    .description('serve MCP over stdio: memory_context, memory_remember, tasks_list, task_update, session_page_in, session_snapshot, session_trim (register: `claude mcp add ctxvm -- ctxvm mcp --user me`)')
    .option('--user <id>', 'the user the memory tools act for (default $CTXVM_USER)')
    .option('--tz <zone>', "time zone of a user who has not stated one (IANA name, +08:00, or minutes east of UTC; default: this machine's); a tool call's timeZone is stored as the user's")
    .action(async (opts: { user?: string; tz?: string }) => {
      const raw = opts.user ?? ctx.io.env.CTXVM_USER;
      const userId = raw !== undefined && raw.trim() !== '' ? requireUser(raw) : undefined;
      const [{ openServerServices }, { serveMcpStdio }] = await Promise.all([import('../../server/open-services.js'), import('../../server/mcp.js')]);
      // stdout carries the protocol: everything else goes to stderr
      const services = await openServerServices({
        config: ctx.config(),
      env: ctx.io.env,
        cwd: ctx.io.cwd,
        timeZone: defaultZoneOption(opts.tz),
        hotLogger: { error: (m) => ctx.note(`ctxvm mcp: ${m}`), warn: (m) => ctx.note(`ctxvm mcp: ${m}`) },
      });
      try {
        if (!userId) ctx.note('ctxvm mcp: no --user or CTXVM_USER: the memory tools will ask for one; the session tools work');
        await serveMcpStdio(services, { ...(userId ? { userId } : {}), version: PACKAGE_VERSION, cwd: ctx.io.cwd, onError: (e) => ctx.note(`ctxvm mcp: ${e.message}`) });
      } finally {
        await services.close();
      }
    });
}
