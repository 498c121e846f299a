import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CODEX_ABORTED_OUTPUT,
  CODEX_OUTPUT_BUDGET_TOKENS,
  reconstructCodexContext,
  summarizeCodexContext,
  toAgentContext,
  truncateCodexOutput,
  type CodexContext,
} from './context.js';
import { scanCodexSession } from './scan.js';
import { validateCodexContext } from './validate.js';
import { codexCorpusRollouts, RolloutBuilder } from './testing.js';

const dir = mkdtempSync(join(tmpdir(), 'ctxvm-codex-context-'));
let n = 0;
async function load(b: RolloutBuilder | string): Promise<CodexContext> {
  const file = join(dir, `r${++n}.jsonl`);
  writeFileSync(file, typeof b === 'string' ? b : b.toString());
  return reconstructCodexContext(await scanCodexSession(file));
}
const keys = (ctx: CodexContext) => summarizeCodexContext(ctx).types;

/**
 * History items Codex 0.169 sent for each corpus rollout (docs/resume-model.md §3, "reconstructed"
 * column, recorded with the real CLI). Keys: u/a user/assistant message, r reasoning, fc/fco
 * function call/output, ctc/ctco custom tool call/output. `provider`: the rollout names a model
 * provider other than openai, and Codex refuses to resume it under the probe's config ("no longer
 * configured"); its counts are what Codex sent once that one field read "openai" (experiments
 * Z-F-provider-openai, Z-G-provider-openai, Z-V-provider-openai).
 */
const EXPECTED: Record<string, { items: number; u: number; a?: number; r?: number; fc?: number; fco?: number; ctc?: number; ctco?: number; provider?: string }> = {
  '2025-09-26T17-01-04': { items: 87, u: 16, r: 27, fc: 17, fco: 17, a: 10 },
  '2025-09-26T19-38-50': { items: 15, u: 3, r: 4, fc: 4, fco: 4 },
  '2025-09-26T19-45-48': { items: 1, u: 1 },
  '2025-09-26T19-47-48': { items: 1, u: 1 },
  '2025-09-26T20-11-25': { items: 13, u: 4, r: 3, fc: 3, fco: 3 },
  '2025-09-29T13-03-00': { items: 4, u: 2, r: 1, a: 1 },
  '2025-09-29T13-03-34': { items: 4, u: 2, r: 1, a: 1 },
  '2025-09-29T13-07-08': { items: 7, u: 3, r: 2, a: 2 },
  '2025-09-29T13-07-55': { items: 4, u: 2, r: 1, a: 1 },
  '2025-09-29T13-09-19': { items: 75, u: 3, r: 24, fc: 24, fco: 24 },
  '2025-09-29T17-33-37': { items: 27, u: 3, r: 8, fc: 8, fco: 8 },
  '2025-12-15T12-00-25': { items: 1, u: 1 },
  '2025-12-15T12-00-35': { items: 87, u: 3, r: 28, fc: 23, fco: 23, ctc: 4, ctco: 4, a: 2 },
  '2025-12-15T14-40-50': { items: 13, u: 2, r: 4, fc: 2, fco: 2, ctc: 1, ctco: 1, a: 1 },
  '2025-12-15T14-44-44': { items: 108, u: 3, r: 33, fc: 35, fco: 35, a: 2 },
  '2025-12-15T15-11-10': { items: 35, u: 2, r: 10, fc: 11, fco: 11, a: 1 },
  // sessions in the wild (issue 22): 0.63 – 0.121, archived, subagent and forked rollouts
  '2025-11-27T11-34-23': { items: 1, u: 1, provider: 'codex' },
  '2025-11-28T22-33-42': { items: 326, u: 25, a: 22, r: 73, fc: 77, fco: 77, ctc: 26, ctco: 26, provider: 'codex' },
  '2026-01-15T23-05-23': { items: 3, u: 3 },
  '2026-03-24T21-27-50': { items: 167, u: 15, a: 23, r: 30, fc: 44, fco: 44, ctc: 1, ctco: 1 },
  '2026-03-29T22-19-12': { items: 113, u: 21, a: 25, r: 16, fc: 21, fco: 21, ctc: 2, ctco: 2 },
  '2026-04-10T09-55-11': { items: 66, u: 2, a: 8, r: 11, fc: 22, fco: 22 },
  '2026-04-15T11-58-23': { items: 109, u: 3, a: 9, r: 9, fc: 43, fco: 43 },
  '2026-04-19T22-04-58': { items: 122, u: 8, a: 4, r: 26, fc: 41, fco: 41, provider: 'ollama-launch' },
};

const corpus = codexCorpusRollouts(process.cwd());
if (corpus.length === 0) console.log('skipping Codex corpus tests: ../shared/corpus/sessions/codex not found');
// request bodies recorded by scripts/probe-corpus.mjs (its default --out), when on this machine
const GROUND_TRUTH = process.env.CTXVM_GROUND_TRUTH ?? '/tmp/probe-ground-truth';

