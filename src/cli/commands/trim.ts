/** `ctxvm trim`: snapshot a session and start a trimmed branch of it, in one step. */
import type { Command } from 'commander';
import { CtxvmError } from '../../errors.js';
import type { AgentKind } from '../../session/context-model.js';
import { agentOption, resolveSession, shortId, withDagServices } from '../dag-services.js';
import type { CommandContext } from '../io.js';
import { createProgress } from '../progress.js';
import { withJson } from '../command-kit.js';
import { branchJson, branchLines } from './branch.js';

export function registerTrim(program: Command, ctx: CommandContext): void {
  withJson(program.command('trim'))
    .description('snapshot a session, then branch it trimmed: the original stays untouched; prints the resume command')
    .option('--latest', "the newest session of the current directory's project")
    .option('-s, --session <ref>', 'session id, id prefix or file path')
    .option('--agent <agent>', 'look only at claude or codex sessions', agentOption)
    .option('--name <name>', 'name of the snapshot (default <session id prefix>-<UTC time>); the branch is <name>-trimmed')
    .option('--at <uuid|turn>', 'also cut the branch after this message uuid or turn number')
    .action(async (opts: { json?: boolean; latest?: boolean; session?: string; agent?: AgentKind; name?: string; at?: string }) => {
      const [{ createSnapshot }, { branchFromSnapshot }, { freeSnapshotName, generatedSnapshotName }] = await Promise.all([
        import('../../session/dag/snapshot.js'),
        import('../../session/dag/branch-snapshot.js'),
        import('../../session/dag/record-branch.js'),
      ]);
      const r = await withDagServices(ctx, async (s) => {
        const session = await resolveSession(ctx, s, opts.session, opts.latest === true, opts.agent);
        const progress = createProgress(ctx.io.stderr, { label: 'snapshot', total: 0 });
        const snapshotAs = (name: string) =>
          createSnapshot({
            catalog: s.catalog,
            store: s.store,
            source: { agent: session.agent, sessionId: session.id, path: session.path, project: session.project, ...(session.siblingFiles ? { siblingFiles: session.siblingFiles } : {}) },
            name,
            tags: ['trim'],
            onProgress: (done) => progress.update(done),
            // published with the branch, never alone (a killed trim leaves a pending row gc clears)
            deferCommit: true,
          });
        // A generated name that another `ctxvm trim` of the session took in the same second (it
        // published first: the name is checked again when snapshot and branch are published
        // together) is retried with the next free suffix; a name given with --name is not.
        for (let attempt = 1; ; attempt++) {
          const name = opts.name ?? (await freeSnapshotName(s.catalog, generatedSnapshotName(session.id, Date.now()), ['-trimmed']));
          const retry = (error: unknown) => opts.name === undefined && attempt < 5 && CtxvmError.is(error) && error.code === 'E_EXISTS';
          let snap;
          try {
            snap = await snapshotAs(name);
          } catch (error) {
            if (retry(error)) continue;
            throw error;
          }
          progress.done();
          try {
            const branch = await branchFromSnapshot({
              catalog: s.catalog,
              store: s.store,
              snapshot: snap.id,
              unpublished: snap.toPublish!,
              name: `${snap.name}-trimmed`,
              ...(opts.at !== undefined ? { at: opts.at } : {}),
              claudeConfigDir: s.config.claudeConfigDir,
              codexHome: s.config.codexHome,
              scratchDir: s.scratchDir,
            });
            return { snap, branch };
          } catch (error) {
            if (!(await s.catalog.findSnapshot(snap.id))) await snap.abandon!();
            if (retry(error)) continue;
            throw error;
          }
        }
      });
      for (const w of r.branch.warnings) ctx.note(`note: ${w}`);
      if (opts.json) return ctx.printJson({ ...branchJson(r.branch), snapshot: { id: r.snap.id, name: r.snap.name, bytes: r.snap.bytes } });
      ctx.print([`snapshot ${r.snap.name} (${shortId(r.snap.id)}) taken; the original session is untouched`, ...branchLines(r.branch)].join('\n'));
    });
}
