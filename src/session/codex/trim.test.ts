import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CtxvmError } from '../../errors.js';
import { createFsObjectStore } from '../../store/drivers/objects-fs.js';
import { createTokenCounter } from '../../text/tokens.js';
import { pageIn } from '../trim/page-in.js';
import { resolvePolicy, type TrimPolicy } from '../trim/policy.js';
import { restoreSession } from '../trim/restore.js';
import { STUB_PREFIX } from '../trim/stub.js';
import { findStubs } from '../trim/stub-scan.js';
import { reconstructCodexContext, type CodexContext } from './context.js';
import { scanCodexSession } from './scan.js';
import { codexCorpusRollouts, RolloutBuilder } from './testing.js';
import { trimCodexSession, type CodexTrimStats } from './trim.js';
import type { CodexItem } from './types.js';
import { codexErrorFindings, validateCodexFile } from './validate.js';

const dir = mkdtempSync(join(tmpdir(), 'ctxvm-codex-trim-'));
const store = createFsObjectStore({ root: join(dir, 'objects') });
const tokens = createTokenCounter();
let n = 0;

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const linesOf = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
const context = async (path: string): Promise<CodexContext> => reconstructCodexContext(await scanCodexSession(path));
/** The page-in reference of every stub in a file (a call id for outputs and arguments). */
function refsIn(lines: Record<string, unknown>[]): Set<string> {
  const out = new Set<string>();
  for (const l of lines) for (const s of findStubs(l)) out.add(s.ref);
  return out;
}

interface Trimmed {
  input: string;
  output: string;
  stats: CodexTrimStats;
  before: CodexContext;
  after: CodexContext;
}

/** Writes the rollout, trims it with the validator as the check, and checks the invariants every trim keeps. */
async function trim(source: RolloutBuilder | string, policy: Partial<TrimPolicy> = {}): Promise<Trimmed> {
  const input = join(dir, `in-${++n}.jsonl`);
  if (source instanceof RolloutBuilder) writeFileSync(input, source.toString());
  else if (existsSync(source)) writeFileSync(input, readFileSync(source));
  else writeFileSync(input, source);
  const output = join(dir, `out-${n}.jsonl`);
  const inputHash = sha(input);
  const stats = await trimCodexSession({ input, output, store, policy: resolvePolicy(policy), tokens, check: codexErrorFindings });
  // the input is never modified
  expect(sha(input)).toBe(inputHash);
  // the output validates
  const checked = await validateCodexFile(output);
  expect(checked.findings.filter((f) => f.severity === 'error')).toEqual([]);
  // restore(trim(x)) is x, byte for byte (a trim with nothing to do writes x itself)
  const restored = join(dir, `restored-${n}.jsonl`);
  const untouched = !readFileSync(output, 'utf8').includes('"ctxvm":{');
  if (untouched) expect(sha(output)).toBe(inputHash);
  const back = await restoreSession({ input: output, output: restored, store, allowUntrimmed: untouched });
  // an input an earlier trim wrote comes back as that trim's input
  if (!readFileSync(input, 'utf8').includes('"ctxvm":{')) expect(readFileSync(restored).equals(readFileSync(input))).toBe(true);
  if (!untouched) expect(back.unverified).toBe(0);
  return { input, output, stats, before: await context(input), after: checked.context };
}

/** Every stub reference in the file pages back in; returns ref → the payload as text. */
async function pageInAll(output: string): Promise<Map<string, string>> {
  const refs = new Map<string, string>();
  for (const ref of refsIn(linesOf(output))) refs.set(ref, (await pageIn(store, ref, { files: [output] })).text);
  return refs;
}

const isStub = (v: unknown) => typeof v === 'string' && v.includes('[ctxvm paged out');
const big = (label: string, lines = 400) => Array.from({ length: lines }, (_, i) => `${label} line ${i}: ${'lorem ipsum dolor sit amet '.repeat(3)}`).join('\n');

