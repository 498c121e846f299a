import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runSessionsDemo, sessionsDemoProblems } from './sessions-demo.js';
import { renderSessionsDemo } from './sessions-section.js';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'ctxvm-demo-test-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('sessions demo', () => {
  it('runs every step on the generated session, and every check holds', async () => {
    const r = await runSessionsDemo({ home, timeZone: 'UTC', nowMs: Date.UTC(2026, 10, 30, 12) });
    expect(sessionsDemoProblems(r)).toEqual([]);
    expect(r.trim.reduction).toBeGreaterThan(0.5);
    expect(r.trim.output.tokens).toBeLessThan(r.trim.input.tokens!);
    expect(r.restore.identical).toBe(true);
    expect(r.branch.tokens.reduction).toBeGreaterThan(0.5);
    // snapshot → branch → later snapshot of the branch
    const byName = new Map(r.tree.nodes.map((n) => [n.name, n]));
    expect(r.tree.edges).toEqual(
      expect.arrayContaining([
        { from: byName.get('demo')!.id, to: byName.get('demo-trimmed')!.id, kind: 'branch' },
        { from: byName.get('demo-trimmed')!.id, to: byName.get('demo-trimmed-2')!.id, kind: 'snapshot' },
      ]),
    );
    expect(r.pageIn?.inOriginal).toBe(true);
    expect(r.du).toMatchObject({ snapshots: 2, branches: 1 });
    expect(r.du.storedBytes).toBeLessThan(r.du.logicalBytes);

    const text = renderSessionsDemo(r).join('\n');
    for (const step of ['analyze', 'trim', 'validate', 'restore', 'snapshot', 'branch', 'later', 'tree', 'page-in', 'du']) expect(text).toMatch(new RegExp(`^${step} `, 'm'));
    expect(text).toContain('* demo-trimmed-2');
    expect(text).toContain('byte-identical');
  });
});
