/** `ctxvm du`: logical versus stored bytes of all snapshots. */
import type { Command } from 'commander';
import { withDagServices } from '../dag-services.js';
import { formatBytes } from '../format.js';
import type { CommandContext } from '../io.js';
import { withJson } from '../command-kit.js';

export function registerDu(program: Command, ctx: CommandContext): void {
  withJson(program.command('du'))
    .description('storage used by snapshots: logical bytes, stored bytes, the ratio to the largest snapshot, and bytes on disk')
    .option('--all', 'also measure the whole object store (paged-out payloads of trimmed sessions too)')
    .action(async (opts: { json?: boolean; all?: boolean }) => {
      const { diskUsage } = await import('../../session/dag/maintenance.js');
      const { measureDisk } = await import('../../session/dag/disk-bytes.js');
      const u = await withDagServices(ctx, (s) => diskUsage({ catalog: s.catalog, store: s.store, includeStore: opts.all === true }));
      // measured once the database is closed, so its journal files of this very command do not count
      const config = ctx.config();
      u.disk = await measureDisk(config.home, config.objectsDir, /^postgres(ql)?:/.test(config.db) ? undefined : config.db);
      u.diskBytes = u.disk.total;
      if (opts.json) return ctx.printJson(u);
      ctx.print(
        [
          `snapshots  ${u.snapshots} (${u.branches} branch(es))`,
          `logical    ${formatBytes(u.logicalBytes)}  (sum of the captured files)`,
          `stored     ${formatBytes(u.storedBytes)}  (${u.objects} distinct objects, compressed)`,
          `ratio      ${u.ratio.toFixed(2)}x the largest snapshot (${formatBytes(u.largestSnapshotBytes)}); ${u.savings.toFixed(1)}x smaller than plain copies`,
          ...(u.store ? [`store      ${formatBytes(u.store.storedBytes)} in ${u.store.objects} objects overall`] : []),
          ...(u.disk
            ? [
                `on disk    ${formatBytes(u.disk.total)}  (packs ${formatBytes(u.disk.packs)}, loose objects ${formatBytes(u.disk.looseObjects)}, refs ${formatBytes(u.disk.refs)}, database ${formatBytes(u.disk.database)}, other ${formatBytes(u.disk.other)}; \`ctxvm gc\` packs loose objects)`,
              ]
            : []),
        ].join('\n'),
      );
    });
}
