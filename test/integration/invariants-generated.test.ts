/**
 * The core invariants on input generated here, so they run on every checkout (the corpus and the
 * shared generator are optional): for generated Claude Code transcripts and Codex rollouts of
 * random shape, the trimmed session validates, the input is untouched, restore(trim(x)) is x byte
 * for byte, and a trimmed file trimmed again still restores to x.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDemoClaudeSession } from '../../src/demo/claude-session.js';
import { RolloutBuilder } from '../../src/session/codex/testing.js';
import { trimSession, validateSession } from '../../src/session/session.js';
import { restoreSession } from '../../src/session/trim/restore.js';
import { createFsObjectStore } from '../../src/store/drivers/objects-fs.js';

const root = mkdtempSync(join(tmpdir(), 'ctxvm-invariants-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const RUNS = Number(process.env.CTXVM_PROPERTY_RUNS) || 8;
let run = 0;

const sha = async (path: string) => createHash('sha256').update(await readFile(path)).digest('hex');

/** Trims `text` (twice, with different thresholds) and checks every invariant on the way. */
async function checkInvariants(text: string, threshold: number): Promise<void> {
  const dir = join(root, `run-${++run}`);
  await mkdir(dir);
  try {
    const store = createFsObjectStore({ root: join(dir, 'objects') });
    const input = join(dir, 'in.jsonl');
    await writeFile(input, text);
    const before = await sha(input);
    expect((await validateSession(input)).errors).toEqual([]);

    const once = join(dir, 'once.jsonl');
    const report = await trimSession({ input, output: once, store, measure: false, policy: { toolResultTokens: threshold, toolInputTokens: threshold } });
    expect(report.valid).toBe(true);
    expect(await sha(input)).toBe(before);
    expect((await validateSession(once)).errors).toEqual([]);
    // a trim that changed nothing writes the input's bytes, which restore refuses (no annotation)
    if ((await sha(once)) === before) return;
    const restored = join(dir, 'restored.jsonl');
    await restoreSession({ input: once, output: restored, store });
    expect(await sha(restored)).toBe(before);

    // a trimmed file trimmed again (lower threshold) still comes back to the original
    const twice = join(dir, 'twice.jsonl');
    await trimSession({ input: once, output: twice, store, measure: false, policy: { toolResultTokens: Math.max(1, threshold >> 1), toolInputTokens: Math.max(1, threshold >> 1) } });
    expect((await validateSession(twice)).errors).toEqual([]);
    const restoredTwice = join(dir, 'restored-twice.jsonl');
    await restoreSession({ input: twice, output: restoredTwice, store });
    expect(await sha(restoredTwice)).toBe(before);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const uuid = fc.uuid({ version: 4 });

describe('core invariants on generated Claude Code transcripts', () => {
  it('trimmed output validates; restore(trim(x)) == x, also after a second trim', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({ turns: fc.integer({ min: 1, max: 12 }), sessionId: uuid, startMs: fc.integer({ min: Date.UTC(2024, 0, 1), max: Date.UTC(2027, 0, 1) }), threshold: fc.integer({ min: 20, max: 2000 }) }),
        async ({ threshold, ...options }) => {
          const lines = buildDemoClaudeSession({ ...options, cwd: `/home/u/p-${options.turns}` });
          await checkInvariants(lines.join('\n') + '\n', threshold);
        },
      ),
      { numRuns: RUNS },
    );
  }, 240_000);
});

/** A Codex rollout of `turns` turns, each with shell calls of random size, reasoning, maybe a compaction. */
function rollout(p: { sessionId: string; turns: { calls: number[]; reasoning: boolean; compactAfter: boolean }[] }): string {
  const r = new RolloutBuilder(p.sessionId).meta().turnContext().environment();
  p.turns.forEach((turn, t) => {
    r.user(`step ${t}: look at the logs and fix what fails`);
    if (turn.reasoning) r.reasoning(`thinking about step ${t}`);
    for (const [k, size] of turn.calls.entries()) r.shell(`cat log-${t}-${k}.txt`, Array.from({ length: size }, (_, i) => `line ${i} of log ${t}-${k}: status ok`).join('\n'), k % 3 === 2 ? 1 : 0);
    r.assistant(`done with step ${t}`);
    r.tokenCount({ inputTokens: 1000 + 100 * t });
    if (turn.compactAfter) r.compacted(`summary of steps up to ${t}`);
  });
  return r.toString();
}

describe('core invariants on generated Codex rollouts', () => {
  it('trimmed output validates; restore(trim(x)) == x, also after a second trim', async () => {
    const turn = fc.record({ calls: fc.array(fc.integer({ min: 0, max: 600 }), { maxLength: 4 }), reasoning: fc.boolean(), compactAfter: fc.boolean() });
    await fc.assert(
      fc.asyncProperty(fc.record({ sessionId: uuid, turns: fc.array(turn, { minLength: 1, maxLength: 8 }), threshold: fc.integer({ min: 20, max: 2000 }) }), async ({ threshold, ...p }) => {
        await checkInvariants(rollout(p), threshold);
      }),
      { numRuns: RUNS },
    );
  }, 240_000);
});
