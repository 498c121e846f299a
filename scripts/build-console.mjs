#!/usr/bin/env node
/**
 * Builds the web console (console/ → dist/console/): esbuild bundles console/src/main.tsx with
 * Preact into one minified app.js (+ app.js.map) and its CSS into app.css, and index.html is
 * copied beside them. No timestamps or absolute paths go into the output, so the same sources
 * give the same bytes. Exits 1 with esbuild's messages (file:line) when the build fails.
 *
 *   node scripts/build-console.mjs [--out <dir>]
 */
import { copyFile, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'console');
const outArg = process.argv.indexOf('--out');
const out = outArg > 0 && process.argv[outArg + 1] ? resolve(process.argv[outArg + 1]) : join(root, 'dist', 'console');

function fail(message) {
  process.stderr.write(`build-console: ${message}\n`);
  process.exit(1);
}

for (const file of ['index.html', 'src/main.tsx']) {
  await stat(join(src, file)).catch(() => fail(`missing ${relative(root, join(src, file))}`));
}

let esbuild;
try {
  esbuild = await import('esbuild');
} catch (error) {
  fail(`cannot load esbuild (${error.message}); run npm install (it is a devDependency)`);
}

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });

try {
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: { app: join(src, 'src', 'main.tsx') },
    outdir: out,
    bundle: true,
    minify: true,
    sourcemap: 'linked',
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome111', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    charset: 'utf8',
    legalComments: 'none',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'silent',
    write: true,
  });
  for (const w of result.warnings) process.stderr.write(`build-console: warning: ${formatMessage(w)}\n`);
} catch (error) {
  const messages = error?.errors?.length ? error.errors.map(formatMessage).join('\n  ') : String(error?.message ?? error);
  await rm(out, { recursive: true, force: true });
  fail(`esbuild failed:\n  ${messages}`);
}

await copyFile(join(src, 'index.html'), join(out, 'index.html'));

const expected = ['app.css', 'app.js', 'app.js.map', 'index.html'];
const produced = (await readdir(out)).sort();
const missing = expected.filter((f) => !produced.includes(f));
if (missing.length) fail(`expected ${missing.join(', ')} in ${relative(root, out) || out}; got ${produced.join(', ')}`);
const sizes = await Promise.all(produced.map(async (f) => `${f} ${((await stat(join(out, f))).size / 1024).toFixed(1)} KiB`));
process.stdout.write(`build-console: ${relative(root, out) || out}: ${sizes.join(', ')}\n`);

/** esbuild message → "file:line:column: text". */
function formatMessage(m) {
  const where = m.location ? `${m.location.file}:${m.location.line}:${m.location.column + 1}: ` : '';
  return `${where}${m.text}`;
}
