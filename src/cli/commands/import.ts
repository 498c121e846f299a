/** `ctxvm import`: an archive written by `ctxvm export` becomes a snapshot here. */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { shortId, withDagServices } from '../dag-services.js';
import { formatBytes } from '../format.js';
import type { CommandContext } from '../io.js';
import { withJson } from '../command-kit.js';

/** Quote a snapshot name for a shell line only when it needs it. */
function quoteArg(s: string): string {
  return /^[\w.@:\/-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export function registerImport(program: Command, ctx: CommandContext): void {
  withJson(program.command('import'))
    .description('import a snapshot archive (checksums verified; links, absolute paths and .. refused)')
    .argument('<file>', 'archive written by `ctxvm export`')
    .option('--cwd <dir>', 'remap the session to this project directory (cwd fields and the project folder)')
    .option('--name <name>', 'name for the imported snapshot (default: its exported name)')
    .action(async (file: string, opts: { json?: boolean; cwd?: string; name?: string }) => {
      const { importSnapshot } = await import('../../session/dag/import.js');
      const r = await withDagServices(ctx, (s) =>
        importSnapshot({
          catalog: s.catalog,
          store: s.store,
          archive: resolve(ctx.io.cwd, file),
          ...(opts.cwd !== undefined ? { cwd: resolve(ctx.io.cwd, opts.cwd) } : {}),
          ...(opts.name !== undefined ? { name: opts.name } : {}),
        }),
      );
      // an import makes a snapshot, not a session the agent lists: the next step is a branch
      const next = `ctxvm branch ${quoteArg(r.name)} --name ${quoteArg(`${r.name}-imported`)}`;
      if (opts.json) {
        const { record, ...rest } = r;
        return ctx.printJson({ ...rest, agent: record.agent, sessionId: record.sessionId, project: record.project, next });
      }
      ctx.print(
        [
          `imported ${r.name} (${shortId(r.id)}): ${r.record.agent} session ${r.record.sessionId}, ${r.files} file(s), ${formatBytes(r.bytes)}`,
          r.remapped ? `  project remapped ${r.remapped.from} -> ${r.remapped.to} (${r.remapped.lines} line(s))` : `  project ${r.record.project ?? 'unknown'}`,
          `next: ${next}   (writes a session ${r.record.agent === 'codex' ? 'Codex' : 'Claude Code'} can resume; \`ctxvm sessions\` lists it then)`,
        ].join('\n'),
      );
    });
}
