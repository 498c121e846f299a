/**
 * The transform counts a payload's tokens only as far as its decisions go (claude-transform.ts
 * `payloadTokens`): with an estimate that stops at the limit it asks for, every line comes out as
 * it does with the full estimate, whatever the policy, payload size or text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTokenCounter } from '../../text/tokens.js';
import type { LineMeta } from '../claude/scan.js';
import type { ClaudeLine } from '../claude/types.js';
import type { ClaudeTrimPlan } from './claude-plan.js';
import { emptyCounters, transformClaudeLine, type TransformContext } from './claude-transform.js';
import { resolvePolicy, type TrimPolicy } from './policy.js';

const counter = createTokenCounter({ calibration: 1.1 });

function plan(superseded: boolean): ClaudeTrimPlan {
  return {
    removed: new Map(),
    protectedFromLine: Number.POSITIVE_INFINITY,
    turnStarts: [],
    vanishingToolUses: new Set(),
    orphanResults: new Set(),
    reparent: new Map(),
    supersededReads: new Set(superseded ? ['toolu_r'] : []),
    tools: new Map([
      ['toolu_r', { name: 'Read', target: '/a.ts' }],
      ['toolu_b', { name: 'Bash', target: 'make' }],
    ]),
    relink: new Map(),
    unanswered: new Map(),
    tailThinking: false,
    // the line is in the current user turn: an error result goes by the tail's threshold
    errorsKeptFromLine: 1,
  };
}

const meta = (line: number): LineMeta =>
  ({ line, byteOffset: 0, byteLength: 0, kind: 'user', isSidechain: false, isMeta: false, isCompactSummary: false, isApiError: false, blockTypes: [], toolUses: [], toolResults: [], isPrompt: false, hasToolUseResult: false, annotated: false, emptyContent: false, isDisplayOnly: false, payloadChars: 0, hasImage: false }) as LineMeta;

/** Runs the transform on a copy of `line`; `capped`: with an estimate that honours limits. */
function run(line: ClaudeLine, policy: TrimPolicy, superseded: boolean, capped: boolean, legend: boolean) {
  const copy = structuredClone(line);
  const ctx: TransformContext = {
    plan: plan(superseded),
    policy,
    originalRef: '0123456789abcdef#42',
    tokensOf: (text, limit) => counter.estimate(text, capped ? limit : undefined),
    counters: emptyCounters(),
    legend: { pending: legend },
  };
  const changed = transformClaudeLine(copy, meta(3), ctx);
  return { changed, copy, counters: ctx.counters, legend: ctx.legend!.pending };
}

// long texts too: the estimate looks at its limit only every few thousand characters
const textOf = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 4000 }),
  fc.array(fc.constantFrom('error: x failed\n', '    ', 'aaaaaaaa', '中文字符', '{"k": 1},', '\n', '🚀', 'ABC'), { minLength: 500, maxLength: 6000 }).map((a) => a.join('')),
  fc.integer({ min: 0, max: 400_000 }).map((n) => ' '.repeat(n)),
);

describe('payload tokens counted only as far as the decisions go', () => {
  it('give the same line as the full estimate', () => {
    fc.assert(
      fc.property(
        textOf,
        textOf,
        fc.record({ toolResultTokens: fc.integer({ min: 0, max: 3000 }), toolInputTokens: fc.integer({ min: 0, max: 3000 }), maxStubShare: fc.oneof(fc.double({ min: 0.001, max: 0.05, noNaN: true }), fc.double({ min: 0.05, max: 1, noNaN: true })), excerptChars: fc.integer({ min: 0, max: 400 }), excerptShare: fc.double({ min: 0, max: 0.2, noNaN: true }) }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        (result, input, overrides, superseded, legend, isError) => {
          const policy = resolvePolicy(overrides);
          const user: ClaudeLine = { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: superseded ? 'toolu_r' : 'toolu_b', content: result, ...(isError ? { is_error: true } : {}) }] } };
          const assistant: ClaudeLine = { type: 'assistant', message: { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_w', name: 'Write', input: { file_path: '/x', content: input } }] } };
          // a command is paged out by its head (commandStub), counted the same way
          const script = `${input.slice(0, 600).replace(/\n/g, ' ')}\n${input}`;
          const command: ClaudeLine = { type: 'assistant', message: { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_c', name: 'Bash', input: { command: script, description: 'run it' } }] } };
          for (const line of [user, assistant, command]) expect(run(line, policy, superseded, true, legend)).toEqual(run(line, policy, superseded, false, legend));
        },
      ),
      { numRuns: 400 },
    );
  });
});
