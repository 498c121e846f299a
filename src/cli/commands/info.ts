/** `ctxvm info`: one snapshot or branch — lineage, files, storage, tokens and composition. */
import type { Command } from 'commander';
import { shortId, shortTime, withDagServices } from '../dag-services.js';
import { formatBytes, formatInt, formatPercent, table } from '../format.js';
import type { CommandContext } from '../io.js';
import { withJson } from '../command-kit.js';

export function registerInfo(program: Command, ctx: CommandContext): void {
  withJson(program.command('info'))
    .description('show a snapshot or branch: lineage, files, storage, and the tokens the agent would resume with')
    .argument('<name>', 'snapshot or branch name (or id prefix)')
    .option('--refresh', 'recount the tokens instead of using the cached numbers')
    .action(async (name: string, opts: { json?: boolean; refresh?: boolean }) => {
      const [{ describeNode }, { TOKEN_CATEGORIES }] = await Promise.all([import('../../session/dag/info.js'), import('../../session/context-model.js')]);
      const info = await withDagServices(ctx, (s) => describeNode({ catalog: s.catalog, store: s.store, ref: name, scratchDir: s.scratchDir, refresh: opts.refresh === true }));
      if (opts.json) return ctx.printJson(info);
      const lineage = info.lineage.map((n) => `${n.kind} ${n.name}`).join(' <- ');
      const children = info.children.map((n) => `${n.kind} ${n.name}`).join(', ') || 'none';
      const contextLines = (st: typeof info.stats) =>
        st
          ? [
              `  context    ${formatInt(st.tokens)} tokens, ${st.messages} messages, model ${st.model ?? 'unknown'} (${st.tokenizer})${st.errors ? `, ${st.errors} validation error(s)` : ''}`,
              table(
                ['category', 'tokens', 'share'],
                TOKEN_CATEGORIES.filter((c) => st.breakdown[c] > 0).map((c) => [`  ${c}`, formatInt(st.breakdown[c]), formatPercent(st.tokens ? st.breakdown[c] / st.tokens : 0)]),
              ),
            ]
          : info.statsError
            ? [`  context    not available: ${info.statsError}`]
            : [];
      if (info.kind === 'branch') {
        const b = info.branch;
        ctx.print(
          [
            `branch ${b.name} (${b.id})`,
            `  session    ${b.agent} ${b.sessionId}${b.trimmed ? ' (trimmed)' : ''}${b.cutAt ? `, cut at ${b.cutAt}` : ''}`,
            `  file       ${b.path}${info.bytes === null ? ' (no longer there)' : `  ${formatBytes(info.bytes)}`}`,
            `  created    ${shortTime(b.createdAtMs)}`,
            `  lineage    ${lineage}`,
            `  children   ${children}`,
            ...contextLines(info.stats),
          ].join('\n'),
        );
        return;
      }
      const s = info.snapshot;
      const lines = [
        `snapshot ${s.name} (${s.id})${s.description ? `: ${s.description}` : ''}`,
        `  session    ${s.agent} ${s.sessionId}${s.origin === 'import' ? ' (imported)' : ''}`,
        `  project    ${s.project ?? 'unknown'}`,
        `  source     ${s.sourcePath}`,
        `  created    ${shortTime(s.createdAtMs)}${s.tags.length ? `  tags: ${s.tags.join(', ')}` : ''}`,
        `  lineage    ${lineage}`,
        `  children   ${children}`,
        `  size       ${formatBytes(s.bytes)} in ${s.files} file(s); stored as ${info.storage.objects} object(s), ${formatBytes(info.storage.storedBytes)} (${formatBytes(info.storage.exclusiveBytes)} not shared with other snapshots)`,
        ...info.files.map((f) => `    ${f.role.padEnd(11)} ${f.path}  ${formatBytes(f.bytes)}`),
      ];
      lines.push(...contextLines(info.stats));
      ctx.print(lines.join('\n'));
    });
}