/** Original items that trimmed ones must match, in order: equal, or the same call with a stubbed payload. */
function sameItem(a: CodexItem, b: CodexItem): boolean {
  if (JSON.stringify(a) === JSON.stringify(b)) return true;
  if (a.type !== b.type || a.call_id !== b.call_id || a.role !== b.role || a.name !== b.name) return false;
  if (a.type.endsWith('_call_output')) return isStub(b.output) || (Array.isArray(b.output) && JSON.stringify(b.output).includes('[ctxvm paged out'));
  if (a.type === 'function_call') return isStub(b.arguments) || String(b.arguments).includes('[ctxvm paged out');
  if (a.type === 'custom_tool_call') return isStub(b.input);
  if (a.type === 'message') return JSON.stringify(b.content).includes('[ctxvm paged out');
  return false;
}

/** Aligns trimmed items with the original's; returns the original items that have no counterpart. */
function unmatched(before: CodexContext, after: CodexContext): CodexItem[] {
  const missing: CodexItem[] = [];
  let j = 0;
  for (const x of before.items) {
    const y = after.items[j];
    if (y && sameItem(x.item, y.item)) j++;
    else missing.push(x.item);
  }
  expect(j, 'every trimmed item matches an original item, in order').toBe(after.items.length);
  return missing;
}

const corpus = codexCorpusRollouts(process.cwd());
if (corpus.length === 0) console.log('skipping Codex corpus trim tests: ../shared/corpus/sessions/codex not found');

describe.skipIf(corpus.length === 0)('trimming the corpus rollouts', () => {
  it.each(corpus.map((f) => [basename(f), f]))('%s: valid, restorable, same history but dropped reasoning, stubs page in', async (_name, file) => {
    const t = await trim(file);
    const missing = unmatched(t.before, t.after);
    // only whole reasoning items of earlier round trips are gone; everything else is there, in order
    expect(missing.every((it) => it.type === 'reasoning')).toBe(true);
    expect(missing).toHaveLength(t.stats.counters.thinking);
    // user and assistant text is verbatim (inline images may become stubs)
    const texts = (c: CodexContext) =>
      c.items.filter((x) => x.item.type === 'message').map((x) => JSON.stringify((x.item.content as { type: string }[]).filter((b) => b.type !== 'input_image' && !isStub((b as { text?: unknown }).text))));
    expect(texts(t.after)).toEqual(texts(t.before));
    // every stubbed output pages back in to the original output
    const originals = new Map(t.before.history.filter((x) => x.item.type.endsWith('_call_output')).map((x) => [x.item.call_id, x.item.output]));
    const paged = await pageInAll(t.output);
    for (const x of t.after.history) {
      if (!x.item.type.endsWith('_call_output') || !isStub(x.item.output)) continue;
      expect(paged.get(String(x.item.call_id))).toBe(originals.get(x.item.call_id));
    }
    if (t.stats.counters.toolResults > 0) expect(paged.size).toBeGreaterThan(0);
  });
});

