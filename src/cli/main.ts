#!/usr/bin/env node
/** The `ctxvm` executable: wires process streams into runCli and handles EPIPE. */
// Compression and file writes share libuv's thread pool (4 threads by default); trimming runs
// both at once, so give it more room unless the user chose a size. Read before the pool starts.
process.env.UV_THREADPOOL_SIZE ??= '8';
import { runCli } from './program.js';

// `ctxvm ... | head` closes stdout early: that is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
});
process.exitCode = code;
