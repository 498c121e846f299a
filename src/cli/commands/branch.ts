/** `ctxvm branch`: a new session from a snapshot — new ids, trimmed by default, optionally cut. */
import type { Command } from 'commander';
import type { SnapshotBranchResult } from '../../session/dag/branch-snapshot.js';
import { shortId, withDagServices } from '../dag-services.js';
import { formatBytes, formatInt, formatPercent } from '../format.js';
import type { CommandContext } from '../io.js';
import { withJson } from '../command-kit.js';
import { branchJson } from '../../session/dag/branch-json.js';

export { branchJson };


/** Human-readable lines for a branch. */
export function branchLines(r: SnapshotBranchResult): string[] {
  const lines = [`branch ${r.branch.name} (${shortId(r.branch.id)}) of snapshot ${r.snapshot.name}: ${r.agent} session ${r.sessionId}`, `  file     ${r.path}`];
  if (r.at) lines.push(`  cut at   line ${r.at.line}${r.at.turn !== undefined ? ` (turn ${r.at.turn})` : ''}${r.at.uuid ? ` ${r.at.uuid}` : ''}; ${r.at.droppedLines} later line(s) left out`);
  if (r.trimmed) {
    const t = r.trimmed;
    lines.push(`  trimmed  ${formatInt(t.input.tokens ?? 0)} -> ${formatInt(t.output.tokens ?? 0)} tokens (-${formatPercent(t.reduction ?? 0)}), ${formatBytes(t.input.bytes)} -> ${formatBytes(t.output.bytes)}`);
  }
  lines.push(`  resume   ${r.cwd ? `cd ${JSON.stringify(r.cwd)} && ` : ''}${r.resume}`);
  return lines;
}

export function registerBranch(program: Command, ctx: CommandContext): void {
  withJson(program.command('branch'))
    .description('start a new session from a snapshot: new ids, trimmed (unless --no-trim), optionally cut at a message; prints the resume command')
    .argument('<snapshot>', 'snapshot name (or id prefix)')
    .requiredOption('-n, --name <name>', 'unique name for the branch')
    .option('--no-trim', 'keep every payload (no trimming)')
    .option('--at <uuid|turn>', 'cut after this message uuid (8+ hex digits) or turn number (1 = first prompt)')
    .option('--title <title>', 'title shown in the Claude Code session picker')
    .action(async (snapshot: string, opts: { json?: boolean; name: string; trim: boolean; at?: string; title?: string }) => {
      const { branchFromSnapshot } = await import('../../session/dag/branch-snapshot.js');
      const r = await withDagServices(ctx, (s) =>
        branchFromSnapshot({
          catalog: s.catalog,
          store: s.store,
          snapshot,
          name: opts.name,
          trim: opts.trim,
          ...(opts.at !== undefined ? { at: opts.at } : {}),
          ...(opts.title !== undefined ? { title: opts.title } : {}),
          claudeConfigDir: s.config.claudeConfigDir,
          codexHome: s.config.codexHome,
          scratchDir: s.scratchDir,
        }),
      );
      for (const w of r.warnings) ctx.note(`note: ${w}`);
      if (opts.json) return ctx.printJson(branchJson(r));
      ctx.print(branchLines(r).join('\n'));
    });
}
