/** `ctxvm rm`: remove a snapshot (refuses while branches depend on it unless --cascade). */
import type { Command } from 'commander';
import { withDagServices } from '../dag-services.js';
import type { CommandContext } from '../io.js';
import { withJson } from '../command-kit.js';

export function registerRm(program: Command, ctx: CommandContext): void {
  withJson(program.command('rm'))
    .description('remove a snapshot and release its storage (run `ctxvm gc` to reclaim space)')
    .argument('<name>', 'snapshot name (or id prefix)')
    .option('--cascade', 'also remove the branches made from it and the snapshots taken of them (their session files are kept)')
    .action(async (name: string, opts: { json?: boolean; cascade?: boolean }) => {
      const { removeSnapshot } = await import('../../session/dag/maintenance.js');
      const r = await withDagServices(ctx, (s) => removeSnapshot({ catalog: s.catalog, store: s.store, ref: name, cascade: opts.cascade === true }));
      if (opts.json) return ctx.printJson(r);
      ctx.print(`removed ${r.snapshots.map((s) => `snapshot ${s.name}`).concat(r.branches.map((b) => `branch ${b.name}`)).join(', ')}; ${r.released} object reference(s) released`);
      for (const b of r.branches) ctx.note(`kept the session file of branch ${b.name}: ${b.path}`);
    });
}
