/** `ctxvm export`: one snapshot as a tar archive with a checksummed manifest. */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { withDagServices } from '../dag-services.js';
import { formatBytes } from '../format.js';
import type { CommandContext } from '../io.js';
import { withJson } from '../command-kit.js';
import { resolveOutputTarget } from '../output-path.js';

export function registerExport(program: Command, ctx: CommandContext): void {
  withJson(program.command('export'))
    .description('write a snapshot to one archive (tar; gzip with .gz/.tgz or --gzip) that `ctxvm import` reads elsewhere')
    .argument('<name>', 'snapshot name (or id prefix)')
    .requiredOption('-o, --output <file>', 'archive to write (a regular file, written atomically)')
    .option('--gzip', 'compress with gzip whatever the file name')
    .action(async (name: string, opts: { json?: boolean; output: string; gzip?: boolean }) => {
      const target = await resolveOutputTarget(ctx.io.cwd, opts.output, { allowStdout: false });
      const output = target.kind === 'file' ? target.path : resolve(ctx.io.cwd, opts.output);
      const { exportSnapshot } = await import('../../session/dag/export.js');
      const r = await withDagServices(ctx, (s) => exportSnapshot({ catalog: s.catalog, store: s.store, ref: name, output, ...(opts.gzip ? { gzip: true } : {}) }));
      if (opts.json) return ctx.printJson(r);
      ctx.print(`exported ${r.snapshot.name} (${r.files} file(s)) to ${r.path}: ${formatBytes(r.bytes)}${r.gzip ? ' gzip' : ''}, sha256 ${r.sha256}`);
    });
}
