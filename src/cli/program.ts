/**
 * Builds the `ctxvm` command tree and runs it, mapping errors to exit codes in one place:
 * 0 success, 1 the checked thing is invalid or the command failed, 2 bad usage or bad input.
 */
import { Command, CommanderError, Option } from 'commander';
import { CtxvmError } from '../errors.js';
import { createCommandContext, type CliIo, type CommandContext } from './io.js';
import { PACKAGE_VERSION } from './version.js';

export { EXIT_FAILED, EXIT_OK, EXIT_USAGE, ExitCode, withJson, type RegisterCommand } from './command-kit.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, ExitCode, type RegisterCommand } from './command-kit.js';

/** A top-level command and how to load the module that registers it. */
export interface CommandEntry {
  name: string;
  load: () => Promise<RegisterCommand>;
}

/**
 * Every top-level command, in help order. Modules are imported only for the command being run
 * (all of them for help and unknown commands): `ctxvm sessions` must not pay for loading the
 * trimmer, the hooks or the memory engine. A new command is one line here.
 */
export const COMMANDS: readonly CommandEntry[] = [
  { name: 'demo', load: async () => (await import('./commands/demo.js')).registerDemo },
  { name: 'session', load: async () => (await import('./commands/session.js')).registerSession },
  { name: 'sessions', load: async () => (await import('./commands/sessions.js')).registerSessions },
  { name: 'snapshot', load: async () => (await import('./commands/snapshot.js')).registerSnapshot },
  { name: 'tree', load: async () => (await import('./commands/tree.js')).registerTree },
  { name: 'list', load: async () => (await import('./commands/list.js')).registerList },
  { name: 'info', load: async () => (await import('./commands/info.js')).registerInfo },
  { name: 'rm', load: async () => (await import('./commands/rm.js')).registerRm },
  { name: 'gc', load: async () => (await import('./commands/gc.js')).registerGc },
  { name: 'du', load: async () => (await import('./commands/du.js')).registerDu },
  { name: 'export', load: async () => (await import('./commands/export.js')).registerExport },
  { name: 'import', load: async () => (await import('./commands/import.js')).registerImport },
  { name: 'branch', load: async () => (await import('./commands/branch.js')).registerBranch },
  { name: 'trim', load: async () => (await import('./commands/trim.js')).registerTrim },
  { name: 'hooks', load: async () => (await import('./commands/hooks.js')).registerHooks },
  { name: 'memory', load: async () => (await import('./commands/memory.js')).registerMemory },
  { name: 'chat', load: async () => (await import('./commands/chat.js')).registerChat },
  { name: 'reminders', load: async () => (await import('./commands/reminders.js')).registerReminders },
  { name: 'serve', load: async () => (await import('./commands/serve.js')).registerServe },
  { name: 'mcp', load: async () => (await import('./commands/mcp.js')).registerMcp },
  { name: 'keys', load: async () => (await import('./commands/keys.js')).registerKeys },
];

/** The commands `argv` needs registered: the one it names, none for `--version`, else all. */
export function commandsFor(argv: readonly string[]): readonly CommandEntry[] {
  // The root has only flag options (--debug, -V, -h), so the first other word is the command.
  const word = argv.find((a) => !a.startsWith('-'));
  if (word === undefined) return argv.includes('-V') || argv.includes('--version') ? [] : COMMANDS;
  const hit = COMMANDS.find((c) => c.name === word);
  return hit ? [hit] : COMMANDS;
}

/**
 * Builds the command tree for `argv` (default: every command, e.g. for help); see `commandsFor`.
 */
export async function buildProgram(ctx: CommandContext, argv?: readonly string[]): Promise<Command> {
  const program = new Command('ctxvm')
    .description('Virtual memory for LLM agent context: sessions (snapshot, branch, trim, restore) and memory (extract, rebuild).')
    .version(PACKAGE_VERSION, '-V, --version', 'print the version')
    .addOption(new Option('--debug', 'show stack traces on errors'))
    .showSuggestionAfterError(true)
    .configureOutput({
      writeOut: (s) => ctx.io.stdout.write(s),
      writeErr: (s) => ctx.io.stderr.write(s),
    })
    .exitOverride();
  const entries = argv ? commandsFor(argv) : COMMANDS;
  for (const register of await Promise.all(entries.map((c) => c.load()))) register(program, ctx);
  // every subcommand inherits the output routing and the exit override
  const wire = (cmd: Command) => {
    cmd.exitOverride().configureOutput({ writeOut: (s) => ctx.io.stdout.write(s), writeErr: (s) => ctx.io.stderr.write(s) });
    cmd.commands.forEach(wire);
  };
  program.commands.forEach(wire);
  return program;
}

function wantsJson(argv: string[]): boolean {
  return argv.includes('--json');
}

/** Prints an error the way users and scripts expect, and returns the exit code. */
export function reportError(ctx: CommandContext, error: unknown, argv: string[]): number {
  const debug = argv.includes('--debug');
  if (error instanceof ExitCode) return error.code;
  if (error instanceof CommanderError) {
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return EXIT_OK;
    // commander already printed its message to stderr
    return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
  }
  const known = CtxvmError.is(error);
  const code = known ? (error.isInputError ? EXIT_USAGE : EXIT_FAILED) : EXIT_FAILED;
  const message = error instanceof Error ? error.message : String(error);
  const hint = known ? error.hint : undefined;
  ctx.note(`ctxvm: error: ${message}`);
  if (hint) ctx.note(`  fix: ${hint}`);
  if (debug && error instanceof Error) {
    ctx.note(error.stack ?? '');
    if (error.cause) ctx.note(`caused by: ${error.cause instanceof Error ? error.cause.stack : String(error.cause)}`);
  } else if (!known) {
    ctx.note('  (run with --debug for the stack trace)');
  }
  if (wantsJson(argv)) {
    const details = known ? error.details : undefined;
    ctx.printJson({ error: { code: known ? error.code : 'E_INTERNAL', message, ...(hint ? { hint } : {}), ...(details ? { details } : {}) } });
  }
  return code;
}

/** Runs the CLI with `argv` (without node and script) and resolves to the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const ctx = createCommandContext(io);
  try {
    const program = await buildProgram(ctx, argv);
    if (argv.length === 0) {
      program.outputHelp();
      return EXIT_USAGE;
    }
    await program.parseAsync(argv, { from: 'user' });
    return EXIT_OK;
  } catch (error) {
    return reportError(ctx, error, argv);
  }
}
