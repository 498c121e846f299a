/**
 * Which lines Claude Code loads on resume (docs/resume-model.md §1.1–1.5), on small hand-built
 * transcripts. Each expectation is derived from the transcript and the spec's rule, never from
 * ctxvm's own output.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PARENT_BRIDGE_MS } from './chain.js';
import { Transcript, blocksOfLine, loadTranscript, sent, tempDir, text, toolResult, toolUse } from '../../../test/support/claude-transcript.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir('ctxvm-chain-')));
afterAll(async () => cleanup());

const load = (t: Transcript | string) => loadTranscript(dir, t);
/** Line numbers of each context message. */
const lineGroups = (ms: { lines: number[] }[]) => ms.map((m) => m.lines);

/** u1 a2 u3 a4 u5 a6: a plain three-turn conversation. */
function threeTurns(): Transcript {
  const t = new Transcript();
  t.user('first prompt');
  t.assistant('msg_1', text('first answer'));
  t.user('second prompt');
  t.assistant('msg_2', text('second answer'));
  t.user('third prompt');
  t.assistant('msg_3', text('third answer'));
  return t;
}

describe('§1.1 reading the file', () => {
  it('a duplicated uuid keeps the position of its first occurrence: a copy of line 2 appended at the end changes nothing', async () => {
    const t = threeTurns();
    const before = await load(t);
    t.raw({ ...t.lines[1]! });
    const after = await load(t);
    expect(after.ctx.messages).toHaveLength(6);
    expect(sent(after.ctx.messages)).toEqual(sent(before.ctx.messages));
  });

  it('a duplicated uuid keeps the content of its last occurrence', async () => {
    const t = threeTurns();
    const copy = structuredClone(t.lines[1]!) as { message: { content: unknown[] } };
    copy.message.content = [text('edited first answer')];
    t.raw(copy);
    const { ctx } = await load(t);
    expect(ctx.messages).toHaveLength(6);
    expect(ctx.messages[1]!.content).toEqual([text('edited first answer')]);
    expect(ctx.messages[5]!.content).toEqual(blocksOfLine(t, 6));
  });

  it('lines without a uuid (summary.leafUuid, last-prompt) do not choose the leaf', async () => {
    const t = threeTurns();
    t.raw({ type: 'summary', summary: 'an older title', leafUuid: t.lines[1]!.uuid });
    t.raw({ type: 'last-prompt', lastPrompt: 'first prompt', sessionId: t.lines[0]!.sessionId });
    const { ctx } = await load(t);
    expect(ctx.leafLine).toBe(6);
    expect(ctx.messages).toHaveLength(6);
  });
});

describe('§1.2 compaction boundary', () => {
  it('cuts at the last boundary in file order, even when the boundary links to earlier lines', async () => {
    const t = new Transcript();
    t.user('before everything');
    const a2 = t.assistant('msg_1', text('old answer'));
    t.compact('first summary');
    t.assistant('msg_2', text('answer after the first compaction'));
    // the second boundary is parent-linked into the pre-boundary history (E: C-boundary-parent-linked)
    t.compact('second summary', { parentUuid: a2 });
    t.assistant('msg_3', text('answer after the second compaction'));
    const { chain, ctx } = await load(t);
    const boundaryLine = 6;
    expect(t.lines[boundaryLine - 1]!.subtype).toBe('compact_boundary');
    expect(chain.cutByBoundary).toBe(boundaryLine - 1);
    expect(chain.lines.every((l) => l >= boundaryLine)).toBe(true);
    expect(sent(ctx.messages)).toEqual([
      { role: 'user', content: [text('second summary')] },
      { role: 'assistant', content: [text('answer after the second compaction')] },
    ]);
    expect(ctx.messages[0]!.isCompactSummary).toBe(true);
  });

  it('without the boundary line the whole history is loaded', async () => {
    const t = new Transcript();
    t.user('before everything');
    t.assistant('msg_1', text('old answer'));
    const { boundary } = t.compact('summary');
    t.assistant('msg_2', text('after'));
    const withBoundary = await load(t);
    // delete the boundary and let the summary hang under the old answer, as a relink would
    const lines = t.lines.filter((l) => l.uuid !== boundary).map((l) => (l.parentUuid === boundary ? { ...l, parentUuid: t.lines[1]!.uuid } : l));
    const without = await load(lines.map((l) => JSON.stringify(l) + '\n').join(''));
    expect(withBoundary.ctx.messages).toHaveLength(2);
    expect(without.chain.lines).toEqual([1, 2, 3, 4]);
  });

  /** u1 a2 | preserved: a3 u4 | boundary 5, summary 6 (the anchor), a7 under the summary. */
  function preservedTranscript(spec: (ids: { a3: string; u4: string; summary: string }) => Record<string, unknown>): Transcript {
    const t = new Transcript();
    t.user('old prompt');
    t.assistant('msg_old', text('old answer'));
    const a3 = t.assistant('msg_kept', text('preserved answer'), { parentUuid: t.lines[0]!.uuid as string });
    const u4 = t.user('preserved follow-up');
    const summary = t.nextUuid();
    t.system('compact_boundary', { parentUuid: null, content: 'Conversation compacted', extra: { compactMetadata: { trigger: 'auto', ...spec({ a3, u4, summary }) } } });
    t.user('the summary', { uuid: summary, extra: { isCompactSummary: true } });
    t.assistant('msg_new', text('answer after compaction'));
    return t;
  }

  it('preservedMessages survive the cut, re-chained right after the anchor; the anchor\'s other children follow them', async () => {
    const t = preservedTranscript(({ a3, u4, summary }) => ({ preservedMessages: { uuids: [a3, u4], anchorUuid: summary } }));
    const { ctx } = await load(t);
    expect(lineGroups(ctx.messages)).toEqual([[6], [3], [4], [7]]);
    expect(sent(ctx.messages).map((m) => m.content)).toEqual([blocksOfLine(t, 6), blocksOfLine(t, 3), blocksOfLine(t, 4), blocksOfLine(t, 7)]);
    expect(ctx.leafLine).toBe(7);
  });

  it('preservedSegment is resolved by walking from tailUuid up to headUuid', async () => {
    const t = preservedTranscript(({ a3, u4, summary }) => ({ preservedSegment: { headUuid: a3, tailUuid: u4, anchorUuid: summary } }));
    const { ctx } = await load(t);
    expect(lineGroups(ctx.messages)).toEqual([[6], [3], [4], [7]]);
  });

  it('a preserved uuid that names no line skips the relink: nothing before the boundary survives', async () => {
    const t = preservedTranscript(({ a3, summary }) => ({ preservedMessages: { uuids: [a3, 'ffffffff-0000-4000-8000-000000000000'], anchorUuid: summary } }));
    const { ctx } = await load(t);
    expect(lineGroups(ctx.messages)).toEqual([[6], [7]]);
  });
});