describe('trimCodexSession', () => {
  it('pages out a large output behind a stub that says its size and quotes its tail, paged in by the call id', async () => {
    const out = big('test');
    const b = new RolloutBuilder().meta().turnContext().environment().user('run the tests').reasoning('r1').shell('npm test', out, 0);
    b.reasoning('r2').shell('ls', 'a').reasoning('r3').shell('pwd', '/x').assistant('done');
    const t = await trim(b);
    const stubbed = t.after.items.find((x) => x.item.type === 'function_call_output' && isStub(x.item.output))!;
    const stub = String(stubbed.item.output);
    expect(stub.startsWith(STUB_PREFIX)).toBe(true);
    expect(stub).toMatch(/\d+ lines/);
    // a command's output is quoted by its tail; a zero exit says nothing
    expect(stub).toContain('test line 399');
    expect(stub).not.toContain('exit 0');
    expect(tokens.estimate(stub)).toBeLessThanOrEqual(0.25 * tokens.estimate(out));
    const id = String(stubbed.item.call_id);
    expect((await pageIn(store, id, { files: [t.output] })).text).toBe(`Exit code: 0\nWall time: 0 seconds\nOutput:\n${out}`);
    expect(t.stats.counters.toolResults).toBe(1);
  });

  it('quotes nothing of a pure file read: the file is in the workspace, under the path the call keeps', async () => {
    const b = new RolloutBuilder().meta().user('show the readme and the config');
    b.shell('cat README.md', big('README'), 0).shell('cat config.toml', big('config'), 1);
    b.shell('ls', 'a').shell('pwd', '/x').assistant('done');
    const t = await trim(b);
    const [readme, config] = t.after.items.filter((x) => x.item.type === 'function_call_output').map((x) => String(x.item.output));
    expect(readme).toMatch(/^\[ctxvm paged out [\d,]+ lines[^\]]*\]$/);
    // a failed read still quotes (its status says it failed)
    expect(config).toMatch(/^\[ctxvm paged out [^\]]*exit 1[^\]]*\]\n/);
    expect(String(t.after.items.find((x) => x.item.type === 'function_call' && String(x.item.arguments).includes('README'))!.item.arguments)).toContain('cat README.md');
  });

  it('keeps the last K round trips untouched, and errors when keepErrors is set', async () => {
    const b = new RolloutBuilder().meta().user('go').shell('make', big('error'), 2).shell('cat a.txt', big('a')).shell('cat b.txt', big('b')).assistant('done');
    // four model responses: three calls, then the answer
    const stubs = (t: Trimmed) => t.after.items.filter((x) => x.item.type === 'function_call_output').map((x) => isStub(x.item.output));
    // a tail of 0: the last K round trips byte for byte, and errors never paged out
    expect(stubs(await trim(b, { keepLastTurns: 3, tailPayloadTokens: 0 }))).toEqual([false, false, false]);
    expect(stubs(await trim(b, { keepLastTurns: 2, tailPayloadTokens: 0 }))).toEqual([false, true, false]);
    expect(stubs(await trim(b, { keepLastTurns: 0, tailPayloadTokens: 0 }))).toEqual([false, true, true]);
    // by default payloads over the tail's threshold go even there, errors included
    expect(stubs(await trim(b, { keepLastTurns: 3 }))).toEqual([true, true, true]);
    const t2 = await trim(b, { keepLastTurns: 2, keepErrors: false, tailPayloadTokens: 0 });
    expect(t2.after.items.filter((x) => x.item.type === 'function_call_output').map((x) => isStub(x.item.output))).toEqual([true, true, false]);
  });

  it('keepErrors ends with the user turn: a failure before a newer user message pages out like any old output', async () => {
    const b = new RolloutBuilder().meta().user('build it').shell('make', big('error'), 2).assistant('make fails in step 3');
    b.user('fix it and build again').shell('make', big('error'), 2).shell('cat a.txt', big('a')).assistant('done');
    const outputs = (t: Trimmed) => t.after.items.filter((x) => x.item.type === 'function_call_output').map((x) => isStub(x.item.output));
    // a tail of 0: only age and the error rule decide; the failure of the current turn stays, the answered one goes
    expect(outputs(await trim(b, { keepLastTurns: 1, tailPayloadTokens: 0 }))).toEqual([true, false, true]);
    expect(outputs(await trim(b, { keepLastTurns: 1, tailPayloadTokens: 0, keepErrors: false }))).toEqual([true, true, true]);
  });

  it('pages out bulky call inputs but keeps what identifies them', async () => {
    const content = big('file');
    const patch = `*** Begin Patch\n*** Update File: src/app.ts\n@@\n${big('+added')}\n*** Add File: src/new.ts\n+x\n*** End Patch`;
    const heredoc = `cat > notes.md <<'EOF'\n${big('note')}\nEOF`;
    const b = new RolloutBuilder().meta().user('go');
    b.call('write_file', { path: 'src/a.ts', content }).output('ok');
    b.customCall('apply_patch', patch).customOutput('{"output":"Success.","metadata":{"exit_code":0}}');
    b.call('shell', { command: ['bash', '-lc', heredoc], workdir: '/w' }).output('{"output":"","metadata":{"exit_code":0}}');
    b.shell('ls', 'x').shell('pwd', 'y').assistant('done');
    const t = await trim(b);
    const [write, , apply, , shell] = t.after.items.slice(1).map((x) => x.item);
    const writeArgs = JSON.parse(String(write!.arguments)) as Record<string, string>;
    expect(writeArgs.path).toBe('src/a.ts');
    // the key stands right before the stub, which does not repeat it
    expect(writeArgs.content).toMatch(/^\[ctxvm paged out 400 lines\]/);
    expect(String(apply!.input).startsWith(STUB_PREFIX)).toBe(true);
    // the patch's first lines say which files it touched
    expect(String(apply!.input)).toContain('*** Begin Patch');
    const cmd = (JSON.parse(String(shell!.arguments)) as { command: string[] }).command;
    expect(cmd.slice(0, 2)).toEqual(['bash', '-lc']);
    expect(cmd[2]!.split('\n')[0]).toBe("cat > notes.md <<'EOF'");
    expect(cmd[2]).toContain('[ctxvm paged out rest of the shell command');
    const paged = await pageInAll(t.output);
    expect([...paged.values()]).toEqual(expect.arrayContaining([content, patch]));
    expect(t.stats.counters.toolInputs).toBe(3);
  });

  it('pages out inline images of messages and list-shaped outputs', async () => {
    const data = `data:image/png;base64,${'iVBORw0KGgo'.repeat(2000)}`;
    const b = new RolloutBuilder().meta();
    b.item({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'what is this?' }, { type: 'input_image', image_url: data }] });
    b.call('view_image', { path: 'shot.png' }).output([{ type: 'input_image', image_url: data }]);
    b.shell('ls', 'x').shell('pwd', 'y').assistant('a cat');
    const t = await trim(b);
    const user = t.after.items[0]!.item.content as { type: string; text: string }[];
    expect(user[0]).toEqual({ type: 'input_text', text: 'what is this?' });
    expect(user[1]!.type).toBe('input_text');
    expect(user[1]!.text).toMatch(/^\[ctxvm paged out image\/png image, [\d.]+ KB · ctxvm:[0-9a-f]{16}#\d+\/payload\/content\/1\]$/);
    const ref = /(ctxvm:[0-9a-f]+#\d+\/[^\]]+)/.exec(user[1]!.text)![1]!;
    expect((await pageIn(store, ref)).content).toEqual({ type: 'input_image', image_url: data });
    expect(JSON.stringify(t.after.items[2]!.item.output)).toContain('[ctxvm paged out image/png image');
    expect(t.stats.counters.images).toBe(2);
  });

  it('drops whole reasoning items of earlier round trips, never just their encrypted_content', async () => {
    const b = new RolloutBuilder().meta().user('go').reasoning('r1').shell('ls', 'x').reasoning('r2').shell('pwd', 'y').reasoning('r3').assistant('done');
    const t = await trim(b, { keepLastTurns: 2 });
    const reasoning = t.after.items.filter((x) => x.item.type === 'reasoning');
    expect(reasoning.map((x) => (x.item.summary as { text: string }[])[0]!.text)).toEqual(['r2', 'r3']);
    for (const x of reasoning) expect(String(x.item.encrypted_content)).toMatch(/^gAAAAAB/);
    expect(t.stats.counters.thinking).toBe(1);
    const kept = await trim(b, { thinking: false });
    expect(kept.after.items.filter((x) => x.item.type === 'reasoning')).toHaveLength(3);
  });

  it('pages out display events and ghost snapshots but keeps the events resume depends on', async () => {
    const b = new RolloutBuilder().meta().turnContext().user('one').ghostSnapshot().event('task_started', { turn_id: 't1' }).tokenCount().shell('ls', 'x');
    b.event('exec_command_end', { call_id: 'call_1', stdout: 'x' }).assistant('a1').event('task_complete', { turn_id: 't1' }).event('turn_aborted', { reason: 'interrupted' });
    b.event('thread_rolled_back', { num_turns: 1 }).event('future_event', { x: 1 }).user('two').shell('pwd', 'y').shell('id', 'z').assistant('a2');
    const t = await trim(b);
    const kept = linesOf(t.output).map((l) => (l.type === 'event_msg' ? `event:${(l.payload as { type: string }).type}` : String(l.type)));
    expect(kept.filter((k) => k.startsWith('event:'))).toEqual([
      'event:user_message',
      'event:task_started',
      'event:task_complete',
      'event:turn_aborted',
      'event:thread_rolled_back',
      'event:future_event',
      'event:user_message',
      'event:agent_message', // inside the protected last round trips
    ]);
    expect(JSON.stringify(linesOf(t.output))).not.toContain('ghost_snapshot');
    expect(t.stats.counters.events).toBe(3);
    expect(t.stats.counters.ghostSnapshots).toBe(1);
    // the rollback still applies to the same history
    expect(t.after.items.map((x) => x.item)).toEqual(t.before.items.map((x) => x.item));
  });

  it('drops history a compaction replaced, with and without replacement_history', async () => {
    const repl = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'SUMMARY' }] }];
    const head = () => new RolloutBuilder().meta().turnContext().environment().user('one').reasoning('r').call('shell', { command: 'sleep 9' }, 'long').shell('ls', big('ls')).assistant('a1').user('two');
    const withRepl = head().compacted('SUMMARY', repl).output('late result', 'long').user('three').shell('pwd', 'y').assistant('a3');
    const t = await trim(withRepl);
    expect(t.after.items.map((x) => x.item)).toEqual(t.before.items.map((x) => x.item));
    const types = linesOf(t.output).map((l) => `${String(l.type)}:${String((l.payload as { type?: string }).type ?? '')}`);
    expect(types.slice(0, 5)).toEqual(['session_meta:', 'turn_context:', 'event_msg:user_message', 'event_msg:user_message', 'compacted:']);
    expect(t.stats.counters.beforeCompaction).toBe(8);
    // the output whose call the compaction replaced is dropped (Codex drops it too)
    expect(t.stats.counters.orphanResults).toBe(1);

    const noRepl = head().compacted('SUMMARY').user('three').shell('pwd', 'y').assistant('a3');
    const t2 = await trim(noRepl);
    expect(t2.after.items.map((x) => x.item)).toEqual(t2.before.items.map((x) => x.item));
    const userTexts = linesOf(t2.output).filter((l) => l.type === 'response_item').map((l) => (l.payload as { type: string }).type);
    expect(userTexts.slice(0, 2)).toEqual(['message', 'message']); // the two user turns before the compaction stay
    expect(t2.stats.counters.beforeCompaction).toBe(6);
  });

  it('answers a call left open mid-session with the output Codex would add, which restore drops', async () => {
    const b = new RolloutBuilder().meta().user('go').call('shell', { command: 'sleep 100' }, 'open').tokenCount().user('stop that').shell('ls', 'x').assistant('ok');
    const t = await trim(b);
    expect(t.before.history.some((x) => x.item.call_id === 'open' && x.item.type === 'function_call_output')).toBe(false);
    const synthetic = linesOf(t.output).find((l) => (l.payload as CodexItem).call_id === 'open' && (l.payload as CodexItem).type === 'function_call_output')!;
    expect(synthetic.payload).toEqual({ type: 'function_call_output', call_id: 'open', output: 'aborted' });
    expect(synthetic.ctxvm).toMatchObject({ v: 3, s: true });
    // exactly what Codex sends for the original
    expect(t.after.items.map((x) => x.item)).toEqual(t.before.items.map((x) => x.item));
    expect(t.stats.counters.syntheticResults).toBe(1);
  });

  it('pages out all but the newest identical read', async () => {
    const b = new RolloutBuilder().meta().user('go').shell('cat notes.md', big('v1', 20)).shell('cat notes.md', big('v2', 20)).shell('cat notes.md | wc -l', '20');
    b.shell('cat notes.md', big('v3', 20)).shell('ls', 'x').shell('pwd', 'y').assistant('done');
    const t = await trim(b, { toolResultTokens: 100_000 });
    const outs = t.after.items.filter((x) => x.item.type === 'function_call_output').map((x) => String(x.item.output));
    expect(outs.map(isStub)).toEqual([true, true, false, false, false, false]);
    expect(outs[0]).toContain('superseded by a later identical read');
  });

  it('passes unknown line types, unknown fields and blank lines through byte for byte', async () => {
    const b = new RolloutBuilder().meta().user('go');
    b.line('world_state', { anything: [1, 2.0, { deep: true }] }, { extra_top: 'kept' });
    b.item({ type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'x' }, future_field: 1.0 });
    b.tokenCount().shell('ls', 'x').shell('pwd', 'y').shell('id', 'z').assistant('done');
    const text = b.toString().replace('\n', '\n\n'); // a blank line after session_meta
    const withBlank = text.split('\n');
    withBlank.splice(8, 0, ''); // and one inside a run of removed lines
    const t = await trim(withBlank.join('\n'));
    const out = readFileSync(t.output, 'utf8');
    expect(out).toContain(JSON.stringify(b.lines[3]));
    expect(out).toContain(JSON.stringify(b.lines[4]));
    expect(out.startsWith(`${JSON.stringify(b.lines[0])}\n\n`)).toBe(true);
  });

  it('restores blank lines wherever they are: before, inside and after removed runs, at the end', async () => {
    const b = new RolloutBuilder().meta().user('go').reasoning('r1').shell('cat a', big('a')).tokenCount().reasoning('r2').shell('ls', 'x').shell('pwd', 'y').assistant('ok').tokenCount();
    const lines = b.toString().split('\n');
    // after the prompt event, before a removed reasoning event, around removed lines, and at the end after a removed line
    for (const at of [lines.length - 1, lines.length - 2, 9, 6, 5, 3]) lines.splice(at, 0, '');
    const t = await trim(lines.join('\n') + '\n\n', { keepLastTurns: 0 });
    expect(t.stats.removedLines).toBeGreaterThan(3);
    // the file ended with a removed line and blank lines: they went into the last line's `t`
    expect(readFileSync(t.output, 'utf8').endsWith('\n\n')).toBe(false);
  });

  it('keeps CRLF rollouts restorable', async () => {
    const b = new RolloutBuilder().meta().user('go').reasoning('r').shell('cat a', big('a')).tokenCount().shell('ls', 'x').shell('pwd', 'y').assistant('ok');
    const t = await trim(b.toString().replace(/\n/g, '\r\n'));
    expect(t.stats.removedLines).toBeGreaterThan(0);
  });

  it('writes atomically: a failing check leaves no output file and the input untouched', async () => {
    const input = join(dir, 'atomic.jsonl');
    writeFileSync(input, new RolloutBuilder().meta().user('go').shell('cat a', big('a')).shell('ls', 'x').shell('pwd', 'y').assistant('ok').toString());
    const before = sha(input);
    const output = join(dir, 'atomic-out.jsonl');
    const run = trimCodexSession({ input, output, store, policy: resolvePolicy(), tokens, check: async () => ['line 1: test: forced failure'] });
    await expect(run).rejects.toMatchObject({ code: 'E_INVALID' });
    expect(existsSync(output)).toBe(false);
    expect(sha(input)).toBe(before);
  });

  it('refuses bad input and nothing is written', async () => {
    const input = join(dir, 'bad.jsonl');
    writeFileSync(input, new RolloutBuilder().meta().user('go').toString() + '{"torn":\n');
    const output = join(dir, 'bad-out.jsonl');
    const err = await trimCodexSession({ input, output, store, policy: resolvePolicy(), tokens }).catch((e: unknown) => e);
    expect(CtxvmError.is(err) && err.code).toBe('E_PARSE');
    expect(existsSync(output)).toBe(false);
    await expect(trimCodexSession({ input, output: input, store, policy: resolvePolicy(), tokens })).rejects.toMatchObject({ code: 'E_USAGE' });
  });

  it('trims an already trimmed rollout: nothing new leaves it as it is, more composes, and one restore gives back the original', async () => {
    const b = new RolloutBuilder().meta().user('go').reasoning('r1').shell('cat a', big('a')).reasoning('r2').shell('cat b', big('b')).reasoning('r3').shell('ls', 'x').shell('pwd', 'y').assistant('ok');
    const first = await trim(b, { keepLastTurns: 3, tailPayloadTokens: 0 });
    const same = await trim(first.output, { keepLastTurns: 3, tailPayloadTokens: 0 });
    expect(sha(same.output)).toBe(sha(first.output));
    const second = await trim(first.output, { keepLastTurns: 1 });
    expect(second.after.items.filter((x) => x.item.type === 'reasoning')).toHaveLength(0);
    expect(second.stats.changedLines).toBeGreaterThan(0);
    const back = join(dir, 'back-twice.jsonl');
    const r = await restoreSession({ input: second.output, output: back, store });
    expect(r.levels).toBe(1);
    expect(sha(back)).toBe(sha(first.input));
  });
});
