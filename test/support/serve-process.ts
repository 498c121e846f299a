/** `ctxvm serve --json` as a subprocess of the built CLI: waits for its first JSON line (the URL). */
import { spawn, type ChildProcess } from 'node:child_process';

export interface ServeProcess {
  url: string;
  child: ChildProcess;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
}

/** Starts `node <main> serve …args` with `env`; rejects with its stderr if it exits first. */
export async function startServeProcess(main: string, args: string[], env: NodeJS.ProcessEnv): Promise<ServeProcess> {
  const child = spawn(process.execPath, [main, 'serve', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      stdout += d;
      const end = stdout.indexOf('}\n');
      if (end !== -1) resolve(JSON.parse(stdout.slice(0, end + 1)).url);
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  return { url, child, stderr: () => stderr };
}
