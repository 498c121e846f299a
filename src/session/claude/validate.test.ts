/**
 * The validator, one rule at a time: each test builds the defect the rule is about and checks
 * the finding (rule, line, severity), then checks that the repaired transcript has no such
 * finding. Then: every original session of the corpus validates without errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateSession } from '../session.js';
import { CLAUDE_RULES, isValid, type ValidationFinding } from './validate.js';
import { Transcript, loadTranscript, tempDir, text, thinking, toolResult, toolUse } from '../../../test/support/claude-transcript.js';
import { claudeMainSessions, corpusSkipReason, printSkipReason } from '../../../test/support/corpus.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir('ctxvm-validate-')));
afterAll(async () => cleanup());

const findings = async (t: Transcript | string) => (await loadTranscript(dir, t)).findings;
const only = (fs: ValidationFinding[], rule: string) => fs.filter((f) => f.rule === rule).map(({ rule: r, line, severity }) => ({ rule: r, line, severity }));

/** u1 a2(tool_use) u3(result) a4: a valid exchange to start from. */
function exchange(): Transcript {
  const t = new Transcript();
  t.user('prompt');
  t.assistant('msg_1', toolUse('toolu_1', 'Read', { file_path: '/a.ts' }));
  t.results(toolResult('toolu_1', 'contents'));
  t.assistant('msg_2', text('done'));
  return t;
}

