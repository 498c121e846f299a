/**
 * What every command module needs from the CLI (exit codes, the `--json` flag, the register
 * signature), apart from the program that loads the commands: commands import this, never
 * program.ts, so the program and its commands form no import cycle.
 */
import type { Command } from 'commander';
import type { CommandContext } from './io.js';

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

/** Registers one top-level command (its options, help text and action) on the program. */
export type RegisterCommand = (program: Command, ctx: CommandContext) => void;

