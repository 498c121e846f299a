import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { claudeMainSessions, corpusSkipReason, printSkipReason } from '../../../test/support/corpus.js';
import { Transcript, text, toolResult, toolUse, writeTranscript } from '../../../test/support/claude-transcript.js';
import { reconstructClaudeContext } from '../claude/context.js';
import { scanClaudeSession } from '../claude/scan.js';
import { trimSession, validateSession } from '../session.js';
import { pageIn } from '../trim/page-in.js';
import { restoreSession } from '../trim/restore.js';
import { branchSession, prepareBranch } from './branch.js';
import { listClaudeTurns } from './claude-cut.js';
import { uuidBytes, uuidDeriver } from '../../core/derived-uuid.js';
import { encodeClaudeProjectDir } from './paths.js';
import { compareRewrittenLines, countingUuids, createBranchTestEnv, readJsonObjects, type BranchTestEnv } from './testing.js';

const skip = corpusSkipReason();
printSkipReason(skip);
// summary-only stubs carry no sessionId and cannot be resumed by any agent
const sessions = skip ? [] : claudeMainSessions().filter((f) => readFileSync(f, 'utf8').includes('"sessionId"'));
const NEW_ID = 'b1b1b1b1-0000-4000-8000-000000000001';

let env: BranchTestEnv;
beforeEach(async () => {
  env = await createBranchTestEnv();
});
afterEach(async () => {
  await env.cleanup();
});

const base = () => ({ store: env.store, claudeConfigDir: env.claudeConfigDir, codexHome: env.codexHome, scratchDir: env.scratchDir, measure: false });

async function sentMessages(file: string) {
  const ctx = await reconstructClaudeContext(await scanClaudeSession(file));
  return ctx.messages.map((m) => ({ role: m.role, content: m.content }));
}

/** Visible entries of the agent's project folders (what Claude Code could list). */
async function visibleEntries(root: string): Promise<string[]> {
  const out: string[] = [];
  const projects = join(root, 'projects');
  if (!existsSync(projects)) return out;
  for (const p of await readdir(projects)) for (const e of await readdir(join(projects, p))) if (!e.startsWith('.')) out.push(`${p}/${e}`);
  return out.sort();
}

describe.skipIf(!!skip)('branchSession on every corpus session (Claude Code)', () => {
  it.each(sessions.map((f) => [basename(f), f]))('%s: untrimmed branch = the source with new ids', async (_n, file) => {
    const r = await branchSession({ ...base(), source: file, trim: false, newId: NEW_ID });
    const src = await scanClaudeSession(file);
    expect(r.path).toBe(join(env.claudeConfigDir, 'projects', encodeClaudeProjectDir(src.cwd!), `${NEW_ID}.jsonl`));
    expect(r.resume).toBe(`claude --resume ${NEW_ID}`);
    expect(r.source.sessionId).toBe(src.sessionId);
    expect((await validateSession(r.path)).valid).toBe(true);
    expect(compareRewrittenLines(await readJsonObjects(file), await readJsonObjects(r.path), NEW_ID)).toEqual([]);
    // the agent sends exactly what it sent for the source
    expect(await sentMessages(r.path)).toEqual(await sentMessages(file));
    expect(await visibleEntries(env.claudeConfigDir)).toEqual([`${encodeClaudeProjectDir(src.cwd!)}/${NEW_ID}.jsonl`, ...(r.sideFiles.length ? [`${encodeClaudeProjectDir(src.cwd!)}/${NEW_ID}`] : [])].sort());
  });

  it.each(sessions.map((f) => [basename(f), f]))('%s: trimmed branch validates and restores to the pre-trim branch byte for byte', async (_n, file) => {
    const plain = await branchSession({ ...base(), source: file, trim: false, newId: NEW_ID, newUuid: countingUuids(), targetDir: join(env.dir, 'plain') });
    const trimmed = await branchSession({ ...base(), source: file, newId: NEW_ID, newUuid: countingUuids(), measure: true });
    expect(trimmed.trimmed?.valid).toBe(true);
    expect(trimmed.trimmed!.output.tokens!).toBeLessThanOrEqual(trimmed.trimmed!.input.tokens!);
    expect(trimmed.holders).toContain(trimmed.trimmed!.holder);
    expect((await validateSession(trimmed.path)).valid).toBe(true);
    const back = join(env.dir, 'restored.jsonl');
    // a trim with nothing to do leaves the branch as it is: restore only copies it when asked
    const untouched = !(await readFile(trimmed.path, 'utf8')).includes('"ctxvm":{');
    await restoreSession({ input: trimmed.path, output: back, store: env.store, allowUntrimmed: untouched });
    expect(await readFile(back)).toEqual(await readFile(plain.path));
  }, 180_000); // the largest corpus sessions, counted exactly twice
});

