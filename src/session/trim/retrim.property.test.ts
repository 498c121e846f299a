/**
 * Properties of trimming a trimmed file, for both agents, on sessions drawn by fast-check (built
 * here, so they run without ../shared): trim(trim(x)) with the same policy is trim(x) byte for byte;
 * a second trim never grows the context the agent resends; and one restore of a file trimmed any
 * number of times gives x back, every part checked by its digest.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createFsObjectStore } from '../../store/drivers/objects-fs.js';
import { createTokenCounter } from '../../text/tokens.js';
import { loadSession, newFindings, trimSession } from '../session.js';
import { countContextTokens } from '../token-breakdown.js';
import type { TrimPolicy } from './policy.js';
import { restoreSession } from './restore.js';
import { RolloutBuilder } from '../codex/testing.js';
import { Transcript, text, thinking, toolResult, toolUse } from '../../../test/support/claude-transcript.js';

const root = mkdtempSync(join(tmpdir(), 'ctxvm-retrim-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const RUNS = Number(process.env.CTXVM_PROPERTY_RUNS) || 10;
const counter = createTokenCounter();

/** One round trip of a drawn session: a prompt, calls with outputs of drawn sizes, a reply. */
interface Turn {
  calls: { lines: number; error: boolean }[];
  thinking: boolean;
}
const turnsArb = fc.array(
  fc.record({ calls: fc.array(fc.record({ lines: fc.integer({ min: 0, max: 300 }), error: fc.boolean() }), { maxLength: 3 }), thinking: fc.boolean() }),
  { minLength: 1, maxLength: 8 },
);
const policyArb: fc.Arbitrary<Partial<TrimPolicy>> = fc.record({
  keepLastTurns: fc.integer({ min: 0, max: 3 }),
  toolResultTokens: fc.constantFrom(20, 50, 200),
  tailPayloadTokens: fc.constantFrom(0, 300, 1000),
});

const output = (i: number, lines: number) => Array.from({ length: lines }, (_, k) => `output ${i} line ${k}: ${'data '.repeat(k % 7)}`).join('\n');

function claudeSession(turns: Turn[]): string {
  const t = new Transcript();
  let call = 0;
  turns.forEach((turn, n) => {
    t.user(`step ${n}`);
    turn.calls.forEach((c) => {
      const id = `toolu_${String(++call).padStart(4, '0')}`;
      t.reply(`msg_${n}_${call}`, [...(turn.thinking ? [thinking(`thinking about ${id}`)] : []), toolUse(id, 'Bash', { command: `run ${id}`, description: 'x'.repeat(c.lines % 40) })]);
      t.results(toolResult(id, output(call, c.lines), c.error));
    });
    t.assistant(`msg_${n}_done`, text(`done with step ${n}`));
  });
  return t.text();
}

function codexSession(turns: Turn[]): string {
  const b = new RolloutBuilder().meta().turnContext().environment();
  let call = 0;
  turns.forEach((turn, n) => {
    b.user(`step ${n}`);
    for (const c of turn.calls) {
      if (turn.thinking) b.reasoning(`thinking ${n}`);
      b.shell(`run ${++call}`, output(call, c.lines), c.error ? 1 : 0);
    }
    b.assistant(`done with step ${n}`);
  });
  return b.toString();
}

async function tokensOf(file: string): Promise<number> {
  return countContextTokens((await loadSession(file)).context, counter).tokens;
}

describe.each([
  ['Claude Code', claudeSession],
  ['Codex', codexSession],
] as const)('trimming a trimmed %s session', (_agent, build) => {
  it(
    'is idempotent, never grows the context, and one restore undoes every trim',
    async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(turnsArb, policyArb, policyArb, async (turns, first, second) => {
          const dir = join(root, `${_agent.replace(/\W/g, '')}-${++run}`);
          await mkdir(dir);
          const store = createFsObjectStore({ root: join(dir, 'objects') });
          const x = join(dir, 'x.jsonl');
          writeFileSync(x, build(turns));
          const once = join(dir, 'once.jsonl');
          const same = join(dir, 'same.jsonl');
          const twice = join(dir, 'twice.jsonl');
          await trimSession({ input: x, output: once, store, policy: first, measure: false });
          expect(newFindings((await loadSession(x)).findings, (await loadSession(once)).findings).filter((f) => f.severity === 'error')).toEqual([]);
          // the same policy again has nothing new to do
          await trimSession({ input: once, output: same, store, policy: first, measure: false });
          expect(Buffer.compare(await readFile(same), await readFile(once))).toBe(0);
          // another policy composes with the first trim and never grows what the agent resends
          await trimSession({ input: once, output: twice, store, policy: second, measure: false });
          expect(await tokensOf(twice)).toBeLessThanOrEqual(await tokensOf(once));
          if (JSON.stringify(second) === JSON.stringify(first)) expect(await tokensOf(twice)).toBe(await tokensOf(once));
          // one restore, whatever the number of trims, every part checked
          for (const file of [once, twice]) {
            const back = join(dir, 'back.jsonl');
            const trimmed = (await readFile(file, 'utf8')).includes('"ctxvm":{');
            const r = await restoreSession({ input: file, output: back, store, allowUntrimmed: !trimmed });
            expect(r.levels).toBe(trimmed ? 1 : 0);
            expect(r.unverified).toBe(0);
            expect(Buffer.compare(await readFile(back), await readFile(x))).toBe(0);
          }
        }),
        { numRuns: RUNS },
      );
    },
    Math.max(120_000, RUNS * 20_000),
  );
});
