/**
 * Builds the `ctxvm` command tree and runs it, mapping errors to exit codes in one place:
 * 0 success, 1 the checked thing is invalid or the command failed, 2 bad usage or bad input.
 */
import { Command, CommanderError, Option } from 'commander';
import { CtxvmError } from '../errors.js';
import { createCommandContext, type CliIo, type CommandContext } from './io.js';
import { registerDemo } from './commands/demo.js';
import { registerSession } from './commands/session.js';
import { registerSessions } from './commands/sessions.js';
import { registerSnapshot } from './commands/snapshot.js';
import { registerTree } from './commands/tree.js';
import { registerList } from './commands/list.js';
import { registerInfo } from './commands/info.js';
import { registerRm } from './commands/rm.js';
import { registerGc } from './commands/gc.js';
import { registerDu } from './commands/du.js';
import { registerExport } from './commands/export.js';
import { registerImport } from './commands/import.js';
import { registerBranch } from './commands/branch.js';
import { registerTrim } from './commands/trim.js';
import { registerHooks } from './commands/hooks.js';
import { PACKAGE_VERSION } from './version.js';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** Thrown by a command that finished and wants a specific exit code (e.g. 1 for "invalid"). */
export class ExitCode extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** Adds the `--json` flag every command carries. */
export function withJson(cmd: Command): Command {
  return cmd.option('--json', 'print one JSON document on stdout (progress and notes go to stderr)');
}

export function buildProgram(ctx: CommandContext): Command {
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
  registerDemo(program, ctx);
  registerSession(program, ctx);
  registerSessions(program, ctx);
  registerSnapshot(program, ctx);
  registerTree(program, ctx);
  registerList(program, ctx);
  registerInfo(program, ctx);
  registerRm(program, ctx);
  registerGc(program, ctx);
  registerDu(program, ctx);
  registerExport(program, ctx);
  registerImport(program, ctx);
  registerBranch(program, ctx);
  registerTrim(program, ctx);
  registerHooks(program, ctx);
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
    ctx.printJson({ error: { code: known ? error.code : 'E_INTERNAL', message, ...(hint ? { hint } : {}) } });
  }
  return code;
}

/** Runs the CLI with `argv` (without node and script) and resolves to the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const ctx = createCommandContext(io);
  const program = buildProgram(ctx);
  try {
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