describe.skipIf(!!skip)('side files (aforge: <session>/subagents, tool-results)', () => {
  const aforge = sessions.find((f) => basename(f).startsWith('a8117384'));

  it('copies subagent transcripts rewritten, and persisted tool results with their paths', async () => {
    // a copy of the session folder, with the persisted tool output the transcript points at
    const proj = join(env.dir, 'src', '-root');
    await mkdir(proj, { recursive: true });
    const src = join(proj, basename(aforge!));
    await cp(aforge!, src);
    await cp(join(dirname(aforge!), 'a8117384-8a7e-445b-9af0-ab182dd62c51'), join(proj, 'a8117384-8a7e-445b-9af0-ab182dd62c51'), { recursive: true });
    await mkdir(join(proj, 'a8117384-8a7e-445b-9af0-ab182dd62c51', 'tool-results'));
    await writeFile(join(proj, 'a8117384-8a7e-445b-9af0-ab182dd62c51', 'tool-results', 'bhe5h1h1j.txt'), 'the whole listing\n');

    const r = await branchSession({ ...base(), source: src, trim: false, newId: NEW_ID });
    const sideDir = join(dirname(r.path), NEW_ID);
    expect(r.sideFiles.map((f) => f.slice(sideDir.length + 1)).sort()).toEqual([
      'subagents/agent-a2d804e54437fc4c6.jsonl',
      'subagents/agent-a2d804e54437fc4c6.meta.json',
      'tool-results/bhe5h1h1j.txt',
    ]);
    const sub = await readJsonObjects(join(sideDir, 'subagents', 'agent-a2d804e54437fc4c6.jsonl'));
    const subSrc = await readJsonObjects(join(proj, 'a8117384-8a7e-445b-9af0-ab182dd62c51', 'subagents', 'agent-a2d804e54437fc4c6.jsonl'));
    expect(compareRewrittenLines(subSrc, sub, NEW_ID)).toEqual([]);
    expect(await readFile(join(sideDir, 'subagents', 'agent-a2d804e54437fc4c6.meta.json'))).toEqual(await readFile(join(proj, 'a8117384-8a7e-445b-9af0-ab182dd62c51', 'subagents', 'agent-a2d804e54437fc4c6.meta.json')));
    expect(await readFile(join(sideDir, 'tool-results', 'bhe5h1h1j.txt'), 'utf8')).toBe('the whole listing\n');
    // the tool result names the copied file; nothing else in the message changed
    const body = await readFile(r.path, 'utf8');
    expect(body).toContain(`/${NEW_ID}/tool-results/bhe5h1h1j.txt`);
    expect(body).not.toContain('/a8117384-8a7e-445b-9af0-ab182dd62c51/tool-results/');
    expect((await validateSession(r.path)).valid).toBe(true);
  });

  it('leaves out the side files of messages after a cut', async () => {
    const r = await branchSession({ ...base(), source: aforge!, trim: false, at: 1 });
    expect(r.sideFiles).toEqual([]);
    expect(r.warnings.join(' ')).toMatch(/2 side file\(s\)/);
    expect(existsSync(join(dirname(r.path), r.sessionId))).toBe(false);
  });
});

describe.skipIf(!!skip)('cut at a turn (corpus)', () => {
  it.each(sessions.map((f) => [basename(f), f]))('%s: every turn cut validates and keeps that many turns', async (_n, file) => {
    const turns = (await listClaudeTurns(await scanClaudeSession(file))).length;
    for (let k = 1; k <= turns; k += Math.max(1, Math.floor(turns / 4))) {
      const r = await branchSession({ ...base(), source: file, trim: k % 2 === 0, at: k, targetDir: join(env.dir, `t${k}`) });
      expect((await validateSession(r.path)).valid, `turn ${k}`).toBe(true);
      expect((await listClaudeTurns(await scanClaudeSession(r.path))).length, `turn ${k}`).toBe(k);
      expect(r.at?.turn).toBe(k);
    }
  });
});

