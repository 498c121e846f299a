/**
 * `ctxvm hooks install|uninstall|status|run`: the optional Claude Code auto-trim. `install` adds
 * `ctxvm hooks run --event SessionEnd|PreCompact` to Claude Code's settings.json; when Claude Code
 * fires them, `run` reads the hook's JSON from stdin, hands it to a detached worker and exits 0 at
 * once (Claude Code gives SessionEnd hooks 1.5 s by default); the worker forks a trimmed branch of
 * the session (src/hooks/run.ts) and records it in the snapshot DAG like `ctxvm trim` (snapshot +
 * trimmed branch, src/hooks/dag-record.ts), so `ctxvm tree` shows it. `run` prints nothing and always exits 0: a hook must never
 * break or block the agent; what happened is in $CTXVM_HOME/logs/hooks.log (`hooks status`).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../../errors.js';
import { appendHookLog, hookLogPath, readHookLog } from '../../hooks/log.js';
import { isHookEvent, parseHookPayload, type HookPayload } from '../../hooks/payload.js';
import type { HookRunOptions } from '../../hooks/run.js';
import { editSettingsFile, HOOK_EVENTS, hooksStatus, installHooks, readSettingsFile, uninstallHooks, type HookEvent } from '../../hooks/settings.js';
import { withDagServices } from '../dag-services.js';
import type { CommandContext } from '../io.js';
import { withJson } from '../command-kit.js';
import { commandKind, commandRunnable, selfCommand } from '../self-command.js';

/** Seams for tests; the defaults use the real process. */
export interface HooksCommandDeps {
  /** Reads the hook payload (default: process.stdin, at most 1 MiB, giving up after 2 s). */
  readStdin?: () => Promise<string>;
  /** Starts the detached worker with these CLI arguments (default: this script, detached). */
  spawnWorker?: (args: string[]) => void;
  /** Overrides for the worker's run (timings, thresholds, clock). */
  runOptions?: Partial<Omit<HookRunOptions, 'event' | 'payload' | 'ctxvmHome' | 'store' | 'claudeConfigDir' | 'codexHome' | 'onBranched'>>;
  /** Clock, Unix ms, for backup names. */
  nowMs?: () => number;
}

const MAX_PAYLOAD_BYTES = 1 << 20;

function readProcessStdin(timeoutMs = 2000): Promise<string> {
  return new Promise((resolvePayload) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      clearTimeout(timer);
      process.stdin.removeAllListeners('data');
      // an agent that never closes the pipe must not keep this process alive
      process.stdin.destroy();
      resolvePayload(Buffer.concat(chunks).toString('utf8'));
    };
    const timer = setTimeout(done, timeoutMs);
    process.stdin.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_PAYLOAD_BYTES) chunks.push(c);
    });
    process.stdin.once('end', done);
    process.stdin.once('error', done);
  });
}

function spawnDetached(args: string[]): void {
  const script = process.argv[1];
  if (!script) throw new Error('cannot find the ctxvm script to start the hook worker');
  const child = spawn(process.execPath, [...process.execArgv, script, ...args], { detached: true, stdio: 'ignore', windowsHide: true });
  child.unref();
}

/** Payloads whose worker never ran (it could not start, or died first) are dropped after an hour. */
async function dropStalePayloads(queue: string, now: number): Promise<void> {
  for (const name of await readdir(queue).catch(() => [] as string[])) {
    const path = join(queue, name);
    const info = await stat(path).catch(() => undefined);
    if (info && now - info.mtimeMs > 3_600_000) await rm(path, { force: true });
  }
}

function parseEvents(value: string | undefined): HookEvent[] {
  if (!value) return [...HOOK_EVENTS];
  const list = value.split(',').map((s) => s.trim()).filter(Boolean);
  for (const e of list) if (!isHookEvent(e)) throw new UsageError(`--events: unknown event ${JSON.stringify(e)}`, { hint: `use ${HOOK_EVENTS.join(', ')}` });
  return list as HookEvent[];
}

