/**
 * `ctxvm demo`: an offline tour in a temporary home, on generated data. The sections live in
 * src/demo (sections.ts); this file only makes the folder, runs them in order, and prints each
 * one as it finishes — or, with --json, one document with every section's result under its name.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { CommandContext } from '../io.js';
import { ExitCode, withJson } from '../program.js';

export function registerDemo(program: Command, ctx: CommandContext): void {
  withJson(program.command('demo'))
    .description('run an offline tour of ctxvm on generated data, in a temporary folder (no network)')
    .option('--keep', 'keep the temporary folder and print its path')
    .option('--tz <zone>', 'time zone for the date examples', 'Asia/Shanghai')
    .action(async (opts: { json?: boolean; keep?: boolean; tz: string }) => {
      const { DEMO_SECTIONS } = await import('../../demo/sections.js');
      const home = await mkdtemp(join(tmpdir(), 'ctxvm-demo-'));
      const say = (lines: string[]) => {
        if (!opts.json) ctx.print(lines.join('\n'));
      };
      const doc: Record<string, unknown> = {};
      const ms: Record<string, number> = {};
      const problems: string[] = [];
      try {
        say([`ctxvm demo — offline, in ${home}`]);
        const nowMs = Date.now();
        for (const [i, section] of DEMO_SECTIONS.entries()) {
          const started = performance.now();
          const result = await section.run({ home, timeZone: opts.tz, nowMs });
          ms[section.name] = Math.round(performance.now() - started);
          doc[section.name] = result;
          problems.push(...(section.problems?.(result) ?? []).map((p) => `${section.name}: ${p}`));
          say(['', `${i + 1}. ${section.title}`, ...section.render(result).map((l) => `   ${l}`)]);
        }
      } finally {
        if (!opts.keep) await rm(home, { recursive: true, force: true });
      }
      if (opts.json) ctx.printJson({ ok: problems.length === 0, problems, home: opts.keep ? home : null, ms, ...doc });
      else {
        say(['', problems.length ? `problems:\n${problems.map((p) => `  ${p}`).join('\n')}` : `all checks held (${Object.values(ms).reduce((a, b) => a + b, 0)} ms)`]);
        if (opts.keep) say([`kept ${home}`]);
      }
      if (problems.length) throw new ExitCode(1);
    });
}
