/** Runs the CLI in-process with captured output, for command tests that need no subprocess. */
import { runCli } from '../../src/cli/program.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON. */
  json<T = any>(): T;
}

/** Runs `ctxvm <args>` with the given environment and working directory. */
export async function runCliInProcess(args: string[], env: Record<string, string>, cwd: string): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    stdout: { write: (s: string | Uint8Array) => ((stdout += String(s)), true) } as unknown as NodeJS.WritableStream,
    stderr: { write: (s: string | Uint8Array) => ((stderr += String(s)), true) } as unknown as NodeJS.WritableStream,
    env: { ...env, NO_COLOR: '1' },
    cwd,
  });
  return {
    code,
    stdout,
    stderr,
    json<T>() {
      try {
        return JSON.parse(stdout) as T;
      } catch (error) {
        throw new Error(`stdout is not JSON (exit ${code}): ${stdout.slice(0, 400)}\nstderr: ${stderr.slice(0, 400)}`, { cause: error });
      }
    },
  };
}