describe('validator rules', () => {
  it('the starting transcript is valid and every rule has a description', async () => {
    expect(await findings(exchange())).toEqual([]);
    for (const rule of ['json-line', 'parent-chain', 'dangling-parent', 'empty-content', 'role-order', 'tool-result-without-use', 'tool-use-without-result', 'tool-result-order', 'duplicate-tool-id', 'thinking-signature', 'open-tool-use', 'preserved-messages', 'unknown-line-type', 'unmodelled-attachment', 'thinking-dropped']) {
      expect(CLAUDE_RULES[rule], rule).toBeTypeOf('string');
    }
  });

  it('json-line: a line that is not JSON is an error naming its line', async () => {
    const t = exchange();
    const good = t.text().split('\n');
    const bad = [...good.slice(0, 2), '{"type":"user", "message":', ...good.slice(2)].join('\n');
    const fs = await findings(bad);
    expect(only(fs, 'json-line')).toEqual([{ rule: 'json-line', line: 3, severity: 'error' }]);
    expect(isValid(fs)).toBe(false);
  });

  // Claude Code resumes from a dangling parent that no timestamp bridges (O: 3e89eb15 line 61,
  // resume-model.md §1.4): what it does on its own is a warning that says what is not sent
  it('parent-chain: a parentUuid naming no line is a warning naming what Claude Code does not send (bridged within 5 s, or resumed from there)', async () => {
    const build = (gapMs: number) => {
      const t = new Transcript();
      t.user('prompt', { atMs: 0 });
      t.assistant('msg_1', text('answer'), { atMs: 1000 });
      t.user('next', { parentUuid: 'dddddddd-0000-4000-8000-000000000000', atMs: 1000 + gapMs });
      t.assistant('msg_2', text('answer 2'));
      return t;
    };
    const far = await findings(build(60_000));
    expect(only(far, 'parent-chain')).toEqual([{ rule: 'parent-chain', line: 3, severity: 'warning' }]);
    expect(far.find((f) => f.rule === 'parent-chain')!.message).toContain('resumes from line 3: the 2 message line(s) before it (lines 1–2) are not sent');
    expect(isValid(far)).toBe(true);
    const near = await findings(build(2000));
    expect(only(near, 'parent-chain')).toEqual([{ rule: 'parent-chain', line: 3, severity: 'warning' }]);
    expect(isValid(near)).toBe(true);
  });

  it('dangling-parent: an off-chain line whose parent is missing is a warning', async () => {
    const t = new Transcript();
    t.user('prompt');
    const a2 = t.assistant('msg_1', text('answer'));
    t.user('abandoned', { parentUuid: 'cccccccc-0000-4000-8000-000000000000' });
    t.user('main line', { parentUuid: a2 });
    t.assistant('msg_2', text('answer 2'));
    const fs = await findings(t);
    expect(only(fs, 'dangling-parent')).toEqual([{ rule: 'dangling-parent', line: 3, severity: 'warning' }]);
    expect(isValid(fs)).toBe(true);
  });

  it('empty-content: user content "" is an error', async () => {
    const t = exchange();
    t.user('');
    t.assistant('msg_3', text('ok'));
    expect(only(await findings(t), 'empty-content')).toEqual([{ rule: 'empty-content', line: 5, severity: 'error' }]);
  });

  it('empty-content: an empty text block in a reply is an error', async () => {
    const t = exchange();
    t.user('more');
    t.reply('msg_3', [text(''), text('ok')]);
    expect(only(await findings(t), 'empty-content')).toEqual([{ rule: 'empty-content', line: 6, severity: 'error' }]);
  });

  it('empty-content: user content [] is an error (Claude Code skips the line)', async () => {
    const t = exchange();
    t.user([]);
    t.user('more');
    t.assistant('msg_3', text('ok'));
    expect(only(await findings(t), 'empty-content')).toEqual([{ rule: 'empty-content', line: 5, severity: 'error' }]);
  });

  it('empty-content: assistant content [] is an error', async () => {
    const t = exchange();
    t.user('more');
    t.assistant('msg_3', []);
    expect(only(await findings(t), 'empty-content')).toEqual([{ rule: 'empty-content', line: 6, severity: 'error' }]);
  });

  // Claude Code sends it as is (O: 3e89eb15, which starts at an assistant line after a chain cut)
  it('role-order: a context starting with an assistant message is a warning', async () => {
    const t = new Transcript();
    t.assistant('msg_1', text('hello?'));
    const fs = await findings(t);
    expect(only(fs, 'role-order')).toEqual([{ rule: 'role-order', line: 1, severity: 'warning' }]);
    expect(isValid(fs)).toBe(true);
  });

  it('role-order: two replies with different message ids in a row are an error', async () => {
    const t = exchange();
    t.assistant('msg_3', text('and another thing'));
    expect(only(await findings(t), 'role-order')).toEqual([{ rule: 'role-order', line: 5, severity: 'error' }]);
  });

  it('tool-result-without-use: a result answering no tool_use of the previous reply is an error', async () => {
    const t = exchange();
    t.results(toolResult('toolu_nobody', 'orphan'));
    t.assistant('msg_3', text('ok'));
    expect(only(await findings(t), 'tool-result-without-use')).toEqual([{ rule: 'tool-result-without-use', line: 5, severity: 'error' }]);
  });

  it('tool-use-without-result: a call answered by nobody mid-session is an error', async () => {
    const t = new Transcript();
    t.user('prompt');
    t.assistant('msg_1', toolUse('toolu_1', 'Bash', { command: 'ls' }));
    t.user('never mind');
    t.assistant('msg_2', text('ok'));
    expect(only(await findings(t), 'tool-use-without-result')).toEqual([{ rule: 'tool-use-without-result', line: 2, severity: 'error' }]);
  });

  it('tool-result-order: a tool_result after other content in one user line is an error', async () => {
    const t = new Transcript();
    t.user('prompt');
    t.assistant('msg_1', toolUse('toolu_1', 'Bash', { command: 'ls' }));
    t.user([text('note first'), toolResult('toolu_1', 'a.ts')]);
    t.assistant('msg_2', text('ok'));
    expect(only(await findings(t), 'tool-result-order')).toEqual([{ rule: 'tool-result-order', line: 3, severity: 'error' }]);
  });

  it('duplicate-tool-id: a tool_use id used twice is an error', async () => {
    const t = exchange();
    t.user('again');
    t.assistant('msg_3', toolUse('toolu_1', 'Read', { file_path: '/a.ts' }));
    t.results(toolResult('toolu_1', 'contents'));
    t.assistant('msg_4', text('same'));
    expect(only(await findings(t), 'duplicate-tool-id')).toEqual([{ rule: 'duplicate-tool-id', line: 6, severity: 'error' }]);
  });

  it('thinking-signature: a thinking block without its signature is an error', async () => {
    const t = new Transcript();
    t.user('prompt');
    t.reply('msg_1', [{ type: 'thinking', thinking: 'hmm' }, text('answer')]);
    expect(only(await findings(t), 'thinking-signature')).toEqual([{ rule: 'thinking-signature', line: 2, severity: 'error' }]);
    const signed = new Transcript();
    signed.user('prompt');
    signed.reply('msg_1', [thinking('hmm'), text('answer')]);
    expect(await findings(signed)).toEqual([]);
  });

  it('open-tool-use: calls left open by the last reply are a warning (Claude Code marks them interrupted)', async () => {
    const t = new Transcript();
    t.user('prompt');
    t.assistant('msg_1', toolUse('toolu_1', 'Bash', { command: 'sleep 100' }));
    const fs = await findings(t);
    expect(only(fs, 'open-tool-use')).toEqual([{ rule: 'open-tool-use', line: 2, severity: 'warning' }]);
    expect(isValid(fs)).toBe(true);
  });

  it('preserved-messages: preserved uuids of the last boundary that name no line are an error', async () => {
    const build = (uuids: (ids: string[]) => string[]) => {
      const t = new Transcript();
      t.user('old prompt');
      const a2 = t.assistant('msg_old', text('old answer'));
      const summary = t.nextUuid();
      t.system('compact_boundary', { parentUuid: null, extra: { compactMetadata: { trigger: 'auto', preservedMessages: { uuids: uuids([t.lines[0]!.uuid as string, a2]), anchorUuid: summary } } } });
      t.user('summary', { uuid: summary, extra: { isCompactSummary: true } });
      t.user('next prompt');
      t.assistant('msg_new', text('new answer'));
      return t;
    };
    const broken = await findings(build((ids) => [ids[0]!, 'bbbbbbbb-0000-4000-8000-000000000000']));
    expect(only(broken, 'preserved-messages')).toEqual([{ rule: 'preserved-messages', line: 3, severity: 'error' }]);
    const intact = await findings(build((ids) => ids));
    expect(only(intact, 'preserved-messages')).toEqual([]);
  });
});