describe('§1.3 the leaf', () => {
  it('a trailing system line resolves to its nearest message', async () => {
    const t = threeTurns();
    t.system('stop_hook_summary');
    t.system('turn_duration');
    const { ctx } = await load(t);
    expect(ctx.leafLine).toBe(6);
    expect(ctx.messages).toHaveLength(6);
  });

  it('the last line in file order wins, not the newest timestamp: a branch appended with older timestamps is resumed', async () => {
    const t = threeTurns();
    const a2 = t.lines[1]!.uuid as string;
    t.user('branch prompt', { parentUuid: a2, atMs: 1500 });
    t.assistant('msg_branch', text('branch answer'));
    const { ctx } = await load(t);
    expect(ctx.leafLine).toBe(8);
    expect(lineGroups(ctx.messages)).toEqual([[1], [2], [7], [8]]);
  });

  it('a branch inserted mid-file with newer timestamps is not resumed', async () => {
    const t = new Transcript();
    t.user('first prompt');
    const a2 = t.assistant('msg_1', text('first answer'));
    t.user('abandoned branch', { parentUuid: a2, atMs: 86_400_000 });
    t.assistant('msg_b', text('abandoned answer'));
    t.user('main line prompt', { parentUuid: a2, atMs: 5000 });
    t.assistant('msg_2', text('main line answer'));
    const { ctx } = await load(t);
    expect(lineGroups(ctx.messages)).toEqual([[1], [2], [5], [6]]);
  });

  it('trailing sidechain lines are ignored', async () => {
    const t = threeTurns();
    t.user('subagent prompt', { isSidechain: true });
    t.assistant('msg_side', text('subagent answer'), { isSidechain: true });
    const { ctx } = await load(t);
    expect(ctx.leafLine).toBe(6);
    expect(lineGroups(ctx.messages)).toEqual([[1], [2], [3], [4], [5], [6]]);
  });
});

