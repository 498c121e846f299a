/**
 * From loaded lines to the messages Claude Code sends (docs/resume-model.md §1.6–1.8), on small
 * hand-built transcripts; then the whole reconstruction against the executable form of the spec
 * (scripts/resume-reference.mjs) on real and generated sessions.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERRUPTED_TOOL_RESULT, NO_CONTENT, NO_RESPONSE_REQUESTED, reconstructClaudeContext } from './context.js';
import { scanClaudeSession } from './scan.js';
import { Transcript, blocksOfLine, loadTranscript, sent, tempDir, text, thinking, toolResult, toolUse } from '../../../test/support/claude-transcript.js';
import { REPO_ROOT, claudeMainSessions, corpusSkipReason, generateClaudeSession, generatorSkipReason, printSkipReason } from '../../../test/support/corpus.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir('ctxvm-context-')));
afterAll(async () => cleanup());

const load = async (t: Transcript) => (await loadTranscript(dir, t)).ctx;
const roles = (ms: { role: string }[]) => ms.map((m) => m.role).join(',');

describe('§1.6 what each kind of line becomes', () => {
  it('a local_command system line becomes a user message with the line\'s content; display-only and other subtypes are not sent', async () => {
    const t = new Transcript();
    t.user('Caveat: local commands follow', { extra: { isMeta: true } });
    t.system('local_command', { content: '<command-name>/agents</command-name>' });
    t.system('local_command', { content: '<local-command-stdout>shown only</local-command-stdout>', extra: { isDisplayOnly: true } });
    t.system('stop_hook_summary', { content: 'hook ran' });
    t.system('local_command', { content: '<local-command-stdout>2 agents</local-command-stdout>' });
    t.user('thanks');
    const ctx = await load(t);
    expect(ctx.messages[0]).toMatchObject({
      role: 'user',
      content: [text('Caveat: local commands follow\n'), text('<command-name>/agents</command-name>\n'), text('<local-command-stdout>2 agents</local-command-stdout>\n'), text('thanks')],
    });
    expect(ctx.messages[0]!.lines).toEqual([1, 2, 5, 6]);
  });

  it('an API-error reply is dropped, and the user messages around it merge without a "\\n"', async () => {
    const t = new Transcript();
    t.user('run it');
    t.assistant('msg_1', toolUse('toolu_1', 'Bash', { command: 'make' }));
    t.results(toolResult('toolu_1', 'built'));
    t.assistant('msg_err', text('API Error: 529 overloaded'), { extra: { isApiErrorMessage: true } });
    t.user('try again');
    t.assistant('msg_2', text('done'));
    const ctx = await load(t);
    expect(roles(ctx.messages)).toBe('user,assistant,user,assistant');
    expect(ctx.messages[2]!.content).toEqual([toolResult('toolu_1', 'built'), text('try again')]);
    expect(ctx.messages.flatMap((m) => m.lines)).not.toContain(4);
  });

  it('an API-error reply still counts as the last reply: no interrupted results, no "No response requested."', async () => {
    const t = new Transcript();
    t.user('hello');
    t.assistant('msg_1', toolUse('toolu_1', 'Read', { file_path: '/x' }));
    t.results(toolResult('toolu_1', 'x'));
    t.assistant('msg_2', toolUse('toolu_2', 'Read', { file_path: '/y' }));
    t.assistant('msg_err', text('API Error'), { model: '<synthetic>', extra: { isApiErrorMessage: true } });
    const ctx = await load(t);
    expect(ctx.messages.some((m) => m.injected)).toBe(false);
    // the open call is then removed like any mid-session one (§1.7.6) and the emptied reply is "(no content)" (§1.7.11)
    expect(sent(ctx.messages)).toEqual([
      { role: 'user', content: [text('hello')] },
      { role: 'assistant', content: blocksOfLine(t, 2) },
      { role: 'user', content: blocksOfLine(t, 3) },
      { role: 'assistant', content: [{ ...text(NO_CONTENT), citations: [] }] },
    ]);
  });

  it('Task is sent as Agent; toolUseResult and line metadata are never sent', async () => {
    const t = new Transcript();
    t.user('delegate');
    t.assistant('msg_1', toolUse('toolu_1', 'Task', { description: 'explore', prompt: 'look around' }));
    t.user([toolResult('toolu_1', 'found it')], { extra: { toolUseResult: { status: 'completed', content: 'found it' } } });
    t.assistant('msg_2', text('ok'));
    const ctx = await load(t);
    expect(ctx.messages[1]!.content).toEqual([{ ...toolUse('toolu_1', 'Agent', { description: 'explore', prompt: 'look around' }) }]);
    expect(JSON.stringify(ctx.messages)).not.toContain('completed');
  });

  it('a user line with content [] is skipped; content "" is sent as ""', async () => {
    const t = new Transcript();
    t.user('prompt');
    t.assistant('msg_1', text('answer'));
    t.user([]);
    t.user('', { extra: { isMeta: true } });
    const ctx = await load(t);
    expect(ctx.strict.map((m) => m.lines)).toEqual([[1], [2], [4]]);
    expect(ctx.strict[2]!.content).toEqual([text('')]);
  });

  it('a compact summary stays one user message carrying its text verbatim', async () => {
    const t = new Transcript();
    t.compact('This session is being continued from a previous conversation.');
    t.assistant('msg_1', text('continuing'));
    const ctx = await load(t);
    expect(ctx.messages[0]).toMatchObject({ role: 'user', isCompactSummary: true, content: [text('This session is being continued from a previous conversation.')] });
  });
});

describe('§1.7 from chain to API messages', () => {
  it('consecutive user messages merge: string → text block, "\\n" between texts, tool_results hoisted first', async () => {
    const t = new Transcript();
    t.user('go');
    t.assistant('msg_1', toolUse('toolu_1', 'Bash', { command: 'ls' }));
    t.user('<caveat>local command</caveat>', { extra: { isMeta: true } });
    t.results(toolResult('toolu_1', 'a.ts'));
    t.user('and now this');
    t.assistant('msg_2', text('ok'));
    const ctx = await load(t);
    expect(ctx.messages[2]!.lines).toEqual([3, 4, 5]);
    expect(ctx.messages[2]!.content).toEqual([toolResult('toolu_1', 'a.ts'), text('<caveat>local command</caveat>\n'), text('and now this')]);
  });

  it('the "\\n" join applies when the earlier message ends with text and the later starts with text', async () => {
    const t = new Transcript();
    t.user('first');
    t.user('second');
    t.assistant('msg_1', text('ok'));
    const ctx = await load(t);
    expect(ctx.messages[0]!.content).toEqual([text('first\n'), text('second')]);
  });

  it('an orphan tool_result is removed; a message left empty becomes "(no content)"', async () => {
    const t = new Transcript();
    t.user('prompt');
    t.assistant('msg_1', text('answer'));
    t.results(toolResult('toolu_gone', 'orphan'));
    t.assistant('msg_2', text('after'));
    const ctx = await load(t);
    expect(ctx.messages[2]!.content).toEqual([text(NO_CONTENT)]);
    expect(NO_CONTENT).toBe('(no content)');
    // the strict view keeps what the file says, so the validator can flag it
    expect(ctx.strict[2]!.content).toEqual(blocksOfLine(t, 3));
  });

  it('an orphan merged with other blocks just disappears from the message', async () => {
    const t = new Transcript();
    t.compact('summary');
    t.results(toolResult('toolu_cut', 'result of a call cut by the boundary'));
    t.assistant('msg_1', text('after'));
    const ctx = await load(t);
    expect(ctx.messages[0]!.content).toEqual([text('summary')]);
  });

  it('an unanswered mid-session tool_use is removed from its reply', async () => {
    const t = new Transcript();
    t.user('prompt');
    t.reply('msg_1', [text('let me look'), toolUse('toolu_1', 'Read', { file_path: '/x' })]);
    t.user('never mind');
    t.assistant('msg_2', text('ok'));
    const ctx = await load(t);
    expect(ctx.messages[1]!.content).toEqual([text('let me look')]);
    expect(ctx.strict[1]!.content).toEqual([text('let me look'), toolUse('toolu_1', 'Read', { file_path: '/x' })]);
  });

  it('a thinking-only reply is dropped and the user messages around it merge', async () => {
    const t = new Transcript();
    t.user('question');
    t.assistant('msg_1', thinking('pondering'));
    t.user('[Request interrupted by user]');
    t.user('a better question');
    t.assistant('msg_2', text('answer'));
    const ctx = await load(t);
    expect(roles(ctx.messages)).toBe('user,assistant');
    expect(ctx.messages[0]!.content).toEqual([text('question\n'), text('[Request interrupted by user]\n'), text('a better question')]);
  });

  it('thinking is kept when another line of the same reply has other content', async () => {
    const t = new Transcript();
    t.user('question');
    t.reply('msg_1', [thinking('pondering'), text('answer')]);
    t.user('next');
    t.assistant('msg_2', text('fine'));
    const ctx = await load(t);
    expect(ctx.messages[1]!.content).toEqual([thinking('pondering'), text('answer')]);
  });

  it('trailing thinking of the last reply is removed; empty "" text blocks go; a reply left empty becomes "(no content)"', async () => {
    const t = new Transcript();
    t.user('question');
    t.reply('msg_1', [text(''), text('answer'), thinking('afterthought')]);
    const ctx = await load(t);
    expect(ctx.messages[1]!.content).toEqual([text('answer')]);

    const u = new Transcript();
    u.user('question');
    u.assistant('msg_1', []);
    u.user('again');
    u.assistant('msg_2', text('ok'));
    const ctx2 = await load(u);
    expect(ctx2.messages[1]!.content).toEqual([{ ...text(NO_CONTENT), citations: [] }]);
  });

  it('a text block after a tool_use moves the tool_use blocks after the other blocks', async () => {
    const t = new Transcript();
    t.user('go');
    t.reply('msg_1', [toolUse('toolu_1', 'Bash', { command: 'ls' }), text('running ls')]);
    t.results(toolResult('toolu_1', 'a.ts'));
    t.assistant('msg_2', text('done'));
    const ctx = await load(t);
    expect(ctx.messages[1]!.content).toEqual([text('running ls'), toolUse('toolu_1', 'Bash', { command: 'ls' })]);
  });
});

describe('§1.8 repairs at the end of the conversation', () => {
  it('open tool calls at the end get "interrupted" results, then "No response requested."', async () => {
    const t = new Transcript();
    t.user('do two things');
    t.reply('msg_1', [toolUse('toolu_1', 'Bash', { command: 'a' }), toolUse('toolu_2', 'Bash', { command: 'b' })]);
    const ctx = await load(t);
    expect(sent(ctx.messages.slice(2))).toEqual([
      {
        role: 'user',
        content: ['toolu_1', 'toolu_2'].map((id) => ({ type: 'tool_result', tool_use_id: id, content: INTERRUPTED_TOOL_RESULT, is_error: true })),
      },
      { role: 'assistant', content: [text(NO_RESPONSE_REQUESTED)] },
    ]);
    expect(ctx.messages.slice(2).every((m) => m.injected && m.lines.length === 0)).toBe(true);
    expect(INTERRUPTED_TOOL_RESULT).toMatch(/^\[Tool call interrupted: the session ended before this call's result was recorded/);
  });

  it('a conversation ending with a user message gets "No response requested."', async () => {
    const t = new Transcript();
    t.user('prompt');
    t.assistant('msg_1', text('answer'));
    t.user('/exit');
    const ctx = await load(t);
    expect(ctx.messages.at(-1)).toMatchObject({ role: 'assistant', injected: true, content: [text('No response requested.')] });
    expect(ctx.messages).toHaveLength(4);
  });

  it('a conversation ending with a finished reply gets nothing', async () => {
    const t = new Transcript();
    t.user('prompt');
    t.assistant('msg_1', text('answer'));
    const ctx = await load(t);
    expect(ctx.messages.some((m) => m.injected)).toBe(false);
  });
});

// ───────────── the whole reconstruction against the executable spec ─────────────

interface ReferenceModule {
  reconstructClaude(text: string): { messages: { role: string; content: unknown }[] };
}
const referencePath = join(REPO_ROOT, 'scripts', 'resume-reference.mjs');
const asBlocks = (c: unknown) => (typeof c === 'string' ? [{ type: 'text', text: c }] : c);

async function compareWithReference(file: string): Promise<void> {
  const ref = (await import(pathToFileURL(referencePath).href)) as ReferenceModule;
  const expected = ref.reconstructClaude(await readFile(file, 'utf8')).messages.map((m) => ({ role: m.role, content: asBlocks(m.content) }));
  const ctx = await reconstructClaudeContext(await scanClaudeSession(file));
  expect(sent(ctx.messages), file).toEqual(expected);
}

describe('agrees with scripts/resume-reference.mjs (the spec in executable form)', () => {
  const skip = corpusSkipReason();
  printSkipReason(skip);
  it.skipIf(skip !== undefined)('on every main session of the corpus', async () => {
    const files = claudeMainSessions();
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) await compareWithReference(file);
  });

  it.skipIf(skip !== undefined)('on edited copies: a duplicated line appended, preserved messages added to a compaction', async () => {
    const file = claudeMainSessions().find((f) => f.endsWith('coverage-test-fix.jsonl'));
    const compacted = claudeMainSessions().find((f) => f.includes('24a90d02'));
    if (!file || !compacted) return;
    const lines = (await readFile(file, 'utf8')).split('\n');
    const dup = join(dir, 'dup.jsonl');
    await writeFile(dup, lines.join('\n') + lines[9] + '\n');
    await compareWithReference(dup);

    // the experiment C-preserved-messages: anchor = the summary, three lines before the boundary preserved
    const c = (await readFile(compacted, 'utf8')).split('\n');
    const at = c.findIndex((l) => l.includes('"compact_boundary"'));
    const boundary = JSON.parse(c[at]!) as { compactMetadata: Record<string, unknown> };
    const uuidOf = (i: number) => (JSON.parse(c[i]!) as { uuid: string }).uuid;
    boundary.compactMetadata.preservedMessages = { anchorUuid: uuidOf(at + 1), uuids: [uuidOf(at - 3), uuidOf(at - 2), uuidOf(at - 1)] };
    c[at] = JSON.stringify(boundary);
    const pres = join(dir, 'preserved.jsonl');
    await writeFile(pres, c.join('\n'));
    await compareWithReference(pres);
    const ctx = await reconstructClaudeContext(await scanClaudeSession(pres));
    expect(ctx.messages[0]!.isCompactSummary).toBe(true);
    expect(ctx.messages[1]!.lines).toEqual([at - 2, at - 1]);
  });

  const genSkip = generatorSkipReason();
  printSkipReason(genSkip);
  it.skipIf(genSkip !== undefined)('on generated sessions with compactions, images and every edge case', async () => {
    for (const [seed, compactions] of [
      [1, 0],
      [2, 1],
      [3, 2],
    ] as const) {
      const file = generateClaudeSession(join(dir, `gen-${seed}.jsonl`), { turns: 20, seed, compactions, edgeCases: true });
      await compareWithReference(file);
    }
  });
});