export function registerHooks(program: Command, ctx: CommandContext, deps: HooksCommandDeps = {}): void {
  const hooks = program.command('hooks').description('Claude Code auto-trim: fork a trimmed branch at SessionEnd and before compaction (never rewrites a transcript)');
  const settingsPath = (opt: string | undefined) => (opt ? resolve(ctx.io.cwd, opt) : join(ctx.config().claudeConfigDir, 'settings.json'));
  const nowMs = deps.nowMs ?? Date.now;

  withJson(hooks.command('install'))
    .description("add ctxvm's SessionEnd and PreCompact hooks to Claude Code's settings.json (idempotent; keeps a backup)")
    .option('--settings <path>', 'settings file (default $CLAUDE_CONFIG_DIR/settings.json)')
    .option('--command <cmd>', 'how Claude Code should run ctxvm (default: "ctxvm" when the ctxvm on PATH is this one, else node and this CLI by absolute path)')
    .option('--events <list>', `events to hook, comma-separated (default ${HOOK_EVENTS.join(',')})`)
    .action(async (opts: { settings?: string; command?: string; events?: string; json?: boolean }) => {
      const path = settingsPath(opts.settings);
      const events = parseEvents(opts.events);
      const base = opts.command !== undefined ? opts.command.trim() : selfCommand(ctx.io.env).command;
      if (!base) throw new UsageError('--command is empty');
      const found = commandRunnable(base, ctx.io.env);
      const kind = commandKind(base);
      const r = await editSettingsFile(path, (s) => installHooks(s, base, events), { nowMs: nowMs() });
      if (opts.json) return ctx.printJson({ settings: path, changed: r.changed, events: r.events, ...(r.backup ? { backup: r.backup } : {}), command: base, commandKind: kind, commandFound: found });
      ctx.print(r.changed ? `installed ctxvm hooks (${r.events.join(', ')}) in ${path}${r.backup ? `\n  backup: ${r.backup}` : ''}` : `ctxvm hooks already installed in ${path}`);
      ctx.print(`  command: ${base} (${kind === 'path' ? 'ctxvm found on PATH' : 'by absolute path: keeps working without ctxvm on PATH, but not if this folder moves'})`);
      if (!found) ctx.note(`warning: "${base}" is not on PATH (npx's temporary folders do not count); Claude Code will not be able to run the hook: install ctxvm (npm install -g) or pass --command`);
    });

  withJson(hooks.command('uninstall'))
    .description("remove ctxvm's hooks from settings.json (other hooks are left alone; keeps a backup)")
    .option('--settings <path>', 'settings file (default $CLAUDE_CONFIG_DIR/settings.json)')
    .action(async (opts: { settings?: string; json?: boolean }) => {
      const path = settingsPath(opts.settings);
      const r = await editSettingsFile(path, (s) => uninstallHooks(s), { nowMs: nowMs() });
      if (opts.json) return ctx.printJson({ settings: path, changed: r.changed, events: r.events, ...(r.backup ? { backup: r.backup } : {}) });
      ctx.print(r.changed ? `removed ctxvm hooks (${r.events.join(', ')}) from ${path}${r.backup ? `\n  backup: ${r.backup}` : ''}` : `no ctxvm hooks in ${path}`);
    });

  withJson(hooks.command('status'))
    .description('show whether the hooks are installed, and what the last runs did')
    .option('--settings <path>', 'settings file (default $CLAUDE_CONFIG_DIR/settings.json)')
    .option('--last <n>', 'log entries to show (default 5)', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0) throw new UsageError(`--last must be a non-negative integer, got ${JSON.stringify(v)}`);
      return n;
    })
    .action(async (opts: { settings?: string; last?: number; json?: boolean }) => {
      const path = settingsPath(opts.settings);
      const file = await readSettingsFile(path);
      const st = hooksStatus(file.settings);
      const home = ctx.config().home;
      const lastRuns = await readHookLog(home, opts.last ?? 5);
      const commands = Object.values(st.installed).filter((c): c is string => c !== null);
      const commandFound = commands.every((c) => commandRunnable(c, ctx.io.env));
      const commandKinds = Object.fromEntries(Object.entries(st.installed).map(([e, c]) => [e, c === null ? null : commandKind(c)]));
      if (opts.json) return ctx.printJson({ settings: path, exists: file.exists, ...st, commandKinds, commandFound, log: hookLogPath(home), lastRuns });
      ctx.print(`settings: ${path}${file.exists ? '' : ' (does not exist)'}`);
      for (const e of HOOK_EVENTS) {
        const c = st.installed[e];
        const how = c ? (commandKind(c) === 'path' ? ' [ctxvm looked up on PATH]' : ' [by absolute path]') : '';
        ctx.print(`  ${e.padEnd(10)} ${c ? `installed: ${c}${how}` : 'not installed'}${st.foreignHooks[e] ? ` (+${st.foreignHooks[e]} other hook(s))` : ''}`);
      }
      if (st.disableAllHooks) ctx.print('  note: disableAllHooks is true: Claude Code runs no hooks at all');
      if (!commandFound) ctx.print('  warning: the installed command cannot be run from an ordinary PATH: run `ctxvm hooks install` again from an installed ctxvm');
      ctx.print(`log: ${hookLogPath(home)}`);
      for (const r of lastRuns) ctx.print(`  ${r.time} ${r.event} ${r.outcome}${r.branch ? ` → ${r.branch.resume}` : ''}${r.dag ? ` [${r.dag.branch} in ctxvm tree]` : ''}${r.reason ? ` (${r.reason})` : ''}`);
    });

  hooks
    .command('run')
    .description('(run by Claude Code) read the hook payload on stdin, fork a trimmed branch in the background and record it in the DAG; prints nothing, exits 0')
    .requiredOption('--event <event>', `the hook event (${HOOK_EVENTS.join(' or ')})`)
    .option('--sync', 'do the work before returning instead of in a detached worker')
    .option('--worker <payload-file>', '(internal) run the work for a payload saved by the hook')
    .action(async (opts: { event: string; sync?: boolean; worker?: string }) => {
      let home: string | undefined;
      const event = opts.event;
      try {
        const config = ctx.config();
        home = config.home;
        if (!isHookEvent(event)) throw new UsageError(`--event ${JSON.stringify(event)}: expected ${HOOK_EVENTS.join(' or ')}`);
        let payload: HookPayload;
        if (opts.worker) {
          if (!isAbsolute(opts.worker)) throw new UsageError('--worker needs an absolute path');
          const text = await readFile(opts.worker, 'utf8');
          await rm(opts.worker, { force: true });
          payload = parseHookPayload(text);
        } else {
          payload = parseHookPayload(await (deps.readStdin ?? readProcessStdin)());
        }
        if (opts.worker || opts.sync) {
          // the worker is the only part that needs the branch, trim and DAG code
          const [{ runHook }, { recordHookBranch }, { createFsObjectStore }] = await Promise.all([
            import('../../hooks/run.js'),
            import('../../hooks/dag-record.js'),
            import('../../store/drivers/objects-fs.js'),
          ]);
          const store = createFsObjectStore({ root: config.objectsDir, durability: 'deferred' });
          await runHook({
            ...deps.runOptions,
            event,
            payload,
            ctxvmHome: config.home,
            store,
            claudeConfigDir: config.claudeConfigDir,
            codexHome: config.codexHome,
            // recorded like `ctxvm trim` (snapshot + edge); the warm store is opened only then
            onBranched: (forked) =>
              withDagServices(ctx, (s) => recordHookBranch({ catalog: s.catalog, store: s.store, ...(deps.runOptions?.now ? { now: deps.runOptions.now } : {}) }, forked), { store }),
          });
          return;
        }
        // hand over to a detached worker: the agent does not wait for the branch
        const queue = join(config.home, 'hooks', 'queue');
        await mkdir(queue, { recursive: true });
        await dropStalePayloads(queue, nowMs());
        const file = join(queue, `${nowMs()}-${randomBytes(4).toString('hex')}.json`);
        await writeFile(file, JSON.stringify(payload), { mode: 0o600 });
        (deps.spawnWorker ?? spawnDetached)(['hooks', 'run', '--event', event, '--worker', file]);
      } catch (error) {
        if (home) {
          await appendHookLog(home, {
            time: new Date(nowMs()).toISOString(),
            event: String(event),
            outcome: 'failed',
            reason: error instanceof Error ? error.message : String(error),
          });
        }
        // never an exit code or output the agent would act on
      }
    });
}
