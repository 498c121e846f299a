/** `ctxvm tree`: the snapshot DAG, drawn like `git log --graph`. */
import type { Command } from 'commander';
import type { DagNode } from '../../session/dag/tree.js';
import { shortId, shortTime, withDagServices } from '../dag-services.js';
import { formatBytes } from '../format.js';
import type { CommandContext } from '../io.js';
import { withJson } from '../program.js';

function label(node: DagNode): string {
  if (node.kind === 'branch') {
    return `${node.name}  branch ${shortId(node.id)} -> ${node.agent} session ${node.sessionId}${node.trimmed ? ' (trimmed)' : ''}  ${shortTime(node.createdAtMs)}`;
  }
  const tags = node.tags?.length ? `  [${node.tags.join(', ')}]` : '';
  const description = node.description ? `  ${node.description}` : '';
  return `${node.name}  snapshot ${shortId(node.id)}  ${node.agent} ${shortId(node.sessionId)}  ${formatBytes(node.bytes ?? 0)}  ${shortTime(node.createdAtMs)}${tags}${description}`;
}

export function registerTree(program: Command, ctx: CommandContext): void {
  withJson(program.command('tree'))
    .description('draw snapshots, the branches made from them and later snapshots of those branches (newest first)')
    .action(async (opts: { json?: boolean }) => {
      const { buildDag, renderDag } = await import('../../session/dag/tree.js');
      const graph = await withDagServices(ctx, async (s) => buildDag(await s.catalog.listSnapshots(), await s.catalog.listBranches()), { objects: false });
      if (opts.json) return ctx.printJson(graph);
      if (graph.nodes.length === 0) return ctx.note('no snapshots yet: take one with `ctxvm snapshot <name> --latest`');
      ctx.print(renderDag(graph, label).join('\n'));
    });
}
