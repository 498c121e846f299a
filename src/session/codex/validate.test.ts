import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexCorpusRollouts, RolloutBuilder } from './testing.js';
import { CODEX_RULES, codexErrorFindings, isValid, validateCodexFile, type ValidationFinding } from './validate.js';

const dir = mkdtempSync(join(tmpdir(), 'ctxvm-codex-validate-'));
let n = 0;
async function findings(b: RolloutBuilder | string): Promise<ValidationFinding[]> {
  const file = join(dir, `r${++n}.jsonl`);
  writeFileSync(file, typeof b === 'string' ? b : b.toString());
  return (await validateCodexFile(file)).findings;
}
const rules = (fs: ValidationFinding[]) => fs.map((f) => `${f.rule}@${f.line}:${f.severity}`);

/** A clean session: prompt, reasoning, a call and its output, an answer. */
const clean = () => new RolloutBuilder().meta().turnContext().environment().user('list files').reasoning('look').shell('ls', 'a\nb').assistant('two files');

describe('validateCodexContext', () => {
  it('finds nothing in a clean rollout', async () => {
    expect(await findings(clean())).toEqual([]);
  });

  it('model-provider: a rollout recorded with another provider than openai is a warning at its session_meta (Codex refuses it unless configured)', async () => {
    const other = await findings(new RolloutBuilder().meta({ model_provider: 'ollama-launch' }).turnContext().user('hi').assistant('hello'));
    expect(rules(other)).toEqual(['model-provider@1:warning']);
    expect(other[0]!.message).toContain('"ollama-launch"');
    expect(isValid(other)).toBe(true);
    expect(rules(await findings(new RolloutBuilder().meta({ model_provider: 'openai' }).turnContext().user('hi').assistant('hello')))).toEqual([]);
  });

  it('unknown-line-type: one warning per unknown top-level type; world_state and inter-agent metadata are known', async () => {
    const b = clean().line('world_state', { agents_md: 'x' }).line('inter_agent_communication_metadata', { from: 'a' }).line('ctxvm_future_line', {}).line('ctxvm_future_line', {});
    const fs = await findings(b);
    expect(rules(fs)).toEqual([`unknown-line-type@${b.lines.length - 1}:warning`]);
    expect(fs[0]!.message).toContain('"ctxvm_future_line" (2 lines)');
  });

  it('json-line: a line that is not JSON', async () => {
    const text = clean().toString().replace('\n', '\n{"timestamp":"x","type":"resp\n');
    expect(rules(await findings(text))).toEqual(['json-line@2:error']);
  });

  it('session-meta-first: the first line must be session_meta with payload.id', async () => {
    expect(rules(await findings(new RolloutBuilder().turnContext().user('hi')))).toEqual(['session-meta-first@1:error']);
    expect(rules(await findings(new RolloutBuilder().line('session_meta', { cwd: '/x' }).user('hi')))).toEqual(['session-meta-first@1:error']);
    expect(rules(await findings('not json\n' + clean().toString()))).toEqual(['json-line@1:error', 'session-meta-first@1:error']);
    expect(rules(await findings(''))).toEqual(['session-meta-first@0:error']);
    // a session_meta further down does not help
    expect(rules(await findings(new RolloutBuilder().user('hi').meta()))).toEqual(['session-meta-first@1:error']);
  });

  it('call-without-output: an error when the conversation went on, a warning in the last response', async () => {
    const mid = new RolloutBuilder().meta().user('go').call('shell', { command: 'ls' }, 'c1').user('never mind').assistant('ok');
    expect(rules(await findings(mid))).toEqual(['call-without-output@4:error']);
    const laterRound = new RolloutBuilder().meta().user('go').call('shell', { command: 'ls' }, 'c1').shell('pwd', '/x').shell('id', 'u');
    expect(rules(await findings(laterRound))).toEqual(['call-without-output@4:error']);
    const atEnd = new RolloutBuilder().meta().user('go').reasoning('r').call('shell', { command: 'sleep 100' }, 'c1');
    expect(rules(await findings(atEnd))).toEqual(['call-without-output@6:warning']);
    // parallel calls of the last response: one answered, one still running when the session ended
    const parallel = new RolloutBuilder().meta().user('go').call('shell', { command: 'a' }, 'c1').call('shell', { command: 'b' }, 'c2').output('A', 'c1');
    expect(rules(await findings(parallel))).toEqual(['call-without-output@5:warning']);
    expect(isValid(await findings(atEnd))).toBe(true);
    expect(isValid(await findings(mid))).toBe(false);
  });

  it('output-without-call: an output answering no earlier call', async () => {
    expect(rules(await findings(clean().output('stray', 'nobody')))).toEqual(['output-without-call@12:error']);
    const before = new RolloutBuilder().meta().user('go').output('early', 'c1').call('shell', { command: 'ls' }, 'c1').assistant('x');
    expect(rules(await findings(before))).toEqual(['output-without-call@4:error', 'call-without-output@5:error']);
    // a call the compaction replaced does not answer for an output after it
    const compacted = new RolloutBuilder().meta().user('go').call('shell', { command: 'ls' }, 'c1');
    compacted.compacted('S', [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'S' }] }]).output('late', 'c1');
    expect(rules(await findings(compacted))).toEqual(['output-without-call@6:error']);
  });

  it('duplicate-call-id: one call per call_id, answered once', async () => {
    const twoCalls = new RolloutBuilder().meta().user('go').shell('ls', 'x');
    twoCalls.call('shell', { command: 'pwd' }, twoCalls.lastCallId).output('y');
    expect(rules(await findings(twoCalls))).toEqual(['duplicate-call-id@6:error', 'duplicate-call-id@7:error']);
    const twoOutputs = new RolloutBuilder().meta().user('go').shell('ls', 'x').output('again');
    expect(rules(await findings(twoOutputs))).toEqual(['duplicate-call-id@6:error']);
  });

  it('empty-content: no message without blocks, no empty text block', async () => {
    expect(rules(await findings(clean().item({ type: 'message', role: 'user', content: [] })))).toEqual(['empty-content@12:error']);
    expect(rules(await findings(clean().item({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: '' }] })))).toEqual(['empty-content@12:error']);
    expect(rules(await findings(clean().item({ type: 'message', role: 'user' })))).toEqual(['empty-content@12:error']);
  });

  it('reasoning-encrypted: a reasoning item that lost its encrypted_content while others keep theirs', async () => {
    expect(rules(await findings(clean().reasoning('again', null).assistant('x')))).toEqual(['reasoning-encrypted@13:error']);
    expect(rules(await findings(clean().reasoning('again', false).assistant('x')))).toEqual(['reasoning-encrypted@13:error']);
    // a session that never had encrypted reasoning is fine
    const plain = new RolloutBuilder().meta().user('go').reasoning('a', null).reasoning('b', false).assistant('x');
    expect(await findings(plain)).toEqual([]);
    // removing whole reasoning items is the safe trim
    expect(await findings(new RolloutBuilder().meta().user('go').shell('ls', 'x').assistant('y'))).toEqual([]);
  });

  it('judges the file, not what Codex would repair, and names every rule it uses', async () => {
    const fs = await findings(new RolloutBuilder().meta().user('go').call('shell', { command: 'ls' }).user('next').output('stray', 'zz'));
    expect(fs.map((f) => f.rule).sort()).toEqual(['call-without-output', 'output-without-call']);
    for (const f of fs) expect(Object.keys(CODEX_RULES)).toContain(f.rule);
  });

  it('codexErrorFindings lists errors only, as "line N: rule: message"', async () => {
    const file = join(dir, 'errors.jsonl');
    writeFileSync(file, new RolloutBuilder().meta().user('go').call('shell', { command: 'ls' }, 'c1').user('x').toString());
    expect(await codexErrorFindings(file)).toEqual([expect.stringMatching(/^line 4: call-without-output: /)]);
  });
});

const corpus = codexCorpusRollouts(process.cwd());
if (corpus.length === 0) console.log('skipping Codex corpus validation: ../shared/corpus/sessions/codex not found');

describe.skipIf(corpus.length === 0)('the corpus rollouts', () => {
  // the only finding a corpus rollout may have: the model-provider warning of one recorded with
  // another provider than openai (Codex refuses to resume those unless it is configured)
  it.each(corpus.map((f) => [basename(f), f]))('%s is valid', async (_name, file) => {
    const { findings: fs, index } = await validateCodexFile(file);
    const other = index.modelProvider !== undefined && index.modelProvider !== 'openai';
    expect(rules(fs)).toEqual(other ? ['model-provider@1:warning'] : []);
  });
});
