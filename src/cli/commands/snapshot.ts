/** `ctxvm snapshot`: capture a session as a named, immutable node of the DAG. */
import type { Command } from 'commander';
import type { AgentKind } from '../../session/context-model.js';
import { agentOption, resolveSession, shortId, withDagServices } from '../dag-services.js';
import { formatBytes } from '../format.js';
import type { CommandContext } from '../io.js';
import { createProgress } from '../progress.js';
import { withJson } from '../command-kit.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerSnapshot(program: Command, ctx: CommandContext): void {
  withJson(program.command('snapshot'))
    .description('capture a session (with its subagent and tool-result files) as a named, immutable snapshot')
    .argument('<name>', 'unique name for the snapshot')
    .option('-s, --session <ref>', 'session id, id prefix or file path')
    .option('--latest', "the newest session of the current directory's project")
    .option('--agent <agent>', 'look only at claude or codex sessions', agentOption)
    .option('-d, --description <text>', 'what this snapshot is')
    .option('-t, --tag <tag>', 'a tag (repeatable)', collect)
    .action(async (name: string, opts: { json?: boolean; session?: string; latest?: boolean; agent?: AgentKind; description?: string; tag?: string[] }) => {
      const result = await withDagServices(ctx, async (services) => {
        const session = await resolveSession(ctx, services, opts.session, opts.latest === true, opts.agent);
        const { createSnapshot } = await import('../../session/dag/snapshot.js');
        const progress = createProgress(ctx.io.stderr, { label: `snapshot ${name}`, total: 0 });
        const snap = await createSnapshot({
          catalog: services.catalog,
          store: services.store,
          source: { agent: session.agent, sessionId: session.id, path: session.path, project: session.project, ...(session.siblingFiles ? { siblingFiles: session.siblingFiles } : {}) },
          name,
          ...(opts.description !== undefined ? { description: opts.description } : {}),
          ...(opts.tag ? { tags: opts.tag } : {}),
          onProgress: (done) => progress.update(done),
        });
        progress.done();
        return { snap, session };
      });
      const { snap, session } = result;
      if (snap.droppedTailBytes > 0) ctx.note(`note: left out an unfinished last line (${snap.droppedTailBytes} bytes): the session is still being written`);
      if (opts.json) {
        return ctx.printJson({
          id: snap.id,
          name: snap.name,
          bytes: snap.bytes,
          files: snap.files,
          manifest: snap.manifestHash,
          objects: snap.objects,
          newObjects: snap.newObjects,
          newStoredBytes: snap.newStoredBytes,
          storedBytes: snap.storedBytes,
          droppedTailBytes: snap.droppedTailBytes,
          parent: snap.record.parentSnapshotId,
          sourceBranch: snap.record.sourceBranchId,
          session: { agent: session.agent, id: session.id, path: session.path, project: session.project },
        });
      }
      ctx.print(
        [
          `snapshot ${snap.name} (${shortId(snap.id)}) of ${session.agent} session ${session.id}`,
          `  ${snap.files} file(s), ${formatBytes(snap.bytes)}; ${snap.newObjects} new object(s), ${formatBytes(snap.newStoredBytes)} added to the store (${snap.objects - snap.newObjects} shared)`,
        ].join('\n'),
      );
    });
}
