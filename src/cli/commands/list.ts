/** `ctxvm list`: snapshots, oldest first. */
import type { Command } from 'commander';
import { shortId, shortTime, withDagServices } from '../dag-services.js';
import { formatBytes, table } from '../format.js';
import type { CommandContext } from '../io.js';
import { withJson } from '../command-kit.js';

export function registerList(program: Command, ctx: CommandContext): void {
  withJson(program.command('list'))
    .description('list snapshots, oldest first')
    .option('-t, --tag <tag>', 'only snapshots with this tag')
    .action(async (opts: { json?: boolean; tag?: string }) => {
      const { snapshots, branches } = await withDagServices(ctx, async (s) => ({ snapshots: await s.catalog.listSnapshots(), branches: await s.catalog.listBranches() }), { objects: false });
      const list = opts.tag ? snapshots.filter((s) => s.tags.includes(opts.tag!)) : snapshots;
      const branchCount = (id: string) => branches.filter((b) => b.snapshotId === id).length;
      if (opts.json) return ctx.printJson(list.map(({ stats: _stats, ...s }) => ({ ...s, branches: branchCount(s.id) })));
      if (list.length === 0) return ctx.note('no snapshots yet: take one with `ctxvm snapshot <name> --latest`');
      ctx.print(
        table(
          ['name', 'id', 'agent', 'session', 'size', 'files', 'branches', 'created', 'tags'],
          list.map((s) => [s.name, shortId(s.id), s.agent, shortId(s.sessionId), formatBytes(s.bytes), String(s.files), String(branchCount(s.id)), shortTime(s.createdAtMs), s.tags.join(',')]),
        ),
      );
    });
}
