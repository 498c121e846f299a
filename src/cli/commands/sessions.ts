/** `ctxvm sessions`: Claude Code and Codex sessions on this machine, from the incremental index. */
import { isAbsolute, resolve, sep } from 'node:path';
import type { Command } from 'commander';
import type { DiscoveredSession } from '../../session/discovery/discover.js';
import { agentOption, discover, shortTime, withDagServices } from '../dag-services.js';
import { formatBytes, formatInt, table } from '../format.js';
import type { CommandContext } from '../io.js';
import { withJson } from '../command-kit.js';

/** Whether `session` belongs to project `p`: a path (that folder or one inside it) or a substring of the project. */
export function matchesProject(session: DiscoveredSession, p: string, cwd: string, encodeClaudeProjectDir: (cwd: string) => string): boolean {
  const looksLikePath = isAbsolute(p) || p.startsWith('.') || p.includes(sep);
  if (looksLikePath) {
    const dir = resolve(cwd, p);
    if (session.project && (session.project === dir || session.project.startsWith(dir.endsWith(sep) ? dir : dir + sep))) return true;
    return session.agent === 'claude' && session.projectDir === encodeClaudeProjectDir(dir);
  }
  return (session.project ?? session.projectDir ?? '').includes(p);
}

/** The title column: the session's own title, and for a branch ctxvm made, which one. */
function titleOf(s: DiscoveredSession): string {
  const title = (s.title ?? '').slice(0, 60);
  if (!s.ctxvmBranch) return title;
  const mark = `[ctxvm ${s.ctxvmBranch.trimmed ? 'trimmed ' : ''}branch ${s.ctxvmBranch.name}]`;
  return title ? `${mark} ${title}` : mark;
}

export function registerSessions(program: Command, ctx: CommandContext): void {
  withJson(program.command('sessions'))
    .description('list agent sessions (Claude Code and Codex), newest first; only changed files are re-read')
    .option('--agent <agent>', 'only claude or codex sessions', agentOption)
    .option('--project <p>', 'only sessions of this project: a directory (and folders inside it) or part of its path')
    .option('--latest', "only the newest session of the current directory's project")
    .action(async (opts: { json?: boolean; agent?: 'claude' | 'codex'; project?: string; latest?: boolean }) => {
      const { sessions } = await withDagServices(ctx, (s) => discover(s, opts.agent), { objects: false });
      let list = sessions;
      // the resolver is needed only to filter; a plain listing does not load it
      if (opts.project || opts.latest) {
        const { encodeClaudeProjectDir, latestSessionFor } = await import('../../session/discovery/resolve.js');
        if (opts.project) list = list.filter((s) => matchesProject(s, opts.project!, ctx.io.cwd, encodeClaudeProjectDir));
        if (opts.latest) {
          const latest = latestSessionFor(resolve(ctx.io.cwd), list, opts.agent);
          list = latest ? [latest] : [];
        }
      }
      if (opts.json) return ctx.printJson(list);
      if (list.length === 0) {
        ctx.note(opts.latest ? `no session found for ${ctx.io.cwd}` : 'no sessions found');
        return;
      }
      ctx.print(
        table(
          ['agent', 'id', 'updated', 'messages', 'size', 'project', 'title'],
          list.map((s) => [s.agent, s.id, shortTime(s.updatedAt), `${s.messagesExact ? '' : '~'}${formatInt(s.messages)}`, formatBytes(s.bytes), s.project ?? `(${s.projectDir ?? '?'})`, titleOf(s)]),
        ),
      );
      if (list.some((s) => !s.messagesExact)) ctx.note('~ marks a quick count (files over 16 MiB are not reconstructed for the list); `ctxvm session analyze <file>` counts exactly');
      const otherProvider = list.filter((s) => s.modelProvider);
      if (otherProvider.length > 0) {
        const names = [...new Set(otherProvider.map((s) => s.modelProvider))].join(', ');
        ctx.note(`${otherProvider.length} Codex session(s) were recorded with another model provider (${names}): \`codex resume\` refuses them unless that provider is configured in config.toml`);
      }
    });
}