describe.skipIf(corpus.length === 0)('reconstruction of the corpus rollouts', () => {
  it.each(corpus.map((f) => [basename(f), f]))('%s matches the request Codex sent', async (_name, file) => {
    const stamp = /rollout-(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d)/.exec(file)![1]!;
    const want = EXPECTED[stamp];
    expect(want, `no expectation for ${stamp}`).toBeDefined();
    const ctx = await reconstructCodexContext(await scanCodexSession(file));
    const s = summarizeCodexContext(ctx);
    expect(s.items).toBe(want!.items);
    expect({
      u: s.counts['message:user'] ?? 0,
      a: s.counts['message:assistant'] ?? 0,
      r: s.counts.reasoning ?? 0,
      fc: s.counts.function_call ?? 0,
      fco: s.counts.function_call_output ?? 0,
      ctc: s.counts.custom_tool_call ?? 0,
      ctco: s.counts.custom_tool_call_output ?? 0,
    }).toEqual({ a: 0, r: 0, fc: 0, fco: 0, ctc: 0, ctco: 0, ...want, items: undefined, provider: undefined });
    // a rollout of another model provider is reported: Codex resumes it only where that provider is configured
    const provider = validateCodexContext(await scanCodexSession(file), ctx).filter((f) => f.rule === 'model-provider');
    if (want!.provider) {
      expect(provider).toMatchObject([{ line: 1, severity: 'warning' }]);
      expect(provider[0]!.message).toContain(JSON.stringify(want!.provider));
    } else expect(provider).toEqual([]);
    expect(s.synthetic).toBe(0);
    expect(ctx.items.some((x) => x.item.type === 'ghost_snapshot')).toBe(false);

    // item by item against the request body the probe recorded, when it is on this machine
    const req = join(GROUND_TRUTH, `codex__${file.split('/sessions/codex/')[1]!.replace(/\//g, '__').replace(/\.jsonl$/, '')}.request.json`);
    if (!existsSync(req)) return;
    const input = (JSON.parse(readFileSync(req, 'utf8')) as { input: Record<string, unknown>[] }).input;
    let start = 0;
    const injectedBefore = (it: Record<string, unknown>) =>
      it.type === 'additional_tools' ||
      (it.type === 'message' && it.role === 'developer' && JSON.stringify(it.internal_chat_message_metadata_passthrough ?? '').includes('model.base_instructions'));
    while (start < input.length && injectedBefore(input[start]!)) start++;
    const canon = (it: Record<string, unknown>) => {
      const { id: _id, internal_chat_message_metadata_passthrough: _m, ...rest } = it;
      return JSON.stringify(rest);
    };
    const sent = input.slice(start, start + ctx.items.length).map(canon);
    expect(sent).toEqual(ctx.items.map((x) => canon(x.item)));
  });
});

