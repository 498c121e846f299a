/** `ctxvm tree`: the snapshot DAG, drawn like `git log --graph`. */
import type { Command } from 'commander';
import type { DagNodeWithStats } from '../../session/dag/tree-stats.js';
import { shortId, shortTime, withDagServices } from '../dag-services.js';
import { formatBytes, formatInt } from '../format.js';
import type { CommandContext } from '../io.js';
import { withJson } from '../command-kit.js';

function size(node: DagNodeWithStats): string {
  const tokens = node.tokens === null ? '? tokens' : `${formatInt(node.tokens)} tokens`;
  return `${tokens}, ${node.bytes === undefined ? 'file gone' : formatBytes(node.bytes)}`;
}

function label(node: DagNodeWithStats): string {
  if (node.kind === 'branch') {
    return `${node.name}  branch ${shortId(node.id)} -> ${node.agent} session ${node.sessionId}${node.trimmed ? ' (trimmed)' : ''}  ${size(node)}  ${shortTime(node.createdAtMs)}`;
  }
  const tags = node.tags?.length ? `  [${node.tags.join(', ')}]` : '';
  const description = node.description ? `  ${node.description}` : '';
  return `${node.name}  snapshot ${shortId(node.id)}  ${node.agent} ${shortId(node.sessionId)}  ${size(node)}  ${shortTime(node.createdAtMs)}${tags}${description}`;
}

export function registerTree(program: Command, ctx: CommandContext): void {
  withJson(program.command('tree'))
    .description('draw snapshots, the branches made from them and later snapshots of those branches, with tokens and size (one tree per root, newest first)')
    .action(async (opts: { json?: boolean }) => {
      const [{ renderDag }, { dagWithStats }] = await Promise.all([import('../../session/dag/tree.js'), import('../../session/dag/tree-stats.js')]);
      const graph = await withDagServices(ctx, (s) => dagWithStats({ catalog: s.catalog, store: s.store, scratchDir: s.scratchDir }));
      if (opts.json) return ctx.printJson(graph);
      if (graph.nodes.length === 0) return ctx.note('no snapshots yet: take one with `ctxvm snapshot <name> --latest`');
      ctx.print(renderDag(graph, label).join('\n'));
    });
}