describe('§1.4 the parent walk', () => {
  it('walks through system and progress lines', async () => {
    const t = new Transcript();
    t.user('prompt');
    t.assistant('msg_1', text('answer'));
    t.system('stop_hook_summary');
    t.raw({ ...t.lines[2]!, type: 'progress', subtype: undefined, uuid: t.nextUuid(), parentUuid: t.lines[2]!.uuid });
    t.cursor = t.lines[3]!.uuid as string;
    t.user('next prompt');
    t.assistant('msg_2', text('next answer'));
    const { chain, ctx } = await load(t);
    expect(chain.lines).toEqual([1, 2, 3, 4, 5, 6]);
    expect(lineGroups(ctx.messages)).toEqual([[1], [2], [5], [6]]);
  });

  /** u1 (0 s) a2 (1 s) | u3 with a dangling parent, `gapMs` after a2 | a4. */
  function dangling(gapMs: number, options: { sidechainNearby?: boolean } = {}): Transcript {
    const t = new Transcript();
    t.user('first prompt', { atMs: 0 });
    t.assistant('msg_1', text('first answer'), { atMs: 1000 });
    if (options.sidechainNearby) t.assistant('msg_s', text('sidechain'), { atMs: 1000 + gapMs - 10, isSidechain: true });
    t.user('prompt after a removed line', { parentUuid: 'eeeeeeee-0000-4000-8000-000000000000', atMs: 1000 + gapMs });
    t.assistant('msg_2', text('second answer'));
    return t;
  }

  it(`a missing parent is bridged to the newest older entry at most ${PARENT_BRIDGE_MS} ms older`, async () => {
    expect(PARENT_BRIDGE_MS).toBe(5000);
    const { chain, ctx } = await load(dangling(2300));
    expect(chain.lines).toEqual([1, 2, 3, 4]);
    expect(ctx.missingParents).toEqual([{ line: 3, parentUuid: 'eeeeeeee-0000-4000-8000-000000000000', bridgedTo: 2 }]);
    expect(ctx.messages).toHaveLength(4);
  });

  it('the bridge reaches exactly 5 s and no further', async () => {
    expect((await load(dangling(5000))).chain.lines).toEqual([1, 2, 3, 4]);
    const far = await load(dangling(5001));
    expect(far.chain.lines).toEqual([3, 4]);
    expect(far.ctx.missingParents).toEqual([{ line: 3, parentUuid: 'eeeeeeee-0000-4000-8000-000000000000' }]);
    expect(lineGroups(far.ctx.messages)).toEqual([[3], [4]]);
  });

  it('the bridge only lands on the same side (a sidechain line in the window does not count)', async () => {
    const { chain } = await load(dangling(6000, { sidechainNearby: true }));
    expect(chain.lines).toEqual([4, 5]);
  });

  it('a cycle ends the walk', async () => {
    const t = new Transcript();
    const u1 = t.nextUuid();
    const a2 = t.nextUuid();
    t.user('prompt', { uuid: u1, parentUuid: a2 });
    t.assistant('msg_1', text('answer'), { uuid: a2, parentUuid: u1 });
    const { chain } = await load(t);
    expect([...chain.lines].sort()).toEqual([1, 2]);
  });
});

describe('§1.5 split replies and parallel tool calls', () => {
  /** u1, reply msg_1 = tool_use A (l2) + tool_use B (l3), results on l4/l5 each under its own call, a6. */
  function parallel(resultOrder: ['A', 'B'] | ['B', 'A']): Transcript {
    const t = new Transcript();
    t.user('read both files');
    const a = t.assistant('msg_1', toolUse('toolu_A', 'Read', { file_path: '/a.ts' }));
    const b = t.assistant('msg_1', toolUse('toolu_B', 'Read', { file_path: '/b.ts' }));
    const parents = { A: a, B: b };
    let last = '';
    for (const id of resultOrder) {
      last = t.user([toolResult(`toolu_${id}`, `contents of ${id}`)], { parentUuid: parents[id] });
    }
    t.assistant('msg_2', text('both read'), { parentUuid: last });
    return t;
  }

  it('brings back the result lines off the leaf\'s path and merges the reply\'s split lines', async () => {
    const t = parallel(['A', 'B']);
    const { chain, ctx } = await load(t);
    expect(chain.lines).toContain(4); // the leaf's path is 6 → 5 → 3 → 2 → 1
    expect(lineGroups(ctx.messages)).toEqual([[1], [2, 3], [4, 5], [6]]);
    expect(ctx.messages[1]!.content).toEqual([...blocksOfLine(t, 2), ...blocksOfLine(t, 3)]);
    expect(ctx.messages[2]!.content).toEqual([...blocksOfLine(t, 4), ...blocksOfLine(t, 5)]);
  });

  it('results keep file order, not tool_use order', async () => {
    const t = parallel(['B', 'A']);
    const { ctx } = await load(t);
    expect(ctx.messages[2]!.content.map((b) => b.tool_use_id)).toEqual(['toolu_B', 'toolu_A']);
  });

  it('a split line written after some results joins its reply; the results form one message in file order', async () => {
    const t = new Transcript();
    t.user('run two things');
    t.assistant('msg_1', toolUse('toolu_A', 'Bash', { command: 'ls' }));
    t.user([toolResult('toolu_A', 'a.ts')]);
    t.assistant('msg_1', toolUse('toolu_B', 'Bash', { command: 'pwd' }));
    t.user([toolResult('toolu_B', '/home')]);
    t.assistant('msg_2', text('done'));
    const { ctx } = await load(t);
    expect(lineGroups(ctx.messages)).toEqual([[1], [2, 4], [3, 5], [6]]);
    expect(ctx.messages[1]!.content.map((b) => b.id)).toEqual(['toolu_A', 'toolu_B']);
  });

  it('adjacent assistant lines with different message ids are not merged', async () => {
    const t = new Transcript();
    t.user('prompt');
    t.assistant('msg_1', text('one'));
    t.assistant('msg_2', text('two'));
    const { ctx } = await load(t);
    expect(sent(ctx.strict)).toEqual([
      { role: 'user', content: [text('prompt')] },
      { role: 'assistant', content: [text('one')] },
      { role: 'assistant', content: [text('two')] },
    ]);
  });
});