describe('cut at a message (synthetic)', () => {
  /** u1 → a(text, 2 parallel Reads) → results → a2 text → u2 → a3 text */
  function parallel(): { t: Transcript; ids: Record<string, string> } {
    const t = new Transcript();
    const ids: Record<string, string> = {};
    ids.u1 = t.user('read both files');
    ids.aText = t.assistant('msg_1', text('Reading them.'));
    ids.aUseA = t.assistant('msg_1', toolUse('toolu_A', 'Read', { file_path: '/a' }));
    ids.aUseB = t.assistant('msg_1', toolUse('toolu_B', 'Read', { file_path: '/b' }));
    ids.rB = t.user([toolResult('toolu_B', 'content of b')], { parentUuid: ids.aUseB });
    ids.rA = t.user([toolResult('toolu_A', 'content of a')], { parentUuid: ids.aUseA });
    ids.a2 = t.assistant('msg_2', text('Both read.'));
    ids.u2 = t.user('thanks, now summarise');
    ids.a3 = t.assistant('msg_3', text('Summary.'));
    t.raw({ type: 'summary', summary: 'Reading files', leafUuid: ids.a3 });
    return { t, ids };
  }

  it('at a tool_use line keeps the whole reply and all its results, and nothing after', async () => {
    const { t, ids } = parallel();
    const src = await writeTranscript(env.dir, t);
    const r = await branchSession({ ...base(), source: src, trim: false, at: ids.aUseA! });
    const lines = await readJsonObjects(r.path);
    expect(lines.map((l) => (l.message as { content: unknown } | undefined)?.content ?? l.type)).toEqual([
      'read both files',
      [text('Reading them.')],
      [toolUse('toolu_A', 'Read', { file_path: '/a' })],
      [toolUse('toolu_B', 'Read', { file_path: '/b' })],
      [toolResult('toolu_B', 'content of b')],
      [toolResult('toolu_A', 'content of a')],
    ]);
    expect(r.at).toMatchObject({ line: t.lineOf(ids.aUseA!), uuid: ids.aUseA, droppedLines: 4 });
    const msgs = await sentMessages(r.path);
    expect(msgs.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(msgs[3]!.content).toEqual([text('No response requested.')]);
  });

  it('at a uuid prefix, at a prompt, and by turn', async () => {
    const { t, ids } = parallel();
    const src = await writeTranscript(env.dir, t);
    const byPrefix = await branchSession({ ...base(), source: src, trim: false, at: ids.u2!.slice(0, 8) === ids.u1!.slice(0, 8) ? ids.u2! : ids.u2!.slice(0, 13) });
    expect((await readJsonObjects(byPrefix.path)).filter((l) => l.type === 'user' || l.type === 'assistant')).toHaveLength(8);
    const turn1 = await branchSession({ ...base(), source: src, trim: false, at: 1, targetDir: join(env.dir, 'turn1') });
    const kept = await readJsonObjects(turn1.path);
    expect(kept.map((l) => l.uuid).filter(Boolean)).toHaveLength(7);
    expect(kept.some((l) => l.type === 'summary')).toBe(false); // its leaf was cut off
    expect(turn1.at).toMatchObject({ turn: 1, uuid: ids.a2 });
    const turn2 = await branchSession({ ...base(), source: src, trim: false, at: '2', targetDir: join(env.dir, 'turn2') });
    expect((await readJsonObjects(turn2.path)).find((l) => l.type === 'summary')?.leafUuid).toBe(turn2.at!.newUuid);
  });

  it('counts the prompts the person typed as turns, not commands, their output or interruptions', async () => {
    const t = new Transcript();
    t.user('first real prompt');
    t.assistant('msg_1', text('answer one'));
    t.user('<command-name>/model</command-name>\n<command-message>model</command-message>');
    t.user('<local-command-stdout>Set model to opus</local-command-stdout>');
    t.user([text('second real prompt')]);
    t.assistant('msg_2', toolUse('toolu_1', 'Bash', { command: 'sleep 100' }));
    t.results(toolResult('toolu_1', 'interrupted', true));
    t.user([text('[Request interrupted by user for tool use]')]);
    t.user('third real prompt');
    t.assistant('msg_3', text('answer three'));
    const src = await writeTranscript(env.dir, t);
    const turns = await listClaudeTurns(await scanClaudeSession(src));
    expect(turns.map((x) => [x.turn, x.line, x.preview])).toEqual([
      [1, 1, 'first real prompt'],
      [2, 5, 'second real prompt'],
      [3, 9, 'third real prompt'],
    ]);
    const r = await branchSession({ ...base(), source: src, trim: false, at: 2 });
    expect(r.at).toMatchObject({ turn: 2, line: 8 });
    expect((await validateSession(r.path)).valid).toBe(true);
  });

  it('refuses unknown, ambiguous and sidechain points, and out-of-range turns', async () => {
    const t = new Transcript();
    t.user('hello');
    t.assistant('msg_1', text('hi'));
    const side = t.user('subagent prompt', { isSidechain: true, parentUuid: null });
    const src = await writeTranscript(env.dir, t);
    await expect(branchSession({ ...base(), source: src, at: 'ffffffff-ffff-4fff-8fff-ffffffffffff' })).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
    await expect(branchSession({ ...base(), source: src, at: '00000000' })).rejects.toMatchObject({ code: 'E_USAGE', message: /matches 3 lines/ });
    await expect(branchSession({ ...base(), source: src, at: side })).rejects.toMatchObject({ code: 'E_USAGE', message: /sidechain/ });
    await expect(branchSession({ ...base(), source: src, at: 2 })).rejects.toMatchObject({ code: 'E_USAGE', message: /1 turn/ });
    await expect(branchSession({ ...base(), source: src, at: 'nope' })).rejects.toMatchObject({ code: 'E_USAGE' });
    expect(await visibleEntries(env.claudeConfigDir)).toEqual([]);
  });

  it('across a compaction: a cut before it resumes the whole history, after it keeps the preserved messages', async () => {
    const t = new Transcript();
    t.user('first question');
    const a1 = t.assistant('msg_1', text('first answer'));
    t.user('second question');
    const a2 = t.assistant('msg_2', text('second answer'));
    const { boundary } = t.compact('Summary of the conversation so far', { compactMetadata: { preservedMessages: { anchorUuid: undefined, uuids: [a2] } } });
    t.user('third question');
    t.assistant('msg_3', text('third answer'));
    const src = await writeTranscript(env.dir, t);
    expect((await validateSession(src)).valid).toBe(true);

    const before = await branchSession({ ...base(), source: src, trim: false, at: a1, targetDir: join(env.dir, 'before') });
    const lines = await readJsonObjects(before.path);
    expect(lines.some((l) => l.subtype === 'compact_boundary')).toBe(false);
    expect((await sentMessages(before.path)).map((m) => m.content)).toEqual(['first question', [text('first answer')]].map((c) => (typeof c === 'string' ? [text(c)] : c)));

    const after = await branchSession({ ...base(), source: src, trim: false, at: 3, targetDir: join(env.dir, 'after') });
    const kept = await readJsonObjects(after.path);
    const b = kept.find((l) => l.subtype === 'compact_boundary')!;
    const preserved = (b.compactMetadata as { preservedMessages: { uuids: string[] } }).preservedMessages.uuids;
    expect(preserved).toHaveLength(1);
    expect(preserved[0]).not.toBe(a2);
    expect(kept.some((l) => l.uuid === preserved[0])).toBe(true);
    expect(b.logicalParentUuid).toBe(kept.find((l) => (l.message as { id?: string } | undefined)?.id === 'msg_2')!.uuid);
    expect(b.uuid).not.toBe(boundary);
    expect((await validateSession(after.path)).valid).toBe(true);
  });
});

describe('refusals and two-phase commit', () => {
  it('an untrimmed branch carries what its source had, and the trimmed branch repairs it', async () => {
    const t = new Transcript();
    t.user('go');
    t.assistant('msg_1', toolUse('toolu_1', 'Bash', { command: 'ls' }));
    t.assistant('msg_2', text('done without a result')); // tool_use never answered, mid-session
    t.user('ok');
    t.assistant('msg_3', text('bye'));
    const src = await writeTranscript(env.dir, t);
    const plain = await branchSession({ ...base(), source: src, trim: false });
    const carried = await validateSession(plain.path);
    expect(carried.errors.map((e) => e.rule)).toEqual((await validateSession(src)).errors.map((e) => e.rule));
    expect(carried.errors.map((e) => e.rule)).toContain('tool-use-without-result');
    // the trimmer answers the orphan call, so the trimmed branch is valid
    const r = await branchSession({ ...base(), source: src });
    expect((await validateSession(r.path)).valid).toBe(true);
  });

  it('refuses to replace a session and a non-session source', async () => {
    const t = new Transcript();
    t.user('hello');
    t.assistant('msg_1', text('hi'));
    const src = await writeTranscript(env.dir, t);
    await branchSession({ ...base(), source: src, newId: NEW_ID });
    await expect(branchSession({ ...base(), source: src, newId: NEW_ID })).rejects.toMatchObject({ code: 'E_EXISTS' });
    await expect(branchSession({ ...base(), source: src, newId: 'not-a-uuid' })).rejects.toMatchObject({ code: 'E_USAGE' });
    const stub = join(env.dir, 'stub.jsonl');
    await writeFile(stub, JSON.stringify({ type: 'summary', summary: 'x', leafUuid: 'abc' }) + '\n');
    await expect(branchSession({ ...base(), source: stub })).rejects.toMatchObject({ code: 'E_INVALID' });
  });

  it('prepareBranch shows the result first; discard leaves nothing and releases the objects', async () => {
    const t = new Transcript();
    t.user('show me the log');
    t.assistant('msg_1', toolUse('toolu_1', 'Bash', { command: 'cat big.log' }));
    t.results(toolResult('toolu_1', Array.from({ length: 500 }, (_, i) => `log line ${i} with some words`).join('\n')));
    for (let i = 2; i < 6; i++) {
      t.assistant(`msg_${i}`, text(`answer ${i}`));
      t.user(`question ${i}`);
    }
    t.assistant('msg_9', text('the end'));
    const src = await writeTranscript(env.dir, t);
    const prepared = await prepareBranch({ ...base(), source: src, title: 'log review' });
    expect(prepared.result.trimmed!.pagedOut).toMatchObject({ toolResults: 1 });
    expect(existsSync(prepared.result.path)).toBe(false);
    // built under the scratch folder: the agent's folder is not even created before the commit
    expect(existsSync(dirname(prepared.result.path))).toBe(false);
    expect((await readdir(env.scratchDir)).filter((n) => n.startsWith(`staging-${process.pid}-`))).toHaveLength(1);
    const objects: string[] = [];
    for await (const h of env.store.list()) objects.push(h);
    expect(objects.length).toBeGreaterThan(0);
    await prepared.discard();
    expect(existsSync(prepared.result.path)).toBe(false);
    expect(existsSync(dirname(prepared.result.path))).toBe(false);
    expect(await readdir(env.scratchDir)).toEqual([]);
    for (const h of objects) expect(await env.store.holders(h)).toEqual([]);

    const kept = await prepareBranch({ ...base(), source: src, title: 'log review' });
    const r = await kept.commit();
    await expect(kept.commit()).rejects.toMatchObject({ code: 'E_USAGE' });
    const last = (await readJsonObjects(r.path)).at(-1)!;
    expect(last).toEqual({ type: 'custom-title', customTitle: 'log review', sessionId: r.sessionId });
  });
});

describe('a branch of a trimmed session', () => {
  it('drops the old restore annotations, keeps where each stub pages in from, and every stub pages in', async () => {
    const t = new Transcript();
    t.user('show me the log');
    t.assistant('msg_1', toolUse('toolu_1', 'Bash', { command: 'cat big.log' }));
    t.results(toolResult('toolu_1', Array.from({ length: 500 }, (_, i) => `log line ${i} with some words`).join('\n')));
    for (let i = 2; i < 6; i++) {
      t.assistant(`msg_${i}`, text(`answer ${i}`));
      t.user(`question ${i}`);
    }
    t.assistant('msg_9', text('the end'));
    const src = await writeTranscript(env.dir, t);
    const trimmedSrc = join(env.dir, 'trimmed.jsonl');
    await trimSession({ input: src, output: trimmedSrc, store: env.store, measure: false });
    const r = await branchSession({ ...base(), source: trimmedSrc, trim: false, newId: NEW_ID });
    const lines = (await readFile(r.path, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { ctxvm?: Record<string, unknown> });
    // nothing of the source's restore history is left: only page-in pointers on lines with stubs
    const kept = lines.filter((l) => l.ctxvm).map((l) => Object.keys(l.ctxvm!).sort());
    expect(kept.length).toBeGreaterThan(0);
    for (const keys of kept) expect(keys).toEqual(['p', 'v']);
    expect(r.holders).toEqual([`branch:${NEW_ID}`]);
    const paged = await pageIn(env.store, 'toolu_1', { files: [r.path] });
    expect(paged.text).toContain('log line 499');
    expect(paged.verified).toBe(true);
    expect(await env.store.holders(paged.hash)).toContain(`branch:${NEW_ID}`);
    // restore of the branch is the branch itself (it was not trimmed again)
    const back = join(env.dir, 'back.jsonl');
    expect((await restoreSession({ input: r.path, output: back, store: env.store, allowUntrimmed: true })).wasTrimmed).toBe(false);
    expect(await readFile(back)).toEqual(await readFile(r.path));
    // and a trim of the branch still pages the old stub in, through the pointer
    const again = join(env.dir, 'branch-trimmed.jsonl');
    await trimSession({ input: r.path, output: again, store: env.store, measure: false, policy: { keepLastTurns: 0 } });
    expect((await pageIn(env.store, 'toolu_1', { files: [again] })).text).toContain('log line 499');
  });
});

describe('derived line uuids', () => {
  it("a trimmed branch names its uuids by its source's: siblings store the source's ids, and each restores exactly", async () => {
    const t = new Transcript();
    t.user('show me the logs');
    for (let i = 1; i <= 4; i++) {
      t.assistant(`msg_${i}`, toolUse(`toolu_${i}`, 'Bash', { command: `cat log${i}` }));
      t.results(toolResult(`toolu_${i}`, Array.from({ length: 400 }, (_, k) => `log ${i} line ${k} with some words`).join('\n')));
    }
    t.assistant('msg_9', text('the end'));
    const src = await writeTranscript(env.dir, t);
    const sourceUuids = (await readJsonObjects(src)).map((l) => l.uuid).filter((u): u is string => typeof u === 'string');
    for (const [k, id] of ['b1b1b1b1-0000-4000-8000-00000000000a', 'b1b1b1b1-0000-4000-8000-00000000000b'].entries()) {
      const plain = await branchSession({ ...base(), source: src, trim: false, newId: id, targetDir: join(env.dir, `plain-${k}`) });
      const derive = uuidDeriver(id, () => 'random');
      expect((await readJsonObjects(plain.path)).map((l) => l.uuid).filter((u) => typeof u === 'string')).toEqual(sourceUuids.map((u) => derive(u)));
      const trimmed = await branchSession({ ...base(), source: src, newId: id, policy: { keepLastTurns: 0 } });
      const back = join(env.dir, `restored-${k}.jsonl`);
      await restoreSession({ input: trimmed.path, output: back, store: env.store });
      expect(await readFile(back)).toEqual(await readFile(plain.path));
      // the id objects the trim stored are format 2, holding the source's uuids, not the branch's
      const named = [...new Set((await readFile(trimmed.path, 'utf8')).match(/\b[0-9a-f]{64}\b/g) ?? [])];
      const idObjects: Buffer[] = [];
      for (const h of named) {
        const bytes = await env.store.get(h).catch(() => undefined);
        if (bytes && bytes.subarray(0, 7).toString('latin1') === 'CTXIDS2') idObjects.push(bytes);
      }
      expect(idObjects.length).toBeGreaterThan(0);
      const all = Buffer.concat(idObjects);
      expect(all.includes(uuidBytes(sourceUuids[1]!)!)).toBe(true);
      expect(all.includes(uuidBytes(derive(sourceUuids[1]!))!)).toBe(false);
    }
  });
});

describe('project folder and torn lines', () => {
  it('writes into the cwd override and moves cwd fields there', async () => {
    const t = new Transcript();
    t.user('hello');
    t.assistant('msg_1', text('hi'), { extra: { cwd: '/home/dev/project/sub' } });
    const src = await writeTranscript(env.dir, t);
    const r = await branchSession({ ...base(), source: src, cwd: '/srv/moved.proj' });
    expect(r.path).toBe(join(env.claudeConfigDir, 'projects', '-srv-moved-proj', `${r.sessionId}.jsonl`));
    expect((await readJsonObjects(r.path)).map((l) => l.cwd)).toEqual(['/srv/moved.proj', '/srv/moved.proj/sub']);
  });

  it('leaves out a torn last line (a session still being written) and says so', async () => {
    const t = new Transcript();
    t.user('hello');
    t.assistant('msg_1', text('hi'));
    const src = await writeTranscript(env.dir, t.text() + '{"type":"user","message":{"role":"us');
    const r = await branchSession({ ...base(), source: src, trim: false });
    expect(r.warnings.join(' ')).toMatch(/torn/);
    expect(r.lines).toBe(2);
    const bad = await writeTranscript(env.dir, '{"broken\n' + t.text(), 'bad.jsonl');
    await expect(branchSession({ ...base(), source: bad })).rejects.toMatchObject({ code: 'E_PARSE' });
  });
});
