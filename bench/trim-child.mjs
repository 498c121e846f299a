// One measured pass in a fresh process (so peak RSS belongs to that pass alone).
// Usage: node trim-child.mjs trim|counted|naive|reference IN OUT [STORE]
// `counted` is what `ctxvm session trim` does: the trim, then exact token counts of both files.
// Prints {seconds, maxRssMb} on stdout.
import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { join } from 'node:path';
import { root } from './lib.mjs';

process.env.UV_THREADPOOL_SIZE ??= '8'; // as the ctxvm CLI does
const [mode, input, output, storeDir] = process.argv.slice(2);
const t0 = process.hrtime.bigint();
const c0 = process.cpuUsage();
if (mode === 'naive') {
  // the floor: readline + JSON.parse + JSON.stringify of every line, written out
  const out = createWriteStream(output);
  const rl = createInterface({ input: createReadStream(input), crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line) continue;
    if (!out.write(JSON.stringify(JSON.parse(line)) + '\n')) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
} else if (mode === 'reference') {
  // the reference trimmer (../shared/reference/claude-code-cmv), at its default threshold
  const { pathToFileURL } = await import('node:url');
  const { sharedDir } = await import('./lib.mjs');
  const { trimJsonl } = await import(pathToFileURL(join(sharedDir, 'reference', 'claude-code-cmv', 'dist', 'core', 'trimmer.js')).href);
  await trimJsonl(input, output, { threshold: 500 });
} else {
  // the modules `ctxvm session trim` loads (see src/cli/commands/session.ts), not the whole library
  const { trimSession } = await import(join(root, 'dist', 'session', 'session.js'));
  const { createFsObjectStore } = await import(join(root, 'dist', 'store', 'drivers', 'objects-fs.js'));
  const store = createFsObjectStore({ root: storeDir, durability: 'deferred' });
  await trimSession({ input, output, store, measure: mode === 'counted' });
}
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
const cpu = process.cpuUsage(c0);
console.log(JSON.stringify({ seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, maxRssMb: process.resourceUsage().maxRSS / 1024 }));
