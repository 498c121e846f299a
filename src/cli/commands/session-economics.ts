/** `ctxvm session economics`: does trimming pay for these sessions, and after how many calls. */
import type { Command } from 'commander';
import { UsageError } from '../../errors.js';
import type { CommandContext } from '../io.js';
import { createProgress } from '../progress.js';
import { withJson } from '../command-kit.js';
import { formatInt, formatPercent, formatReduction, table } from '../format.js';
import type { EconomicsGroup, EconomicsReport } from '../../session/economics/economics.js';

function ttlOption(value: string): '5m' | '1h' {
  if (value === '5m' || value === '1h') return value;
  throw new UsageError(`--ttl must be 5m or 1h, got ${JSON.stringify(value)}`, { hint: 'the cache lifetime whose write price applies: 5m (1.25x input) or 1h (2x)' });
}

const turns = (n: number | null) => (n === null ? 'never' : String(n));
const mean = (n: number | null) => (n === null ? '-' : n.toFixed(1));

function groupRow(name: string, g: EconomicsGroup): string[] {
  return [
    name,
    String(g.n),
    g.n ? formatPercent(g.reductionMean) : '-',
    g.n ? formatPercent(g.reductionPeak) : '-',
    mean(g.breakEvenMean) + (g.neverBreakEven ? ` (${g.neverBreakEven} never)` : ''),
    mean(g.breakEvenMedian),
    g.n ? formatInt(g.contextMean) : '-',
    g.n ? `${formatPercent(g.over30.share)} (${g.over30.n})` : '-',
    mean(g.over30.breakEvenMean),
  ];
}

/** The per-session table and the paper's table, as text. */
export function formatEconomics(r: EconomicsReport, shortName: (file: string) => string): string {
  const lines: string[] = [];
  const prices = r.model ? `priced as ${r.model}` : "priced as each session's model";
  lines.push(`${r.sessions.length} session(s): ctxvm trim at the default policy; prompt caching with ${r.ttl} cache writes, ${prices}`);
  for (const [agent, method] of Object.entries(r.tokenizers)) lines.push(`  ${agent} tokens by ${method}`);
  if (r.sessions.length) {
    lines.push('');
    lines.push(
      table(
        ['session', 'agent', 'class', 'tokens', 'after trim', 'reduction', 'cache write', 'saving/call', 'break-even'],
        r.sessions.map((s) => [
          shortName(s.file),
          s.agent,
          s.class === 'mixed' ? 'mixed tool' : 'conversational',
          formatInt(s.tokens),
          formatInt(s.trimmedTokens),
          formatReduction(s.reduction),
          `$${s.cacheWriteUsd.toFixed(4)}`,
          `$${Math.max(0, s.perTurnSavingUsd).toFixed(4)}`,
          turns(s.breakEvenTurn),
        ]),
      ),
    );
  }
  lines.push('');
  lines.push(
    table(
      ['sessions', 'n', 'reduction mean', 'peak', 'break-even mean', 'median', 'context mean', 'reduced >30%', 'their break-even'],
      [groupRow('all', r.groups.all), groupRow('mixed tool', r.groups.mixed), groupRow('conversational', r.groups.conversational)],
    ),
  );
  lines.push('');
  lines.push('mixed tool: tool results are at least 15% of the tokens resent; break-even: the call after resuming from which');
  lines.push("trimming has paid for writing its new prefix to the cache, each later call reading fewer tokens (docs/economics.md)");
  if (r.skipped.length) {
    lines.push('');
    lines.push(`skipped ${r.skipped.length}:`);
    for (const s of r.skipped) lines.push(`  ${shortName(s.file)}: ${s.reason}`);
  }
  return lines.join('\n');
}

/** Registers `session economics` under `session`. */
export function registerSessionEconomics(session: Command, ctx: CommandContext): void {
  withJson(session.command('economics'))
    .description("the CMV paper's economics table for a set of sessions: reduction by ctxvm's trim, session class, and the call from which trimming pays under prompt caching")
    .argument('<paths...>', 'session files, or folders to search for them (e.g. ~/.claude/projects, ~/.codex/sessions)')
    .option('--model <name>', "price every session as this model (default: each session's own)")
    .option('--ttl <ttl>', 'cache lifetime whose write price applies: 5m or 1h (default 5m)', ttlOption)
    .action(async (paths: string[], opts: { json?: boolean; model?: string; ttl?: '5m' | '1h' }) => {
      const { sessionsEconomics } = await import('../../session/economics/economics.js');
      const { relative } = await import('node:path');
      let bar: ReturnType<typeof createProgress> | undefined;
      const report = await sessionsEconomics(paths, {
        cwd: ctx.io.cwd,
        ...(opts.model ? { model: opts.model } : {}),
        ...(opts.ttl ? { ttl: opts.ttl } : {}),
        onProgress: (done, total) => {
          bar ??= createProgress(ctx.io.stderr, { label: 'economics', total, unit: 'items' });
          bar.update(done);
        },
      });
      bar?.done();
      if (opts.json) return ctx.printJson(report);
      ctx.print(formatEconomics(report, (file) => {
        const r = relative(ctx.io.cwd, file);
        return (r.startsWith('..') ? file : r).slice(-60);
      }));
    });
}
