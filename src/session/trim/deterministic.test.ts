/**
 * The same input trims to the same bytes, whatever store it goes to: a stub names its pack by a
 * random placeholder until the pack is sealed, and no decision may depend on it (issue 22.2:
 * trimming is a function of the input and the policy).
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemoClaudeSession } from '../../demo/claude-session.js';
import { RolloutBuilder } from '../codex/testing.js';
import { trimSession } from '../session.js';
import { createFsObjectStore } from '../../store/drivers/objects-fs.js';
import { withStandInRefs } from './stub.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctxvm-deterministic-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Shell outputs of every size from 1 to 90 lines: many sit where a stub just pays or just doesn't. */
function marginRollout(): string {
  const r = new RolloutBuilder('0199a000-0000-7000-8000-00000000d0d0').meta().turnContext().environment();
  for (let n = 1; n <= 90; n++) {
    r.user(`step ${n}`);
    r.shell(`cat out-${n}.txt`, Array.from({ length: n }, (_, i) => `row ${i}: 7f${(n * 31 + i).toString(16)} ok`).join('\n'), n % 7 === 0 ? 1 : 0);
    r.call('shell_command', { command: `node - <<'JS'\n${Array.from({ length: n }, (_, i) => `console.log(${i} * ${n});`).join('\n')}\nJS` });
    r.output(`exit 0`);
    r.assistant(`done ${n}`);
  }
  r.tokenCount({ inputTokens: 50_000 });
  return r.toString();
}

async function trimTimes(name: string, text: string, times: number): Promise<string[]> {
  const input = join(dir, `${name}.jsonl`);
  await writeFile(input, text);
  const digests: string[] = [];
  for (let k = 0; k < times; k++) {
    const output = join(dir, `${name}-${k}.out.jsonl`);
    const store = createFsObjectStore({ root: join(dir, `${name}-store-${k}`) });
    await trimSession({ input, output, store, measure: false, policy: { toolResultTokens: 1, toolInputTokens: 1 } });
    digests.push(createHash('sha256').update(await readFile(output)).digest('hex'));
  }
  return digests;
}

describe('trimming is deterministic', () => {
  it('counts every reference as the same stand-in, whatever its pack digits', () => {
    const a = withStandInRefs('[ctxvm paged out 3 lines · ctxvm:0123456789abcdef#42/payload/output]');
    const b = withStandInRefs('[ctxvm paged out 3 lines · ctxvm:fedcba9876543210#42/payload/output]');
    expect(a).toBe(b);
    expect(withStandInRefs('no reference here')).toBe('no reference here');
  });

  it('gives a Codex rollout the same bytes in three fresh stores', async () => {
    const digests = await trimTimes('codex', marginRollout(), 3);
    expect(new Set(digests).size).toBe(1);
  });

  it('gives a Claude Code session the same bytes in three fresh stores', async () => {
    const digests = await trimTimes('claude', `${buildDemoClaudeSession({ turns: 20 }).join('\n')}\n`, 3);
    expect(new Set(digests).size).toBe(1);
  });
});
