/** The Claude Code driver's trim hands back a full load of its input made from the trim's own index. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemoClaudeSession } from '../../demo/claude-session.js';
import { createFsObjectStore } from '../../store/drivers/objects-fs.js';
import { createTokenCounter } from '../../text/tokens.js';
import { resolvePolicy } from '../trim/policy.js';
import { claudeDriver } from './driver.js';

let dir: string;
let input: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-claude-driver-'));
  input = join(dir, 'in.jsonl');
  await writeFile(input, `${buildDemoClaudeSession({ turns: 8 }).join('\n')}\n`);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('claudeDriver.trim', () => {
  it('hands back a load of its input that is the load of the file, once', async () => {
    const store = createFsObjectStore({ root: join(dir, 'objects') });
    const stats = await claudeDriver.trim({ input, output: join(dir, 'out.jsonl'), store, policy: resolvePolicy({}), tokens: createTokenCounter() });
    expect(stats.loadInput).toBeTypeOf('function');
    const read: number[] = [];
    const fromTrim = await stats.loadInput!({ onProgress: (bytes) => read.push(bytes) });
    const fromFile = await claudeDriver.load(input);
    expect(fromTrim).toEqual(fromFile);
    expect(fromTrim.context.entries.length).toBeGreaterThan(4);
    expect(read.at(-1)).toBe(fromFile.bytes);
    // the index is let go after one load: a second loads the file again, to the same result
    expect(await stats.loadInput!()).toEqual(fromFile);
  });
});
