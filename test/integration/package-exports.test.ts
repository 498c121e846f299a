/**
 * The published entry points: `ctxvm` loads without pulling optional drivers (redis is imported
 * only by the Redis hot-cache driver), and each subpath export resolves to built code.
 */
import { describe, it, expect } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/corpus.js';

const built = existsSync(join(REPO_ROOT, 'dist', 'index.js'));

describe.skipIf(!built)('package entry points (built dist/)', () => {
  it('importing ctxvm does not load redis or pg', () => {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', `
      import { createRequire } from 'node:module';
      const before = new Set(Object.keys(createRequire(import.meta.url).cache));
      const m = await import('ctxvm');
      const after = Object.keys(createRequire(import.meta.url).cache).filter((k) => !before.has(k));
      console.log(JSON.stringify({ n: Object.keys(m).length, redis: after.some((k) => k.includes('/node_modules/redis/') || k.includes('/@redis/')), pg: after.some((k) => k.includes('/node_modules/pg/')) }));
    `], { cwd: REPO_ROOT, encoding: 'utf8' });
    const r = JSON.parse(out) as { n: number; redis: boolean; pg: boolean };
    expect(r.n).toBeGreaterThan(20);
    expect(r.redis).toBe(false);
    expect(r.pg).toBe(false);
    // control: the same detector does see redis once it is imported
    const control = execFileSync(process.execPath, ['--input-type=module', '-e', `
      import { createRequire } from 'node:module';
      await import('redis');
      console.log(Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('/@redis/') || k.includes('/node_modules/redis/')));
    `], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(control.trim()).toBe('true');
  });

  it('subpath exports resolve', () => {
    for (const sub of ['ctxvm/hot-cache', 'ctxvm/drivers/lru', 'ctxvm/drivers/redis', 'ctxvm/drivers/objects-fs']) {
      const out = execFileSync(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(sub)}); console.log(Object.keys(m).length)`], { cwd: REPO_ROOT, encoding: 'utf8' });
      expect(Number(out.trim()), sub).toBeGreaterThan(0);
    }
  });
});