describe('reconstruction rules (resume-model.md §2)', () => {
  it('sends every response_item in file order except ghost_snapshot; other lines are not items', async () => {
    const b = new RolloutBuilder().meta().turnContext().environment().user('hi').ghostSnapshot().tokenCount().reasoning('think').shell('ls', 'a\nb').assistant('done');
    const ctx = await load(b);
    expect(keys(ctx)).toEqual(['message:user', 'message:user', 'reasoning', 'function_call', 'function_call_output', 'message:assistant']);
    expect(ctx.items.map((x) => x.line)).toEqual([3, 4, 9, 10, 11, 12]);
    expect(ctx.model).toBe('gpt-5.1-codex');
  });

  it('a compacted line with replacement_history replaces everything before it', async () => {
    const repl = [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'first request' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'SUMMARY of the work so far' }] },
    ];
    const b = new RolloutBuilder().meta().environment().user('first request').reasoning('r').shell('ls', 'x').compacted('SUMMARY', repl).user('next').assistant('ok');
    const ctx = await load(b);
    expect(ctx.items.map((x) => x.item)).toEqual([...repl, { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'next' }] }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] }]);
    expect(ctx.items[0]!.replacement).toBe(true);
    expect(ctx.lastCompactedLine).toBe(9);
  });

  it('a compacted line without replacement_history keeps the user turns (not contextual ones) and adds the summary', async () => {
    const b = new RolloutBuilder().meta().environment().user('one').shell('ls', 'x').assistant('a1').user('two').compacted('CTXVM SUMMARY').user('three');
    const ctx = await load(b);
    const texts = ctx.items.map((x) => ((x.item.content as { text: string }[])[0]!.text));
    expect(texts).toEqual(['one', 'two', 'CTXVM SUMMARY', 'three']);
    expect(ctx.items[2]!.compactionSummary).toBe(true);
  });

  it('thread_rolled_back drops the last N user turns and everything after them', async () => {
    const b = new RolloutBuilder().meta().environment().user('one').assistant('a1').user('two').shell('ls', 'x').assistant('a2').user('three').assistant('a3').event('thread_rolled_back', { num_turns: 2 });
    const ctx = await load(b);
    expect(keys(ctx)).toEqual(['message:user', 'message:user', 'message:assistant']);
    expect(ctx.rollbacks).toBe(1);
  });

  it('answers a call without output "aborted" right after it, and drops an output without call', async () => {
    const b = new RolloutBuilder().meta().user('go');
    b.call('shell', { command: ['bash', '-lc', 'ls'] }, 'c1').customCall('apply_patch', '*** Begin Patch\n*** End Patch', 'c2');
    b.item({ type: 'local_shell_call', call_id: 'c3', status: 'completed', action: { type: 'exec', command: ['ls'] } });
    b.output('orphan', 'nobody').assistant('done');
    const ctx = await load(b);
    expect(keys(ctx)).toEqual(['message:user', 'function_call', 'function_call_output', 'custom_tool_call', 'custom_tool_call_output', 'local_shell_call', 'function_call_output', 'message:assistant']);
    for (const i of [2, 4, 6]) {
      expect(ctx.items[i]!.synthetic).toBe('aborted');
      expect(ctx.items[i]!.item.output).toBe(CODEX_ABORTED_OUTPUT);
      expect(ctx.items[i]!.item.call_id).toBe(ctx.items[i - 1]!.item.call_id);
    }
    // the file's own history keeps what the file says
    expect(ctx.history.map((x) => x.item.type)).toContain('function_call_output');
    expect(ctx.history).toHaveLength(6);
  });

  it('middle-truncates outputs over the budget as Codex does (400 000 chars → 48 024)', async () => {
    const big = 'x'.repeat(400_000);
    expect(truncateCodexOutput(big)).toHaveLength(48_024);
    expect(truncateCodexOutput(big)).toContain('…88000 tokens truncated…');
    expect(truncateCodexOutput('short')).toBe('short');
    expect(CODEX_OUTPUT_BUDGET_TOKENS).toBe(12_000);
    // never cuts inside a UTF-8 character
    const cjk = '字'.repeat(40_000);
    expect(truncateCodexOutput(cjk)).not.toContain('\ufffd');
    const ctx = await load(new RolloutBuilder().meta().user('go').call('shell', { command: 'cat big' }).output(big).assistant('ok'));
    expect(ctx.items[2]!.item.output).toHaveLength(48_024);
    expect(ctx.items[2]!.truncatedFromBytes).toBe(400_000);
    expect(ctx.history[2]!.item.output).toBe(big);
  });

  it('sends reasoning with summary, content and encrypted_content always present (null when absent)', async () => {
    const ctx = await load(new RolloutBuilder().meta().user('go').reasoning('r', false).assistant('ok'));
    expect(ctx.items[1]!.item).toMatchObject({ type: 'reasoning', content: null, encrypted_content: null });
    expect('encrypted_content' in ctx.history[1]!.item).toBe(false);
  });
});

describe('toAgentContext', () => {
  it('puts every part in its token category', async () => {
    const b = new RolloutBuilder().meta().message('developer', 'rules').user('question');
    b.item({ type: 'message', role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,AAAA' }] });
    b.reasoning('sum', 'ENC').call('shell', { command: 'ls' }).output('files').customCall('apply_patch', 'PATCH').customOutput('done').assistant('answer');
    const agent = toAgentContext(await load(b));
    expect(agent.agent).toBe('codex');
    const flat = agent.entries.flatMap((e) => e.parts.map((p) => `${e.role}:${p.category}:${p.text}`));
    expect(flat).toEqual([
      'developer:system:rules',
      'user:userText:question',
      'user:image:AAAA',
      'reasoning:thinking:sum',
      'reasoning:thinking:ENC',
      'function_call:toolInput:shell {"command":"ls"}',
      'function_call_output:toolResult:files',
      'custom_tool_call:toolInput:apply_patch PATCH',
      'custom_tool_call_output:toolResult:done',
      'assistant:assistantText:answer',
    ]);
  });

  it('counts a rebuilt compaction summary as system text', async () => {
    const agent = toAgentContext(await load(new RolloutBuilder().meta().user('one').compacted('SUMMARY').user('two')));
    expect(agent.entries.map((e) => e.parts.map((p) => `${p.category}:${p.text}`).join())).toEqual(['userText:one', 'system:SUMMARY', 'userText:two']);
  });

  it('marks Codex repairs as injected', async () => {
    const agent = toAgentContext(await load(new RolloutBuilder().meta().user('go').call('shell', { command: 'ls' }).user('stop')));
    expect(agent.entries.map((e) => e.injected ?? false)).toEqual([false, false, true, false]);
  });
});
