/**
 * Turns a TypeScript entry (and the sources it imports) into one runnable ES module, so an
 * integration test can start real child processes on the current sources without a prior
 * `npm run build`. Uses Vite's SSR build (Rolldown): packages stay external and load from
 * node_modules as usual.
 */
import { mkdir, mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Inside the repository, so the bundle's bare imports resolve against its node_modules.
const CACHE = fileURLToPath(new URL('../../node_modules/.cache/ctxvm-test-bundles/', import.meta.url));

/** Bundles `entry` to `node_modules/.cache/ctxvm-test-bundles/<random>/<name>.mjs` and returns that path. */
export async function bundleScript(entry: string, name: string): Promise<string> {
  const { build } = await import('vite');
  await mkdir(CACHE, { recursive: true });
  const outDir = await mkdtemp(join(CACHE, `${name}-`));
  await build({
    configFile: false,
    logLevel: 'silent',
    build: {
      ssr: entry,
      outDir,
      emptyOutDir: false,
      minify: false,
      target: 'node20',
      rolldownOptions: { output: { format: 'es', entryFileNames: `${name}.mjs` } },
    },
  });
  return join(outDir, `${name}.mjs`);
}
