/**
 * Rules established on the sessions in the wild (docs/resume-model.md, issue 22), one hand-built
 * transcript each: attachments, the resume model and thinking, exit records, "Tool loaded.",
 * the tool_result pairing pass. Each names the experiment or corpus line it reproduces.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORPHANED_TOOL_RESULT } from './api-messages.js';
import { NO_RESPONSE_REQUESTED, TOOL_LOADED } from './context.js';
import { claudeAgentContext } from './agent-context.js';
import { CLAUDE_DEFAULT_MODEL, claudeResumeModel, usesSystemEntries } from './resume-model.js';
import { Transcript, loadTranscript, sent, tempDir, text, thinking, toolResult, toolUse } from '../../../test/support/claude-transcript.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir('ctxvm-context-wild-')));
afterAll(async () => cleanup());

const load = async (t: Transcript) => (await loadTranscript(dir, t)).ctx;
const OPUS45 = 'claude-opus-4-5-20251101';
const skills = { type: 'skill_listing', content: '- probe: a probe skill', skillCount: 1, isInitial: true };
const SKILLS_TEXT = '<system-reminder>\nThe following skills are available for use with the Skill tool:\n\n- probe: a probe skill\n</system-reminder>';
const TASKS_TEXT =
  "<system-reminder>\nThe task tools haven't been used recently. If you're working on tasks that would benefit from tracking progress, consider using TaskCreate to add new tasks and TaskUpdate to update task status (set to in_progress when starting, completed when done). Also consider cleaning up the task list if it has become stale. Only use these if relevant to the current work. This is just a gentle reminder - ignore if not applicable.\n\n</system-reminder>";

describe('the model Claude Code resumes with', () => {
  it('keeps a current model, replaces a retired, proxied or missing one by the default', () => {
    expect(claudeResumeModel(OPUS45)).toBe(OPUS45);
    expect(claudeResumeModel('claude-sonnet-4-5-20250929')).toBe('claude-sonnet-4-5-20250929');
    expect(claudeResumeModel('claude-opus-4-1-20250805')).toBe(CLAUDE_DEFAULT_MODEL);
    expect(claudeResumeModel('claude-sonnet-4-20250514')).toBe(CLAUDE_DEFAULT_MODEL);
    expect(claudeResumeModel('MiniMax-M2.7')).toBe(CLAUDE_DEFAULT_MODEL);
    expect(claudeResumeModel(undefined)).toBe(CLAUDE_DEFAULT_MODEL);
    expect([OPUS45, 'claude-sonnet-4-6', 'claude-haiku-4-5-20251001'].map(usesSystemEntries)).toEqual([false, false, false]);
    expect(['claude-opus-4-8', 'claude-opus-5-5'].map(usesSystemEntries)).toEqual([true, true]);
  });

  it('drops the thinking of a reply written by another model than the resumed one (E: W-B-mid-model-sonnet45)', async () => {
    const t = new Transcript();
    t.user('one');
    t.reply('msg_1', [thinking('first', 'sig-a'), text('answer 1')], { model: 'claude-sonnet-4-5-20250929' });
    t.user('two');
    t.reply('msg_2', [thinking('second', 'sig-b'), text('answer 2')], { model: OPUS45 });
    const ctx = await load(t);
    expect(ctx.resumeModel).toBe(OPUS45);
    expect(sent(ctx.messages)[1]!.content).toEqual([text('answer 1')]);
    expect(sent(ctx.messages)[3]!.content).toEqual([thinking('second', 'sig-b'), text('answer 2')]);
  });
});

describe('attachment lines', () => {
  it('render as a reminder that bubbles up before the prompt it follows, joined with a "\\n" (E: W-A-skill-listing-after-prompt)', async () => {
    const t = new Transcript();
    t.user('the prompt');
    t.attachment(skills);
    t.attachment({ type: 'hook_system_message', content: 'not sent' });
    t.assistant('msg_1', text('ok'), { model: OPUS45 });
    const ctx = await load(t);
    expect(sent(ctx.messages)[0]).toEqual({ role: 'user', content: [text(`${SKILLS_TEXT}\n`), text('the prompt')] });
    expect(ctx.messages[0]!.lines).toEqual([2, 1]);
    // the reminder is the CLI's wording: counted as system text, not as the user's
    const parts = claudeAgentContext(ctx).entries[0]!.parts;
    expect(parts.map((p) => p.category)).toEqual(['system', 'userText']);
  });

  it('after a tool_result, fold into it: string content trimmed and joined by a blank line (E: W-A-hook-context-after-result; O: 512f6c74 line 31)', async () => {
    const t = new Transcript();
    t.user('go');
    t.assistant('msg_1', toolUse('toolu_1', 'Bash', { command: 'ls' }), { model: OPUS45 });
    t.results(toolResult('toolu_1', 'a.ts\nb.ts\n'));
    t.attachment({ type: 'task_reminder', content: [], itemCount: 0 });
    t.assistant('msg_2', text('done'), { model: OPUS45 });
    const ctx = await load(t);
    expect(sent(ctx.messages)[2]!.content).toEqual([toolResult('toolu_1', `a.ts\nb.ts\n\n${TASKS_TEXT}`)]);
  });

  it('with a model that takes system entries, go to role:"system" entries instead (O: 12cd7dd6, 0a759173)', async () => {
    const t = new Transcript();
    t.user('the prompt');
    t.attachment(skills);
    t.assistant('msg_1', text('ok'), { model: 'claude-opus-4-8' });
    const ctx = await load(t);
    expect(sent(ctx.messages)[0]).toEqual({ role: 'user', content: [text('the prompt')] });
    expect(ctx.systemEntries).toEqual([{ line: 2, type: 'skill_listing', text: SKILLS_TEXT }]);
    expect(claudeAgentContext(ctx).entries.map((e) => e.role)).toEqual(['user', 'system', 'assistant']);
  });

  it('of a type ctxvm does not render are listed, not guessed', async () => {
    const t = new Transcript();
    t.user('the prompt');
    t.attachment({ type: 'mcp_instructions_delta', addedNames: ['x'], addedBlocks: ['## x'] });
    t.assistant('msg_1', text('ok'), { model: OPUS45 });
    const ctx = await load(t);
    expect(ctx.unmodelledAttachments).toEqual([{ line: 2, type: 'mcp_instructions_delta' }]);
    expect(sent(ctx.messages)[0]).toEqual({ role: 'user', content: [text('the prompt')] });
  });
});

describe('the end of the conversation and the last pass', () => {
  const exit = (t: Transcript, caveat: string) => {
    t.user(caveat, { extra: { isMeta: true } });
    t.user('<command-name>/exit</command-name>\n            <command-message>exit</command-message>\n            <command-args></command-args>');
    t.user('<local-command-stdout>Bye!</local-command-stdout>');
  };

  it('no "No response requested." after a record introduced by the tagged caveat; one after the untagged form (E: W-A-exit-record-tagged / -untagged)', async () => {
    const tagged = new Transcript();
    tagged.user('hi');
    tagged.assistant('msg_1', text('hello'), { model: OPUS45 });
    exit(tagged, '<local-command-caveat>Caveat: The messages below were generated by the user while running local commands.</local-command-caveat>');
    expect((await load(tagged)).messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);

    const untagged = new Transcript();
    untagged.user('hi');
    untagged.assistant('msg_1', text('hello'), { model: OPUS45 });
    exit(untagged, 'Caveat: The messages below were generated by the user while running local commands.');
    const ctx = await load(untagged);
    expect(sent(ctx.messages).at(-1)).toEqual({ role: 'assistant', content: [text(NO_RESPONSE_REQUESTED)] });
  });

  it('a tool_result that loads deferred tools gets "Tool loaded." (O: 12cd7dd6 line 49; E: W-A-tool-reference)', async () => {
    const t = new Transcript();
    t.user('search the web');
    t.assistant('msg_1', toolUse('toolu_1', 'ToolSearch', { query: 'select:WebSearch' }), { model: OPUS45 });
    t.results({ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'tool_reference', tool_name: 'WebSearch' }] });
    t.assistant('msg_2', text('loaded'), { model: OPUS45 });
    const ctx = await load(t);
    expect(sent(ctx.messages)[2]!.content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'tool_reference', tool_name: 'WebSearch' }] }, text(TOOL_LOADED)]);
  });

  it('results that open the conversation (their call is in an earlier session) become the "orphaned" text (E: W-A-orphan-first-result)', async () => {
    const t = new Transcript();
    t.results(toolResult('toolu_gone', 'from the previous session'));
    t.assistant('msg_1', text('continuing'), { model: OPUS45 });
    const ctx = await load(t);
    expect(sent(ctx.messages)[0]).toEqual({ role: 'user', content: [text(ORPHANED_TOOL_RESULT)] });
  });

  it('a dangling first parent far from any line: Claude Code resumes from there, even with an assistant message first (O: 3e89eb15 line 61)', async () => {
    const t = new Transcript();
    t.user('old prompt', { atMs: 0 });
    t.assistant('msg_0', text('old answer'), { atMs: 1000, model: OPUS45 });
    t.assistant('msg_1', text('resumed here'), { parentUuid: 'eeeeeeee-0000-4000-8000-000000000000', atMs: 3_600_000, model: OPUS45 });
    t.user('next');
    t.assistant('msg_2', text('ok'), { model: OPUS45 });
    const ctx = await load(t);
    expect(ctx.messages.map((m) => m.lines[0])).toEqual([3, 4, 5]);
    expect(ctx.missingParents).toEqual([{ line: 3, parentUuid: 'eeeeeeee-0000-4000-8000-000000000000' }]);
  });
});
