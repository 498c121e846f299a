#!/usr/bin/env node
// `npm install` in a clone builds dist/. `npx ctxvm` in the clone installs the project into npm's
// npx cache as a file: dependency, which runs `prepare` again; without this check every first
// `npx ctxvm` rebuilt everything (tsc and the console) before printing a line. The build is
// skipped when dist/ was built after the last change to anything it is built from.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = join(root, 'dist', '.build-stamp');
const inputs = ['src', 'console', 'scripts', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];

/** The newest modification time under `path` (a file or a folder), 0 if it does not exist. */
function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) {
    if (entry === 'node_modules') continue;
    newest = Math.max(newest, newestMtime(join(path, entry)));
  }
  return newest;
}

// The stamp records the newest input time the last build saw (not the stamp's own time, so a
// clock skew or a file dated in the future cannot make every later install rebuild).
const newest = Math.max(...inputs.map((p) => newestMtime(join(root, p))));
const builtFrom = existsSync(stamp) ? Number(readFileSync(stamp, 'utf8').split('\n')[0]) : NaN;
if (process.env.CTXVM_FORCE_BUILD !== '1' && Number.isFinite(builtFrom) && newest <= builtFrom) {
  console.error('prepare: dist/ is up to date (CTXVM_FORCE_BUILD=1 rebuilds)');
} else {
  const built = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
  writeFileSync(stamp, `${newest}\nnewest input time dist/ was built from (scripts/prepare.mjs)\n`);
}
