/** `ctxvm gc`: release what crashed commands left behind, collect unreferenced objects and temp files. */
import { join } from 'node:path';
import { readdir } from 'node:fs/promises';
import type { Command } from 'commander';
import { durationOption, withDagServices } from '../dag-services.js';
import { formatBytes } from '../format.js';
import type { CommandContext } from '../io.js';
import { withJson } from '../command-kit.js';

async function subfolders(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((d) => d.isDirectory() && !d.name.startsWith('.')).map((d) => join(dir, d.name));
  } catch {
    return [];
  }
}

/** Folders where an interrupted branch may have left a temp file or a staging folder. */
async function agentFolders(claudeConfigDir: string, codexHome: string): Promise<string[]> {
  const claude = await subfolders(join(claudeConfigDir, 'projects'));
  // Codex: sessions/YYYY/MM/DD
  let codex = [join(codexHome, 'sessions')];
  for (let depth = 0; depth < 3; depth++) codex = (await Promise.all(codex.map(subfolders))).flat();
  return [...claude, ...codex];
}

export function registerGc(program: Command, ctx: CommandContext): void {
  withJson(program.command('gc'))
    .description('collect garbage: objects no snapshot or trimmed session needs, leftovers of interrupted commands')
    .option('--grace <duration>', 'keep unreferenced objects younger than this (default 10m; 0 collects everything)', durationOption('--grace'))
    .action(async (opts: { json?: boolean; grace?: number }) => {
      const { collectSessionGarbage } = await import('../../session/dag/maintenance.js');
      const { releaseFreePages } = await import('../../store/warm/free-pages.js');
      const r = await withDagServices(ctx, async (s) => {
        const collected = await collectSessionGarbage({
          catalog: s.catalog,
          store: s.store,
          ...(opts.grace !== undefined ? { graceMs: opts.grace } : {}),
          tempDirs: await agentFolders(s.config.claudeConfigDir, s.config.codexHome),
          scratchDir: s.scratchDir,
        });
        // after the catalog rows gc deleted: their pages go back to the file system
        return { ...collected, database: await releaseFreePages(s.db) };
      });
      if (opts.json) return ctx.printJson(r);
      ctx.print(
        [
          `objects: ${r.objects.deleted} of ${r.objects.scanned} deleted, ${formatBytes(r.objects.freedBytes)} freed`,
          `interrupted snapshots cleaned: ${r.abandonedSnapshots}; orphaned references released: ${r.orphanReferences}; temp files removed: ${r.tempFiles}`,
          ...(r.database.releasedBytes > 0 ? [`database: ${formatBytes(r.database.releasedBytes)} of free pages released`] : []),
          ...(r.database.remainingFreeBytes > 0
            ? [`database: ${formatBytes(r.database.remainingFreeBytes)} of free pages kept (file made before incremental auto-vacuum; VACUUM it to reclaim)`]
            : []),
        ].join('\n'),
      );
    });
}
