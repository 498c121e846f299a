/**
 * What a command may touch: its output streams, environment and working directory. Passed in so
 * tests can run commands in-process and capture what they print.
 */
import { loadConfig, type CtxvmConfig } from '../core/config.js';

export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
}

/** Flags every command accepts. */
export interface CommonFlags {
  json?: boolean;
}

/** Per-run context handed to every command action. */
export interface CommandContext {
  io: CliIo;
  /** Lazily loaded configuration (environment errors surface only for commands that need it). */
  config(): CtxvmConfig;
  /** Prints one JSON document on stdout (the only thing a --json command prints there). */
  printJson(value: unknown): void;
  /** Prints human-readable text on stdout. */
  print(text: string): void;
  /** Prints a note on stderr (never on stdout, so --json output stays parseable). */
  note(text: string): void;
}

export function createCommandContext(io: CliIo): CommandContext {
  let config: CtxvmConfig | undefined;
  return {
    io,
    config: () => (config ??= loadConfig(io.env, { cwd: io.cwd })),
    printJson: (value) => {
      io.stdout.write(JSON.stringify(value, null, 2) + '\n');
    },
    print: (text) => {
      io.stdout.write(text.endsWith('\n') ? text : text + '\n');
    },
    note: (text) => {
      io.stderr.write(text.endsWith('\n') ? text : text + '\n');
    },
  };
}
