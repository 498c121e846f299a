#!/usr/bin/env node
// Runs vitest with its JSON reporter next to the default one, then prints the plain closing
// line "N passed, N failed[, N skipped]" that CI reads. Extra arguments go to vitest.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, '.vitest-result.json');
rmSync(out, { force: true });
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const run = spawnSync(
  process.execPath,
  [vitest, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${out}`, ...process.argv.slice(2)],
  { cwd: root, stdio: 'inherit' },
);
let passed = 0, failed = 0, skipped = 0;
if (existsSync(out)) {
  const result = JSON.parse(readFileSync(out, 'utf8'));
  passed = result.numPassedTests ?? 0;
  failed = (result.numFailedTests ?? 0);
  skipped = (result.numPendingTests ?? 0) + (result.numTodoTests ?? 0);
  // a suite that failed to load has no tests in it but must still fail the run
  if (failed === 0 && run.status !== 0) failed = Math.max(1, result.numFailedTestSuites ?? 1);
} else if (run.status !== 0) {
  failed = 1;
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(run.status === 0 && failed === 0 ? 0 : 1);
