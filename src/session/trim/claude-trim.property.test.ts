/**
 * Property: for any generated Claude Code session (seed, length, compactions and edge cases drawn
 * by fast-check), the trimmed session validates and restore(trim(x)) is x, byte for byte.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createFsObjectStore } from '../../store/drivers/objects-fs.js';
import { trimSession, validateSession } from '../session.js';
import { restoreSession } from './restore.js';
import { generateClaudeSession, generatorSkipReason, printSkipReason } from '../../../test/support/corpus.js';

const root = mkdtempSync(join(tmpdir(), 'ctxvm-trim-prop-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
/** Generated sessions per run (default 12; set CTXVM_PROPERTY_RUNS for a deeper search). */
const RUNS = Number(process.env.CTXVM_PROPERTY_RUNS) || 12;
const skip = generatorSkipReason();
printSkipReason(skip);

describe('trim then restore is the identity', () => {
  it.skipIf(skip !== undefined)(
    'on generated sessions: the output validates and restore(trim(x)) == x',
    async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            seed: fc.integer({ min: 1, max: 1_000_000 }),
            turns: fc.integer({ min: 3, max: 25 }),
            compactions: fc.integer({ min: 0, max: 2 }),
            edgeCases: fc.boolean(),
            images: fc.boolean(),
          }),
          async (params) => {
            const dir = join(root, `run-${++run}`);
            await mkdir(dir);
            const store = createFsObjectStore({ root: join(dir, 'objects') });
            const input = generateClaudeSession(join(dir, 'in.jsonl'), params);
            const output = join(dir, 'trimmed.jsonl');
            const restored = join(dir, 'restored.jsonl');
            const report = await trimSession({ input, output, store, measure: false });
            expect(report.valid).toBe(true);
            expect((await validateSession(output)).errors).toEqual([]);
            await restoreSession({ input: output, output: restored, store });
            expect(Buffer.compare(await readFile(restored), await readFile(input))).toBe(0);
            await rm(dir, { recursive: true, force: true });
          },
        ),
        { numRuns: RUNS },
      );
    },
    Math.max(180_000, RUNS * 15_000),
  );
});