describe('lines from the wild', () => {
  it('unknown-line-type: a line type ctxvm does not know is one warning per type, at its first line; known pass-through types are not reported', async () => {
    const t = exchange();
    t.raw({ type: 'ai-title', aiTitle: 'a title', sessionId: t.sessionId });
    t.raw({ type: 'ctxvm-from-the-future', sessionId: t.sessionId });
    t.raw({ type: 'ctxvm-from-the-future', sessionId: t.sessionId });
    const fs = await findings(t);
    expect(only(fs, 'unknown-line-type')).toEqual([{ rule: 'unknown-line-type', line: 6, severity: 'warning' }]);
    expect(fs.find((f) => f.rule === 'unknown-line-type')!.message).toContain('"ctxvm-from-the-future" (2 lines)');
    expect(isValid(fs)).toBe(true);
  });

  it('unmodelled-attachment: an attachment type ctxvm does not render is a warning; rendered and silent ones are not', async () => {
    const t = new Transcript();
    t.user('prompt');
    t.attachment({ type: 'skill_listing', content: '- a: skill a', skillCount: 1, isInitial: true });
    t.attachment({ type: 'hook_system_message', content: 'shown to the user only' });
    t.attachment({ type: 'deferred_tools_delta', addedNames: ['Cron'], addedLines: ['Cron'] });
    t.assistant('msg_1', text('answer'));
    const fs = await findings(t);
    expect(only(fs, 'unmodelled-attachment')).toEqual([{ rule: 'unmodelled-attachment', line: 4, severity: 'warning' }]);
  });

  it('thinking-dropped: thinking of another model than the resumed one is a warning', async () => {
    const t = new Transcript();
    t.user('prompt');
    t.reply('msg_1', [thinking('hmm', 'sig-1'), text('answer')], { model: 'claude-sonnet-4-5-20250929' });
    t.user('more');
    t.reply('msg_2', [thinking('hmm', 'sig-2'), text('answer 2')], { model: 'claude-opus-4-5-20251101' });
    const fs = await findings(t);
    expect(only(fs, 'thinking-dropped')).toEqual([{ rule: 'thinking-dropped', line: 2, severity: 'warning' }]);
    expect(fs.find((f) => f.rule === 'thinking-dropped')!.message).toContain('claude-opus-4-5-20251101');
  });
});

describe('the corpus', () => {
  const skip = corpusSkipReason();
  printSkipReason(skip);
  it.skipIf(skip !== undefined)('every original main session validates with no errors', async () => {
    for (const file of claudeMainSessions()) {
      const report = await validateSession(file);
      expect(report.errors, file).toEqual([]);
      expect(report.valid, file).toBe(true);
    }
  });
});
