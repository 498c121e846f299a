/**
 * `ctxvm memory export | import | compact`: moving one user's memory in and out as a portable,
 * versioned JSONL file (src/memory/portable/format.ts), and compacting the cold turn archive.
 * Registered by memory.ts.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../../errors.js';
import type { SqlMemoryStore } from '../../memory/store/sql-memory-store.js';
import type { CommandContext } from '../io.js';
import { formatBytes, formatInt } from '../format.js';
import { requireUser, positiveInt } from '../memory-options.js';
import { withJson } from '../command-kit.js';
import { resolveOutputTarget } from '../output-path.js';

/** The warm store of the configuration, opened alone (no hot tier, no archive). */
async function openWarmStore(ctx: CommandContext): Promise<SqlMemoryStore> {
  const config = ctx.config();
  const { openMemoryStore } = await import('../../memory/store/sql-memory-store.js');
  if (!/^postgres(ql)?:\/\//i.test(config.db)) await mkdir(dirname(config.db), { recursive: true });
  return openMemoryStore({ db: config.db });
}

const hotLogger = (ctx: CommandContext) => ({ error: (m: string) => ctx.note(`warning: ${m}`), warn: (m: string) => ctx.note(`warning: ${m}`) });

/** Registers the commands on the `memory` command. */
export function registerMemoryCold(memory: Command, ctx: CommandContext): void {
  withJson(memory.command('export'))
    .description("write a user's memory (turns, tasks, projects, decisions, facts, history) as portable JSON lines")
    .requiredOption('--user <id>', 'user id')
    .option('-o, --output <file>', 'file to write (atomically; default: standard output)')
    .action(async (opts: { user: string; output?: string; json?: boolean }) => {
      const userId = requireUser(opts.user);
      const target = opts.output === undefined ? undefined : await resolveOutputTarget(ctx.io.cwd, opts.output);
      if (target?.kind === 'stdout') delete opts.output;
      if (opts.json && opts.output === undefined) throw new UsageError('--json needs -o FILE: without it the export itself is printed on stdout');
      const [{ readPortableMemory }, { portableLines }, { JsonlWriter }] = await Promise.all([
        import('../../memory/store/portable-export.js'),
        import('../../memory/portable/codec.js'),
        import('../../core/jsonl.js'),
      ]);
      const store = await openWarmStore(ctx);
      let records;
      try {
        records = await readPortableMemory(store.db, userId);
      } finally {
        await store.close();
      }
      const counts: Record<string, number> = {};
      for (const r of records) counts[r.type] = (counts[r.type] ?? 0) + 1;
      const lines = portableLines(userId, records, Date.now());
      if (opts.output === undefined) {
        for (const line of lines) ctx.io.stdout.write(`${line}\n`);
        if (records.length === 0) ctx.note(`note: user ${JSON.stringify(userId)} has no memory; wrote only the header`);
        return;
      }
      const file = target?.kind === 'file' ? target.path : resolve(ctx.io.cwd, opts.output);
      const writer = await JsonlWriter.open(file);
      for (const line of lines) await writer.writeRaw(`${line}\n`);
      await writer.close();
      if (opts.json) return ctx.printJson({ user: userId, file, bytes: writer.bytes, records: counts });
      ctx.print(`exported ${formatInt(records.length)} records of ${userId} to ${file} (${formatBytes(writer.bytes)}): ${describeCounts(counts)}`);
    });

  withJson(memory.command('import'))
    .description('read a file written by `ctxvm memory export` into a user that has no memory yet (all or nothing)')
    .argument('<file>', 'the export ("-" for standard input)')
    .option('--user <id>', "import as this user (default: the user named in the file's header)")
    .action(async (input: string, opts: { user?: string; json?: boolean }) => {
      const [{ readPortable }, { readJsonl, parseJsonlLines, linesFromChunks }, { importPortableMemory }] = await Promise.all([
        import('../../memory/portable/codec.js'),
        import('../../core/jsonl.js'),
        import('../../memory/store/portable-import.js'),
      ]);
      const name = input === '-' ? '<stdin>' : resolve(ctx.io.cwd, input);
      const lines = input === '-' ? parseJsonlLines(linesFromChunks(process.stdin as AsyncIterable<Uint8Array>, { name }), name) : readJsonl(name);
      const parsed = await readPortable(lines, name);
      const userId = opts.user !== undefined ? requireUser(opts.user) : parsed.header.user;
      const store = await openWarmStore(ctx);
      const config = ctx.config();
      try {
        const counts = await importPortableMemory(userId, parsed.records, { db: store.db });
        // Then the hot tier (values cached for this user before it had memory) and the cold archive.
        const { createHotCache } = await import('../../store/open-hot-cache.js');
        const hot = await createHotCache({ redisUrl: config.redis, logger: hotLogger(ctx) });
        await hot.invalidateUser(userId).finally(() => hot.close());
        const turns = parsed.records.flatMap(({ record: r }) => (r.type === 'turn' ? [r] : []));
        if (turns.length > 0) {
          const [{ createFsObjectStore }, { createTurnArchive }] = await Promise.all([import('../../store/drivers/objects-fs.js'), import('../../memory/store/turn-archive.js')]);
          const archive = createTurnArchive({ objects: createFsObjectStore({ root: config.objectsDir }), db: store.db });
          for (let i = 0; i < turns.length; i += 1000) await archive.append(userId, turns.slice(i, i + 1000));
        }
        if (opts.json) return ctx.printJson({ user: userId, file: name, from: parsed.header.user, exportedAt: parsed.header.exportedAt, records: counts });
        ctx.print(`imported ${formatInt(parsed.records.length)} records into ${userId} from ${name}: ${describeCounts(counts)}`);
      } finally {
        await store.close();
      }
    });

  withJson(memory.command('compact'))
    .description('merge small closed segments of the cold turn archive into bigger ones (old objects are released for gc)')
    .option('--user <id>', 'only this user (default: every user with small segments)')
    .option('--target-bytes <n>', 'largest merged segment, bytes (default 1 MiB)', positiveInt('--target-bytes'))
    .action(async (opts: { user?: string; targetBytes?: number; json?: boolean }) => {
      const [{ compactTurnArchive, usersToCompact }, { createFsObjectStore }] = await Promise.all([
        import('../../memory/store/archive-compaction.js'),
        import('../../store/drivers/objects-fs.js'),
      ]);
      const store = await openWarmStore(ctx);
      try {
        const sizes = opts.targetBytes !== undefined ? { targetBytes: opts.targetBytes } : {};
        const users = opts.user !== undefined ? [requireUser(opts.user)] : await usersToCompact(store.db, sizes);
        const objects = createFsObjectStore({ root: ctx.config().objectsDir });
        const results = [];
        for (const userId of users) results.push({ user: userId, ...(await compactTurnArchive(userId, { objects, db: store.db, ...sizes })) });
        if (opts.json) return ctx.printJson(results);
        const merged = results.reduce((n, r) => n + r.merged, 0);
        const before = results.reduce((n, r) => n + r.segmentsBefore, 0);
        const after = results.reduce((n, r) => n + r.segmentsAfter, 0);
        ctx.print(`compacted ${formatInt(users.length)} user(s): ${formatInt(before)} → ${formatInt(after)} segments (${formatInt(merged)} merged); run \`ctxvm gc\` to reclaim the old objects`);
      } finally {
        await store.close();
      }
    });
}

function describeCounts(counts: Record<string, number>): string {
  const noun = (t: string, n: number) => (t === 'history' ? (n === 1 ? 'history entry' : 'history entries') : n === 1 ? t : `${t}s`);
  const parts = ['turn', 'project', 'task', 'decision', 'fact', 'history'].filter((t) => counts[t]).map((t) => `${counts[t]} ${noun(t, counts[t]!)}`);
  return parts.length ? parts.join(', ') : 'nothing';
}
